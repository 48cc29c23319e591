// What the server offers, from its FEAT reply (RFC 2389). Decides between
// MLSD and LIST, plain and parallel transfers, and whether --verify can work.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rftp::client {

struct Features {
    bool parallel = false;       // rftpd's "PARALLEL <max streams>"
    unsigned parallel_max = 1;
    bool rdma = false;           // rftpd's "RDMA <max queue pairs>": RADR/RSTR/RRTR
    unsigned rdma_max = 1;
    bool hash_sha256 = false;    // "HASH SHA-256*"
    bool blocksum_none = false;  // rftpd's "BLOCKSUM CRC32C*;NONE": block checksums can be turned off
    bool mlst = false;
    bool size = false;
    bool mdtm = false;
    bool rest_stream = false;
    bool epsv = false;
    bool source_identity = false;  // rftpd's "SRCE": a partial upload records which local file it came from
    bool hold = false;  // rftpd's "HOLD": an upload kept aside, complete, until COMT puts it in place
    bool data_token = false;  // rftpd's "DATATOKEN": data connections show a token, so no other program can take them

    // rftpd is the only server that advertises PARALLEL; it keeps uploads
    // in ".name.rftp-part" (docs/protocol.md "Uploads").
    bool is_rftpd() const { return parallel; }
};

// lines: the text lines of a 211 reply to FEAT (first and last are prose).
Features parse_features(const std::vector<std::string> &lines);

}  // namespace rftp::client
