// What rftp reads from a server it may not trust: reply lines reassembled,
// then the replies it parses further (FEAT, PASV, EPSV, OPTS PARALLEL,
// RADR, OPTS DATATOKEN). Lines are split at '\n' as the client splits them.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "protocol/data_token.h"
#include "protocol/features.h"
#include "protocol/ftp_reply.h"
#include "protocol/host_port.h"
#include "protocol/parallel_option.h"
#include "protocol/rdma_setup.h"

namespace {

void parse_further(const rftp::ftp::Reply &reply) {
    (void)rftp::ftp::parse_features(reply.lines);
    const std::string text = reply.text();
    (void)rftp::ftp::parse_pasv_reply(text);
    (void)rftp::ftp::parse_epsv_reply(text);
    (void)rftp::ftp::parse_parallel_grant(text);
    (void)rftp::ftp::parse_rdma_grant(text);
    (void)rftp::wire::parse_data_token_reply(text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    std::string_view input(reinterpret_cast<const char *>(data), size);
    rftp::ftp::ReplyAssembler assembler;
    rftp::ftp::Reply reply;
    while (!input.empty()) {
        const std::size_t end = input.find('\n');
        std::string_view line = input.substr(0, end);
        input = end == std::string_view::npos ? std::string_view() : input.substr(end + 1);
        if (assembler.add_line(line, reply) == rftp::ftp::ReplyAssembler::State::complete) parse_further(reply);
    }
    return 0;
}
