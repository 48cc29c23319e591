#include "client/features.h"

#include <cctype>
#include <charconv>
#include <sstream>

namespace rftp::client {

Features parse_features(const std::vector<std::string> &lines) {
    Features f;
    for (const std::string &raw : lines) {
        std::istringstream words(raw);
        std::string name, arg;
        words >> name >> arg;
        for (char &c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        std::string upper_arg = arg;
        for (char &c : upper_arg) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        if (name == "PARALLEL") {
            f.parallel = true;
            unsigned max = 1;
            auto [p, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), max);
            f.parallel_max = ec == std::errc() && max > 0 ? max : 1;
        } else if (name == "RDMA") {
            f.rdma = true;
            unsigned max = 1;
            auto [p, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), max);
            f.rdma_max = ec == std::errc() && max > 0 ? max : 1;
        } else if (name == "HASH") {
            f.hash_sha256 = upper_arg.find("SHA-256") != std::string::npos;
        } else if (name == "BLOCKSUM") {
            f.blocksum_none = upper_arg.find("NONE") != std::string::npos;
        } else if (name == "MLST") {
            f.mlst = true;
        } else if (name == "SIZE") {
            f.size = true;
        } else if (name == "MDTM") {
            f.mdtm = true;
        } else if (name == "REST" && upper_arg == "STREAM") {
            f.rest_stream = true;
        } else if (name == "EPSV") {
            f.epsv = true;
        } else if (name == "SRCE") {
            f.source_identity = true;
        } else if (name == "HOLD") {
            f.hold = true;
        } else if (name == "DATATOKEN") {
            f.data_token = true;
        }
    }
    return f;
}

}  // namespace rftp::client
