#include "client/commands/command_context.h"

#include "common/log.h"

namespace rftp::client {

void record_protection(RunSummary &summary, const Session &session, const std::string &transport) {
    summary.tls_control = session.control.tls() ? SSL_get_version(session.control.tls()) : "";
    summary.tls_data = transport == "rdma" ? "rdma" : session.protect_data ? "tls" : "clear";
    log::info("protection: control " + (summary.tls_control.empty() ? std::string("in clear text") : "under " + summary.tls_control) +
              ", data " + (summary.tls_data == "tls" ? "under TLS (PROT P)" : summary.tls_data == "rdma" ? "over RDMA, not encrypted" : "in clear text"));
}

void CommandContext::note(const std::string &text) {
    log::info(text);
    summary.notes.push_back(text);
}

}  // namespace rftp::client
