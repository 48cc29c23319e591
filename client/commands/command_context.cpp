#include "client/commands/command_context.h"

#include "common/log.h"

namespace rftp::client {

void record_protection(RunSummary &summary, const Session &session, const FileReport &report) {
    summary.tls_control = session.control.tls() ? SSL_get_version(session.control.tls()) : "";
    summary.tls_data = report.transport == "rdma" ? "rdma" : session.protect_data ? "tls" : "clear";
    summary.tls_path = summary.tls_data == "tls" ? report.tls_path : "";
    const std::string records = summary.tls_path.empty() ? "" : ", records by " + summary.tls_path;
    log::info("protection: control " + (summary.tls_control.empty() ? std::string("in clear text") : "under " + summary.tls_control) +
              ", data " + (summary.tls_data == "tls" ? "under TLS (PROT P" + records + ")" : summary.tls_data == "rdma" ? "over RDMA, not encrypted" : "in clear text"));
}

void CommandContext::note(const std::string &text) {
    log::info(text);
    summary.notes.push_back(text);
}

}  // namespace rftp::client
