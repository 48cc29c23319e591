// Setting up the next transfer: PASV, EPSV, PORT, EPRT, REST; and ABOR.
#include <arpa/inet.h>
#include <netinet/in.h>

#include "common/decimal.h"
#include "daemon/commands/command_support.h"
#include "daemon/commands/command_table.h"
#include "daemon/config/options.h"
#include "daemon/session/session.h"
#include "protocol/host_port.h"

namespace rftp::daemon {
namespace {

bool open_passive(Session &s) {
    const auto &o = s.options();
    // Enough backlog for every parallel stream to connect before we accept.
    auto ch = DataChannel::listen_passive(s.local(), o.passive_port_min, o.passive_port_max,
                                          static_cast<int>(o.max_streams) + 4);
    if (!ch) {
        s.reply(425, "Can't open passive connection: " + ch.error().message + ".");
        return false;
    }
    if (s.state.data_channel) s.state.data_channel->cancel();
    s.state.data_channel = std::move(*ch);
    s.state.kept_data.clear();  // a new data channel ends the kept one (docs/protocol.md)
    return true;
}

bool is_ipv4_control(const sockaddr_storage &local) {
    if (local.ss_family == AF_INET) return true;
    const auto &a6 = reinterpret_cast<const sockaddr_in6 &>(local).sin6_addr;
    return IN6_IS_ADDR_V4MAPPED(&a6);
}

bool refused_by_epsv_all(Session &s) {
    if (!s.state.epsv_all) return false;
    s.reply(503, "EPSV ALL in effect: use EPSV.");
    return true;
}

void set_active(Session &s, Result<ftp::Endpoint> ep) {
    if (refused_by_epsv_all(s)) return;
    if (!s.options().active_mode) return s.reply(502, "Active mode is disabled on this server; use PASV or EPSV.");
    if (!ep) return s.reply(ep.error().code == 522 ? 522 : 501, ep.error().message);
    // No FTP bounce: data connections go only to the client's own address.
    if (canonical_address_text(ep->host) != address_text(s.peer())) return s.reply(504, "Data address must be your own address.");
    if (ep->port < 1024) return s.reply(504, "Data port must be 1024 or above.");
    if (s.state.data_channel) s.state.data_channel->cancel();
    s.state.data_channel = DataChannel::connect_active(*ep);
    s.state.kept_data.clear();
    s.reply(200, "Active data connection parameters accepted.");
}

}  // namespace

void cmd_pasv(Session &s, const std::string &) {
    if (refused_by_epsv_all(s)) return;
    if (!is_ipv4_control(s.local())) return s.reply(425, "PASV needs IPv4; use EPSV.");
    if (!open_passive(s)) return;
    ftp::Endpoint ep;
    ep.host = s.options().passive_address.empty() ? address_text(s.local()) : s.options().passive_address;
    ep.port = s.state.data_channel->port();
    s.reply(227, ftp::format_pasv_text(ep));
}

void cmd_epsv(Session &s, const std::string &arg) {
    if (!arg.empty() && arg != "ALL" && arg != "all") {
        bool v4 = is_ipv4_control(s.local());
        if ((arg == "1" && !v4) || (arg == "2" && v4) || (arg != "1" && arg != "2"))
            return s.reply(522, "Network protocol not supported, use (" + std::string(v4 ? "1" : "2") + ")");
    }
    if (arg == "ALL" || arg == "all") {
        s.state.epsv_all = true;
        return s.reply(200, "EPSV ALL ok.");
    }
    if (!open_passive(s)) return;
    s.reply(229, ftp::format_epsv_text(s.state.data_channel->port()));
}

void cmd_port(Session &s, const std::string &arg) { set_active(s, ftp::parse_port_argument(arg)); }

void cmd_eprt(Session &s, const std::string &arg) { set_active(s, ftp::parse_eprt_argument(arg)); }

void cmd_rest(Session &s, const std::string &arg) {
    auto offset = parse_decimal(arg, 1ull << 62);
    if (!offset) {
        s.state.restart_offset = 0;  // a refused REST leaves no earlier one behind
        return s.reply(501, "REST needs a byte offset.");
    }
    s.state.restart_offset = *offset;
    s.reply(350, "Restarting at " + std::to_string(*offset) + ". Send STOR or RETR.");
}

void cmd_abor(Session &s, const std::string &) {
    if (s.active_transfer()) {
        // The transfer's own completion sends 426 and then 226.
        s.abort_transfer();
        return;
    }
    if (s.state.data_channel) {
        s.state.data_channel->cancel();
        s.state.data_channel.reset();
    }
    if (s.state.rdma && !s.state.rdma->channel()) {
        // A client that could not connect its queue pairs gives up on RADR.
        s.state.rdma->cancel();
        return s.reply(225, "RDMA channel setup aborted.");
    }
    s.reply(225, "No transfer to abort.");
}

}  // namespace rftp::daemon
