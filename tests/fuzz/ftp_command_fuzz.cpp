// rftpd's first look at a client's bytes: the Telnet filter, then the
// command grammar, on any line a client may send.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/ftp_command.h"
#include "protocol/parallel_option.h"
#include "protocol/rdma_setup.h"
#include "protocol/telnet_filter.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    rftp::ftp::TelnetFilter telnet;
    std::string line;
    telnet.filter(std::string_view(reinterpret_cast<const char *>(data), size), line);
    auto command = rftp::ftp::parse_command(line);
    if (!command) return 0;
    // The arguments rftpd's own extensions parse further.
    (void)rftp::ftp::parse_parallel_request(command->argument);
    (void)rftp::ftp::parse_rdma_request(command->argument);
    return 0;
}
