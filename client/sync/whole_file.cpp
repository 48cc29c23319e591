#include "client/sync/whole_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace rftp::client {

OutcomeStatus write_whole_file(const std::string &file, const std::string &text, const std::string &what) {
    const std::string partial = file + ".rftp-part";
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out || std::rename(partial.c_str(), file.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        std::remove(partial.c_str());
        return fail_as(ExitCode::local_file, "cannot write " + what + " " + file + ": " + why);
    }
    return {};
}

}  // namespace rftp::client
