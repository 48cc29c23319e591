#include "client/commands/resume_command.h"

#include "common/byte_size.h"

namespace rftp::client {

std::string shell_quoted(const std::string &s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

std::string resume_command(const char *verb, const Options &o, const std::vector<std::string> &args) {
    const Options defaults;
    std::string cmd = std::string("rftp ") + verb + " -c";
    if (o.recursive) cmd += " -r";
    if (o.verify) cmd += " --verify";  // a resumed file deserves the check the first run asked for
    if (o.parallel_given) cmd += " -P " + std::to_string(o.parallel);
    if (o.many_files() && o.concurrency != defaults.concurrency) cmd += " -j " + std::to_string(o.concurrency);
    if (o.continue_on_error) cmd += " --continue-on-error";
    if (o.retries) cmd += " --retries " + std::to_string(o.retries);
    if (o.transport == Transport::rdma) cmd += " --transport rdma";
    if (o.transport == Transport::tcp) cmd += " --transport tcp";
    if (o.block_size_given) cmd += " --block-size " + byte_size_text(o.block_size);
    if (!o.block_checksums) cmd += " --no-block-checksums";
    if (o.sequential_writes) cmd += " --sequential-writes";
    if (o.rdma_pool != defaults.rdma_pool) cmd += " --rdma-pool " + byte_size_text(o.rdma_pool);
    if (o.iodepth != defaults.iodepth) cmd += " --iodepth " + std::to_string(o.iodepth);
    if (o.timeout_seconds != defaults.timeout_seconds) cmd += " --timeout " + std::to_string(o.timeout_seconds);
    cmd += " --";
    for (const auto &a : args) cmd += " " + shell_quoted(a);
    return cmd;
}

}  // namespace rftp::client
