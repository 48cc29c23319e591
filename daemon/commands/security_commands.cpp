// AUTH, PBSZ, PROT, CCC: FTPS (RFC 4217). What they protect, and what they
// do not, is in daemon/SECURITY.md.
#include "common/ascii_case.h"
#include "common/log.h"
#include "daemon/commands/command_table.h"
#include "daemon/server/server.h"
#include "daemon/session/session.h"

namespace rftp::daemon {

void cmd_auth(Session &s, const std::string &arg) {
    if (!s.server().tls_context()) return s.reply(502, "TLS is not offered by this server (no certificate is set).");
    const std::string mechanism = ascii_upper(arg);
    if (mechanism != "TLS" && mechanism != "TLS-C" && mechanism != "SSL")
        return s.reply(504, "AUTH TLS is the only security mechanism offered.");
    if (s.tls_active()) return s.reply(503, "TLS is already on.");
    if (s.logged_in()) return s.reply(503, "AUTH TLS must come before USER.");
    if (s.has_unread_commands()) {
        // Sent in clear behind AUTH TLS: running them as if inside TLS would
        // let a man in the middle inject commands (the STARTTLS injection).
        return s.reply_and_close(421, "Commands sent after AUTH TLS before its reply; closing.",
                                 "commands pipelined behind AUTH TLS");
    }
    s.state.pending_user.clear();
    s.reply(234, "Proceed with negotiation.");
    if (auto started = s.start_tls(); !started)
        s.reply_and_close(421, "TLS is not available just now.", "TLS setup failed");
}

void cmd_pbsz(Session &s, const std::string &arg) {
    if (!s.tls_active()) return s.reply(503, "PBSZ needs AUTH TLS first.");
    if (arg.find_first_not_of("0123456789") != std::string::npos)
        return s.reply(501, "PBSZ takes a decimal number (0 under TLS).");
    s.state.pbsz_done = true;
    s.reply(200, "PBSZ=0");
}

void cmd_prot(Session &s, const std::string &arg) {
    if (!s.tls_active()) return s.reply(503, "PROT needs AUTH TLS first.");
    if (!s.state.pbsz_done) return s.reply(503, "PROT needs PBSZ 0 first.");
    const std::string level = ascii_upper(arg);
    if (level == "P") {
        s.state.protect_data = true;
        s.state.kept_data.clear();  // they began in clear: never carried under TLS (docs/protocol.md)
        return s.reply(200, "Protection level set to P: data connections use TLS.");
    }
    if (level == "C") {
        if (s.tls_required()) return s.reply(534, "Clear data connections are refused here: use PROT P.");
        s.state.protect_data = false;
        s.state.kept_data.clear();  // their TLS is no longer wanted (docs/protocol.md)
        return s.reply(200, "Protection level set to C: data connections are in clear.");
    }
    if (level == "S" || level == "E") return s.reply(536, "PROT S and E are not offered: use P (or C).");
    s.reply(504, "PROT takes P, C, S or E.");
}

void cmd_ccc(Session &s, const std::string &) {
    s.reply(534, "CCC is refused: the control connection stays encrypted.");
}

}  // namespace rftp::daemon
