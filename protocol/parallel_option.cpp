#include "protocol/parallel_option.h"

#include <limits>
#include <sstream>

#include "common/decimal.h"

namespace rftp::ftp {

std::string format_parallel_request(const ParallelRequest &r) {
    std::string out = "PARALLEL " + std::to_string(r.streams);
    if (r.block_size) out += " " + std::to_string(*r.block_size);
    return out;
}

std::optional<ParallelRequest> parse_parallel_request(std::string_view args) {
    std::istringstream in{std::string(args)};
    std::string n_text, block_text;
    in >> n_text >> block_text;  // anything after them is ignored, as rftpd always did
    auto streams = parse_decimal(n_text);
    if (!streams) return std::nullopt;
    ParallelRequest r{.streams = *streams, .block_size = std::nullopt};
    if (block_text.empty()) return r;
    r.block_size = parse_decimal(block_text);
    return r.block_size ? std::optional(r) : std::nullopt;
}

std::string format_parallel_grant(const ParallelGrant &g) {
    return "PARALLEL " + std::to_string(g.streams) + " " + std::to_string(g.block_size);
}

std::optional<ParallelGrant> parse_parallel_grant(std::string_view text) {
    std::istringstream in{std::string(text)};
    std::string keyword, n_text, block_text;
    in >> keyword >> n_text >> block_text;
    auto streams = parse_decimal(n_text, std::numeric_limits<unsigned>::max());
    auto block = parse_decimal(block_text);
    if (keyword != "PARALLEL" || !streams || !block || *streams == 0 || *block == 0) return std::nullopt;
    return ParallelGrant{.streams = static_cast<unsigned>(*streams), .block_size = *block};
}

}  // namespace rftp::ftp
