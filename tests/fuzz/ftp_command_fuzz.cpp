// rftpd's first look at a client's bytes: lines split out of the stream,
// the Telnet filter, the command grammar, then every argument rftpd parses
// further: addresses (PORT, EPRT), offsets and counts (REST, OPTS
// PARALLEL, RADR), SRCE's token, and a path resolved beneath the root.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/decimal.h"
#include "daemon/vfs/user_root.h"
#include "protocol/ftp_command.h"
#include "protocol/host_port.h"
#include "protocol/parallel_option.h"
#include "protocol/rdma_setup.h"
#include "protocol/source_identity.h"
#include "protocol/telnet_filter.h"

namespace {

void parse_arguments(const rftp::ftp::Command &command) {
    const std::string &arg = command.argument;
    (void)rftp::ftp::parse_port_argument(arg);
    (void)rftp::ftp::parse_eprt_argument(arg);
    (void)rftp::parse_decimal(arg, 1ull << 62);
    (void)rftp::ftp::parse_parallel_request(arg);
    (void)rftp::ftp::parse_rdma_request(arg);
    (void)rftp::ftp::valid_source_token(arg);
    (void)rftp::daemon::resolve_virtual_path("/data/run 1", arg);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    rftp::ftp::TelnetFilter telnet;
    rftp::ftp::LineReader lines;
    std::string filtered, line;
    telnet.filter(std::string_view(reinterpret_cast<const char *>(data), size), filtered);
    lines.feed(filtered);
    while (lines.next(line) != rftp::ftp::LineReader::Next::need_more) {
        if (auto command = rftp::ftp::parse_command(line)) parse_arguments(*command);
    }
    return 0;
}
