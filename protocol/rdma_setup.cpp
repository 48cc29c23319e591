#include "protocol/rdma_setup.h"

#include <limits>
#include <map>
#include <sstream>

#include "common/ascii_case.h"
#include "common/decimal.h"

namespace rftp::ftp {
namespace {

// "port=P streams=S ..." -> its fields; words without '=' are skipped.
std::map<std::string, std::string> reply_fields(std::string_view text) {
    std::map<std::string, std::string> fields;
    std::istringstream in{std::string(text)};
    std::string word;
    while (in >> word)
        if (auto eq = word.find('='); eq != std::string::npos) fields[word.substr(0, eq)] = word.substr(eq + 1);
    return fields;
}

std::optional<uint64_t> positive_field(const std::map<std::string, std::string> &fields, const char *key,
                                       uint64_t max) {
    auto it = fields.find(key);
    if (it == fields.end()) return std::nullopt;
    auto value = parse_decimal(it->second, max);
    return value && *value > 0 ? value : std::nullopt;
}

}  // namespace

std::string format_rdma_request(const RdmaRequest &r) {
    return "RADR " + std::to_string(r.streams) + " " + std::to_string(r.block_size) + " " + std::to_string(r.depth) +
           (r.ahead ? " AHEAD" : "");
}

std::optional<RdmaRequest> parse_rdma_request(std::string_view args) {
    std::istringstream in{std::string(args)};
    std::string a, b, c, ahead, extra;
    in >> a >> b >> c >> ahead >> extra;
    auto streams = parse_decimal(a), block = parse_decimal(b), depth = parse_decimal(c);
    if (!streams || !block || !depth || *streams == 0 || *block == 0 || *depth == 0) return std::nullopt;
    if (!extra.empty() || (!ahead.empty() && ascii_upper(ahead) != "AHEAD")) return std::nullopt;
    return RdmaRequest{.streams = *streams, .block_size = *block, .depth = *depth, .ahead = !ahead.empty()};
}

std::string format_rdma_grant(const RdmaGrant &g) {
    return "RADR port=" + std::to_string(g.port) + " streams=" + std::to_string(g.streams) +
           " block=" + std::to_string(g.block_size) + " depth=" + std::to_string(g.depth) +
           " token=" + wire::token_hex(g.token);
}

std::optional<RdmaGrant> parse_rdma_grant(std::string_view text) {
    const auto fields = reply_fields(text);
    constexpr auto kUnsignedMax = std::numeric_limits<unsigned>::max();
    auto port = positive_field(fields, "port", std::numeric_limits<uint16_t>::max());
    auto streams = positive_field(fields, "streams", kMaxRdmaStreams);
    auto block = positive_field(fields, "block", std::numeric_limits<uint32_t>::max());
    auto depth = positive_field(fields, "depth", kUnsignedMax);
    auto token_text = fields.find("token");
    if (!port || !streams || !block || !depth || token_text == fields.end()) return std::nullopt;
    auto token = wire::parse_token_hex(token_text->second);
    if (!token) return std::nullopt;
    return RdmaGrant{.port = static_cast<uint16_t>(*port),
                     .streams = static_cast<unsigned>(*streams),
                     .block_size = static_cast<uint32_t>(*block),
                     .depth = static_cast<unsigned>(*depth),
                     .token = *token};
}

}  // namespace rftp::ftp
