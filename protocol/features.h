// The FEAT reply (RFC 2389): what a server offers, one feature a line.
// rftpd formats its list from a Features; rftp parses any server's list
// into one and decides from it between MLSD and LIST, plain and parallel
// transfers, TCP and RDMA, and whether --verify can work. Features a
// parser does not know are skipped, as RFC 2389 asks.
#pragma once

#include <string>
#include <vector>

namespace rftp::ftp {

struct Features {
    bool auth_tls = false;  // "AUTH TLS" (RFC 4217), with "PBSZ" and "PROT"
    bool eprt = false;
    bool epsv = false;
    bool pasv = false;
    bool mdtm = false;
    bool mfmt = false;  // "MFMT" (draft-somers-ftp-mfxx): set a file's modification time
    bool size = false;
    bool rest_stream = false;  // "REST STREAM" (RFC 3659)
    bool tvfs = false;
    bool utf8 = false;
    bool mlst = false;
    std::string mlst_facts;      // as listed, e.g. "type*;size*;modify*;"
    bool mlsr = false;           // rftpd's "MLSR": a whole tree's MLSD lines over one data connection
    bool login_ticket = false;   // rftpd's "TCKT": a login ticket spares a client's other sessions the password check
    bool hash_sha256 = false;    // "HASH SHA-256*"
    bool blocksum_none = false;  // rftpd's "BLOCKSUM CRC32C*;NONE": block checksums can be turned off
    bool blocksum_on = false;    // ... and are on unless turned off ("CRC32C*")
    bool source_identity = false;  // rftpd's "SRCE": a partial upload records which local file it came from
    bool hold = false;        // rftpd's "HOLD": an upload kept aside, complete, until COMT puts it in place
    bool data_token = false;  // rftpd's "DATATOKEN": data connections show a token, so no other program takes them
    bool data_keep = false;   // rftpd's "DATAKEEP": framed data connections kept from one file to the next
    bool data_keep_unechoed = false;  // "DATAKEEP UNECHOED": downloads of one block end without the echo
    bool data_keep_tls = false;       // "DATAKEEP ... TLS": under PROT P kept connections keep their TLS
    bool parallel = false;    // rftpd's "PARALLEL <max streams>"
    unsigned parallel_max = 1;
    bool rdma = false;  // rftpd's "RDMA <max queue pairs>": RADR/RSTR/RRTR
    unsigned rdma_max = 1;
    // "RDMA <n> AHEAD": rftpd takes grants ahead, and gives them to a
    // client whose RADR says AHEAD (docs/protocol.md, "Grants ahead").
    bool rdma_ahead = false;
    // rftpd's "PIPELINE <n>": up to n commands may wait behind a transfer
    // (one more ends the session); 0 where not said.
    unsigned pipeline_max = 0;

    // rftpd is the only server that advertises PARALLEL; it keeps uploads
    // in ".name.rftp-part" (protocol/partial_names.h).
    bool is_rftpd() const { return parallel; }

    bool operator==(const Features &) const = default;
};

// The text of a 211 reply to FEAT: "Features:", a line per feature, "End".
std::string format_features(const Features &f);

// lines: the text lines of a 211 reply to FEAT (first and last are prose).
Features parse_features(const std::vector<std::string> &lines);

}  // namespace rftp::ftp
