#include "protocol/features.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <sstream>

#include "common/ascii_case.h"
#include "common/decimal.h"

namespace rftp::ftp {
namespace {

// A maximum of at least 1: a server that lists the feature offers one.
unsigned count_or_one(const std::string &text) {
    auto n = parse_decimal(text, std::numeric_limits<unsigned>::max());
    return n && *n > 0 ? static_cast<unsigned>(*n) : 1;
}

void add(std::string &out, bool offered, const std::string &line) {
    if (offered) out += " " + line + "\n";
}

}  // namespace

std::string format_features(const Features &f) {
    std::string out = "Features:\n";
    add(out, f.auth_tls, "AUTH TLS");
    add(out, f.eprt, "EPRT");
    add(out, f.epsv, "EPSV");
    add(out, f.mdtm, "MDTM");
    add(out, f.mfmt, "MFMT");
    add(out, f.mlst, "MLST " + f.mlst_facts);
    add(out, f.pasv, "PASV");
    add(out, f.auth_tls, "PBSZ");
    add(out, f.auth_tls, "PROT");
    add(out, f.rest_stream, "REST STREAM");
    add(out, f.size, "SIZE");
    add(out, f.source_identity, "SRCE");
    add(out, f.hold, "HOLD");
    add(out, f.data_token, "DATATOKEN");
    add(out, f.data_keep,
        std::string("DATAKEEP") + (f.data_keep_unechoed ? " UNECHOED" : "") + (f.data_keep_tls ? " TLS" : ""));
    add(out, f.tvfs, "TVFS");
    add(out, f.utf8, "UTF8");
    add(out, f.hash_sha256, "HASH SHA-256*");
    add(out, f.blocksum_none, f.blocksum_on ? "BLOCKSUM CRC32C*;NONE" : "BLOCKSUM CRC32C;NONE*");
    add(out, f.parallel, "PARALLEL " + std::to_string(f.parallel_max));
    add(out, f.rdma, "RDMA " + std::to_string(f.rdma_max) + (f.rdma_ahead ? " AHEAD" : ""));
    add(out, f.pipeline_max > 0, "PIPELINE " + std::to_string(f.pipeline_max));
    add(out, f.mlsr, "MLSR");
    add(out, f.login_ticket, "TCKT");
    return out + "End";
}

Features parse_features(const std::vector<std::string> &lines) {
    Features f;
    for (const std::string &raw : lines) {
        std::istringstream words(raw);
        std::string name, arg;
        words >> name >> arg;
        name = ascii_upper(name);
        const std::string upper_arg = ascii_upper(arg);
        if (name == "AUTH") f.auth_tls = f.auth_tls || upper_arg.find("TLS") != std::string::npos;
        else if (name == "EPRT") f.eprt = true;
        else if (name == "EPSV") f.epsv = true;
        else if (name == "PASV") f.pasv = true;
        else if (name == "MDTM") f.mdtm = true;
        else if (name == "MFMT") f.mfmt = true;
        else if (name == "SIZE") f.size = true;
        else if (name == "REST" && upper_arg == "STREAM") f.rest_stream = true;
        else if (name == "TVFS") f.tvfs = true;
        else if (name == "UTF8") f.utf8 = true;
        else if (name == "MLST") f.mlst = true, f.mlst_facts = arg;
        else if (name == "HASH") f.hash_sha256 = f.hash_sha256 || upper_arg.find("SHA-256") != std::string::npos;
        else if (name == "BLOCKSUM") {
            f.blocksum_none = upper_arg.find("NONE") != std::string::npos;
            f.blocksum_on = upper_arg.find("CRC32C*") != std::string::npos;
        } else if (name == "SRCE") f.source_identity = true;
        else if (name == "HOLD") f.hold = true;
        else if (name == "DATATOKEN") f.data_token = true;
        else if (name == "DATAKEEP") {
            // Words in any order after the name: UNECHOED, TLS.
            std::string third;
            words >> third;
            const std::string rest = " " + upper_arg + " " + ascii_upper(third) + " ";
            f.data_keep = true;
            f.data_keep_unechoed = rest.find(" UNECHOED ") != std::string::npos;
            f.data_keep_tls = rest.find(" TLS ") != std::string::npos;
        }
        else if (name == "PARALLEL") f.parallel = true, f.parallel_max = count_or_one(arg);
        else if (name == "RDMA") {
            std::string third;
            words >> third;
            f.rdma = true, f.rdma_max = count_or_one(arg), f.rdma_ahead = ascii_upper(third) == "AHEAD";
        }
        else if (name == "PIPELINE") f.pipeline_max = count_or_one(arg);
        else if (name == "MLSR") f.mlsr = true;
        else if (name == "TCKT") f.login_ticket = true;
    }
    return f;
}

}  // namespace rftp::ftp
