#include "client/commands/command_context.h"

#include "common/log.h"

namespace rftp::client {

namespace {

// How -v says what protected the data.
std::string data_protection_text(const RunSummary &s) {
    if (s.tls_data == "rdma") return "over RDMA, not encrypted";
    if (s.tls_data != "tls") return "in clear text";
    return "under TLS (PROT P" + (s.tls_path.empty() ? std::string() : ", records made by " + s.tls_path) + ")";
}

}  // namespace

void record_protection(RunSummary &summary, const Session &session, const FileReport &report) {
    summary.tls_control = session.control.tls() ? SSL_get_version(session.control.tls()) : "";
    summary.tls_data = report.transport == "rdma" ? "rdma" : session.protect_data ? "tls" : "clear";
    summary.tls_path = summary.tls_data == "tls" ? report.tls_path : "";
    log::info("protection: control " +
              (summary.tls_control.empty() ? std::string("in clear text") : "under " + summary.tls_control) +
              ", data " + data_protection_text(summary));
}

void CommandContext::note(const std::string &text) {
    log::info(text);
    summary.notes.push_back(text);
}

}  // namespace rftp::client
