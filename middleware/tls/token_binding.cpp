#include "middleware/tls/token_binding.h"

#include <algorithm>
#include <array>

#include "middleware/tls/tls_error.h"

namespace rftp::middleware::tls {

Result<wire::ChannelTokens> bind_tokens(SSL *control, const wire::ChannelToken &nonce, unsigned queue_pairs) {
    static constexpr char kLabel[] = "EXPORTER-rftp-rdma-channel";
    wire::ChannelTokens tokens;
    std::array<unsigned char, wire::kTokenSize + 1> context{};
    std::copy(nonce.begin(), nonce.end(), context.begin());
    for (unsigned i = 0; i < queue_pairs; ++i) {
        context.back() = static_cast<unsigned char>(i);
        wire::ChannelToken bound{};
        clear_openssl_errors();
        if (SSL_export_keying_material(control, bound.data(), bound.size(), kLabel, sizeof kLabel - 1,
                                       context.data(), context.size(), 1) != 1)
            return fail(tls_error("TLS exporter for the RDMA tokens"));
        tokens.per_index.push_back(bound);
    }
    return tokens;
}

}  // namespace rftp::middleware::tls
