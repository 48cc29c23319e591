#include "middleware/boot_id.h"

#include <cctype>
#include <fstream>

namespace rftp::middleware {

const std::string &boot_id() {
    static const std::string id = [] {
        std::string text;
        std::ifstream("/proc/sys/kernel/random/boot_id") >> text;
        // A token of the journal's line: nothing but a UUID's characters.
        for (char c : text)
            if (!std::isxdigit(static_cast<unsigned char>(c)) && c != '-') return std::string();
        return text;
    }();
    return id;
}

}  // namespace rftp::middleware
