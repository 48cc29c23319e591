#include "protocol/data_token.h"

#include <algorithm>

namespace rftp::wire {

std::array<uint8_t, kDataTokenHeaderSize> data_token_header(const Token &t) {
    std::array<uint8_t, kDataTokenHeaderSize> out{};
    std::copy(kDataTokenMagic.begin(), kDataTokenMagic.end(), out.begin());
    std::copy(t.begin(), t.end(), out.begin() + kDataTokenMagic.size());
    return out;
}

}  // namespace rftp::wire
