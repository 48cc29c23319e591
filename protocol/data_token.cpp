#include "protocol/data_token.h"

#include <algorithm>
#include <cerrno>

namespace rftp::wire {

std::array<uint8_t, kDataTokenHeaderSize> data_token_header(const Token &t) {
    std::array<uint8_t, kDataTokenHeaderSize> out{};
    std::copy(kDataTokenMagic.begin(), kDataTokenMagic.end(), out.begin());
    std::copy(t.begin(), t.end(), out.begin() + kDataTokenMagic.size());
    return out;
}

namespace {
constexpr std::string_view kReplyKeyword = "DATATOKEN ";
}  // namespace

std::string format_data_token_reply(const Token &t) { return std::string(kReplyKeyword) + token_hex(t); }

Result<Token> parse_data_token_reply(std::string_view text) {
    if (!text.starts_with(kReplyKeyword)) return fail_msg("the reply does not start with DATATOKEN", -EPROTO);
    std::string_view hex = text.substr(kReplyKeyword.size());
    return parse_token_hex(hex.substr(0, hex.find_first_of(" \n")));
}

}  // namespace rftp::wire
