// Commands about the session itself: NOOP, SYST, FEAT, OPTS, HELP, STAT,
// and the transfer parameters TYPE, MODE, STRU, ALLO, SRCE.
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <sstream>

#include "common/ascii_case.h"
#include "common/decimal.h"
#include "common/log.h"
#include "daemon/commands/command_support.h"
#include "daemon/commands/command_table.h"
#include "daemon/config/options.h"
#include "daemon/listing/list_format.h"
#include "daemon/server/server.h"
#include "daemon/session/session.h"
#include "middleware/random_token.h"
#include "protocol/data_token.h"
#include "protocol/features.h"
#include "protocol/parallel_option.h"
#include "protocol/source_identity.h"
#include "protocol/token.h"

namespace rftp::daemon {
namespace {

constexpr uint32_t kMinBlockSize = 64u << 10;
// The MLST facts rftpd gives, all by default (RFC 3659 §7.8).
constexpr const char *kMlstFacts = "type*;size*;modify*;perm*;UNIX.mode*;X.rftp-source*;";

void opts_parallel(Session &s, std::istringstream &in) {
    std::string args;
    std::getline(in, args);
    auto asked = ftp::parse_parallel_request(args);
    if (!asked) return s.reply(501, "Usage: OPTS PARALLEL <streams> [<block bytes>]");
    const uint64_t block = asked->block_size.value_or(s.state.block_size);
    s.state.parallel = static_cast<unsigned>(std::min<uint64_t>(asked->streams, s.options().max_streams));
    s.state.block_size = static_cast<uint32_t>(std::clamp<uint64_t>(block, kMinBlockSize, s.options().max_block_size));
    // Kept connections serve only transfers of as many streams (docs/protocol.md).
    if (s.state.kept_data.size() != s.state.parallel) s.state.kept_data.clear();
    s.reply(200, ftp::format_parallel_grant({.streams = s.state.parallel, .block_size = s.state.block_size}));
}

// STAT <path>: a LIST over the control connection (RFC 959), for clients
// that want a listing without opening a data connection. Listed on the loop,
// so it is capped: large directories belong on a data connection.
void stat_path(Session &s, const std::string &arg) {
    constexpr std::size_t kMaxStatEntries = 1000;
    auto vpath = resolve_or_reply(s, arg);
    if (!vpath) return;
    auto st = s.state.root->stat(*vpath);
    if (!st) return reply_fs_error(s, st.error());
    std::time_t now = std::time(nullptr);
    std::string text = "Status of " + *vpath + ":";
    if (!S_ISDIR(st->st_mode)) {
        text += "\n " + format_list_line(*st, vpath->substr(vpath->rfind('/') + 1), now);
    } else {
        // Stops reading at the cap: a huge directory costs the loop no more than a small one.
        auto entries = s.state.root->list(*vpath, kMaxStatEntries);
        if (!entries && entries.error().code == -E2BIG)
            return s.reply(550, "Directory too large for STAT; use LIST or MLSD.");
        if (!entries) return reply_fs_error(s, entries.error());
        for (const auto &e : *entries) text += "\n " + format_list_line(e.st, e.name, now);
    }
    s.reply(213, text + "\nEnd of status");
}

// OPTS BLOCKSUM [CRC32C|NONE]: sets (or, without an argument, tells) what
// guards each framed or RDMA block of this session's transfers.
void opts_blocksum(Session &s, std::istringstream &in) {
    std::string choice;
    in >> choice;
    choice = ascii_upper(choice);
    if (choice == "CRC32C") s.state.block_checksums = true;
    else if (choice == "NONE") s.state.block_checksums = false;
    else if (!choice.empty()) return s.reply(501, "Unsupported block checksum; CRC32C or NONE.");
    s.reply(200, s.state.block_checksums ? "CRC32C" : "NONE");
}

// OPTS DATATOKEN: hands the client the session's data token, made at the
// first asking; from then on every passive data connection of the session
// must show it first (protocol/data_token.h).
void opts_datatoken(Session &s) {
    if (!s.state.data_token) {
        auto token = middleware::new_random_token();
        if (!token) {
            log::error(s.log_prefix() + " event=data_token_failed error=" + log::quote(token.error().message));
            return s.reply(451, "No data token: the server has no random bytes to spare; data connections go without.");
        }
        s.state.data_token = *token;
    }
    s.reply(200, wire::format_data_token_reply(*s.state.data_token));
}

// OPTS DATAKEEP ON [UNECHOED] | OFF: framed data connections stay open from
// one file to the next; with UNECHOED, a download of at most one block on
// them ends at its EOD frame (docs/protocol.md, "Kept data connections").
void opts_datakeep(Session &s, std::istringstream &in) {
    std::string choice, mode, more;
    in >> choice >> mode >> more;
    choice = ascii_upper(choice);
    mode = ascii_upper(mode);
    if ((choice != "ON" && choice != "OFF") || (!mode.empty() && (choice != "ON" || mode != "UNECHOED")) ||
        !more.empty())
        return s.reply(501, "Usage: OPTS DATAKEEP ON [UNECHOED] | OFF");
    s.state.keep_data = choice == "ON";
    s.state.keep_unechoed = !mode.empty();
    if (!s.state.keep_data) s.state.kept_data.clear();
    s.reply(200, "DATAKEEP " + choice + (mode.empty() ? "" : " " + mode));
}

}  // namespace

void cmd_noop(Session &s, const std::string &) { s.reply(200, "NOOP ok."); }

void cmd_syst(Session &s, const std::string &) { s.reply(215, "UNIX Type: L8"); }

void cmd_feat(Session &s, const std::string &) {
    const ftp::Features offered{.auth_tls = s.server().tls_context() != nullptr,
                                .eprt = true,
                                .epsv = true,
                                .pasv = true,
                                .mdtm = true,
                                .mfmt = true,
                                .size = true,
                                .rest_stream = true,
                                .tvfs = true,
                                .utf8 = true,
                                .mlst = true,
                                .mlst_facts = kMlstFacts,
                                .mlsr = true,
                                .login_ticket = true,
                                .hash_sha256 = true,
                                .blocksum_none = true,
                                .blocksum_on = s.state.block_checksums,
                                .source_identity = true,
                                .hold = true,
                                .data_token = true,
                                .data_keep = true,
                                .data_keep_unechoed = true,
                                .data_keep_tls = s.server().tls_context() != nullptr,
                                .parallel = true,
                                .parallel_max = s.options().max_streams,
                                .rdma = s.server().rdma_offered(),
                                .rdma_max = s.options().rdma.max_streams,
                                .rdma_ahead = true,
                                .pipeline_max = static_cast<unsigned>(kMaxWaitingCommands)};
    s.reply(211, ftp::format_features(offered));
}

void cmd_opts(Session &s, const std::string &arg) {
    std::istringstream in(arg);
    std::string what;
    in >> what;
    what = ascii_upper(what);
    // Clients ask OPTS UTF8 before logging in; the rest set up transfers.
    if (what != "UTF8" && !s.logged_in()) return s.reply(530, "Please login with USER and PASS.");
    if (what == "UTF8") {
        s.reply(200, "Always in UTF8 mode.");
    } else if (what == "HASH") {
        std::string alg;
        in >> alg;
        if (alg.empty() || ascii_upper(alg) == "SHA-256") {
            if (!alg.empty()) s.state.digest_transfers = true;
            s.reply(200, "SHA-256");
        }
        else s.reply(501, "Unsupported algorithm; only SHA-256.");
    } else if (what == "MLST") {
        s.reply(200, "MLST OPTS type;size;modify;perm;UNIX.mode;X.rftp-source;");
    } else if (what == "PARALLEL") {
        opts_parallel(s, in);
    } else if (what == "BLOCKSUM") {
        opts_blocksum(s, in);
    } else if (what == "DATATOKEN") {
        opts_datatoken(s);
    } else if (what == "DATAKEEP") {
        opts_datakeep(s, in);
    } else {
        s.reply(501, "Option not understood.");
    }
}

void cmd_help(Session &s, const std::string &arg) {
    if (!arg.empty()) {
        const CommandSpec *spec = find_command(ascii_upper(arg));
        if (!spec) s.reply(502, "Unknown command " + arg + ".");
        else s.reply(214, std::string(spec->help));
        return;
    }
    std::string text = "The following commands are recognized:\n";
    int col = 0;
    for (const auto &c : all_commands()) {
        text += " " + std::string(c.verb);
        if (++col % 10 == 0) text += "\n";
    }
    s.reply(214, text + "\nHelp OK.");
}

void cmd_stat(Session &s, const std::string &arg) {
    if (!arg.empty()) return stat_path(s, arg);
    std::string text = "rftpd status:\n Logged in as " + s.state.user + "\n TYPE: " + (s.state.ascii ? "ASCII" : "BINARY") +
                       "\n Parallel streams: " + std::to_string(s.state.parallel);
    if (auto t = s.active_transfer()) text += "\n Transfer in progress: " + std::to_string(t->progress.bytes.load()) + " bytes moved";
    if (s.state.rdma && s.state.rdma->channel())
        text += std::string("\n RDMA channel: ") + (s.state.rdma->usable() ? "up" : "closed") + ", " +
                std::to_string(s.state.rdma->params().streams) + " streams";
    // Daemon-wide, so an operator can see what every session holds.
    RdmaTotals t = s.server().rdma_budget().totals();
    text += "\n RDMA totals: channels=" + std::to_string(t.channels) + " queue_pairs=" + std::to_string(t.queue_pairs) +
            " pinned_bytes=" + std::to_string(t.pinned_bytes) + " max_pinned=" + std::to_string(s.server().rdma_budget().max_pinned());
    s.reply(211, text + "\nEnd of status");
}

void cmd_type(Session &s, const std::string &arg) {
    std::string t = ascii_upper(arg);
    if (t == "I" || t == "L 8") {
        s.state.ascii = false;
        s.reply(200, "Switching to Binary mode.");
    } else if (t == "A" || t == "A N") {
        s.state.ascii = true;
        s.reply(200, "Switching to ASCII mode.");
    } else {
        s.reply(504, "Unsupported TYPE; use A or I.");
    }
}

void cmd_mode(Session &s, const std::string &arg) {
    if (ascii_upper(arg) == "S") s.reply(200, "Mode set to S.");
    else s.reply(504, "Only MODE S is supported; parallel streams use OPTS PARALLEL.");
}

void cmd_stru(Session &s, const std::string &arg) {
    if (ascii_upper(arg) == "F") s.reply(200, "Structure set to F.");
    else s.reply(504, "Only STRU F is supported.");
}

// ALLO <size> [R <record size>] (RFC 959): without a size there is nothing
// to do; with one, the next STOR reserves the file's space first.
void cmd_allo(Session &s, const std::string &arg) {
    s.state.allocate_size.reset();  // a new ALLO replaces the last, even a refused one
    std::istringstream in(arg);
    std::string size_text, r, record;
    in >> size_text >> r >> record;
    if (size_text.empty()) return s.reply(202, "ALLO not needed.");
    auto size = parse_decimal(size_text, 1ull << 62);
    if (!size || (!r.empty() && (ascii_upper(r) != "R" || record.empty())))
        return s.reply(501, "Usage: ALLO <size in bytes> [R <record size>]");
    if (!s.options().preallocate || !s.state.root->writable()) return s.reply(202, "ALLO not needed.");
    s.state.allocate_size = *size;
    s.reply(200, "The next STOR reserves " + std::to_string(*size) + " bytes first.");
}

// SRCE <token> (rftpd's own, docs/protocol.md "Uploads"): the local file
// the next upload comes from. Recorded on the partial file, where MLST shows
// it, so that a resume continues only a partial begun from that same file.
void cmd_srce(Session &s, const std::string &arg) {
    s.state.upload_source.reset();  // a new SRCE replaces the last, even a refused one
    if (!ftp::valid_source_token(arg))
        return s.reply(501, "Usage: SRCE <token of 1 to " + std::to_string(ftp::kMaxSourceToken) +
                                " characters from 0-9 A-Z a-z . : _ + ->");
    s.state.upload_source = arg;
    s.reply(200, "The next upload records its source.");
}

// HOLD (rftpd's own, docs/protocol.md "Uploads"): the next upload, once
// complete, is kept aside as its partial file until COMT puts it in place.
void cmd_hold(Session &s, const std::string &) {
    s.state.hold_next_upload = true;
    s.reply(200, "The next upload is held aside until COMT.");
}

}  // namespace rftp::daemon
