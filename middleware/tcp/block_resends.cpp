#include "middleware/tcp/block_resends.h"

#include <sys/socket.h>

#include <cstdio>

#include "common/log.h"
#include "middleware/tcp/socket_io.h"
#include "protocol/checksum_failure.h"

namespace rftp::middleware {

Status ResendRequests::poll() {
    for (;;) {
        auto more = read_some(false);
        if (!more) return fail(more.error());
        if (!*more) return fail_msg("the receiver closed the connection before the end of the data");
        if (have_ < sizeof header_) return {};
        if (auto ok = take_request(); !ok) return ok;
    }
}

Result<bool> ResendRequests::wait() {
    for (;;) {
        auto more = read_some(true);
        if (!more) return fail(more.error());
        if (!*more) {
            // A stream shut down to stop it reads as the end too.
            if (progress_.abort.load()) return fail(Error{-ECANCELED, "transfer aborted"});
            if (have_ != 0) return fail_msg("the receiver closed the connection inside a resend request");
            return false;
        }
        if (have_ < sizeof header_) continue;
        if (auto ok = take_request(); !ok) return fail(ok.error());
        return true;
    }
}

std::optional<BlockRange> ResendRequests::next() {
    if (queue_.empty()) return std::nullopt;
    BlockRange block = queue_.front();
    queue_.pop_front();
    return block;
}

Result<bool> ResendRequests::read_some(bool wait) {
    uint8_t *into = header_ + have_;
    const std::size_t room = sizeof header_ - have_;
    if (wait) {
        auto got = recv_some(sock_, into, room, progress_);
        if (!got) return fail(got.error());
        have_ += *got;
        return *got != 0;
    }
    for (;;) {
        ssize_t n = ::recv(sock_, into, room, MSG_DONTWAIT);
        if (n > 0) {
            have_ += static_cast<std::size_t>(n);
            return true;
        }
        if (n == 0) return false;
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return true;  // nothing yet
        return fail_errno("recv from the receiver");
    }
}

// The receiver is trusted with nothing: a request must name a block of this
// transfer, and each block is sent again at most kMaxBlockAttempts - 1
// times (the receiver gives up on the next failure anyway).
Status ResendRequests::take_request() {
    have_ = 0;
    auto h = ftp::decode_resend_request(header_, layout_.block_size(), layout_.end());
    if (!h) return fail(h.error());
    auto block = layout_.block_at(h->offset, h->count);
    if (!block)
        return fail_msg("the receiver asked again for bytes " + std::to_string(h->offset) + "+" +
                        std::to_string(h->count) + ", which are no block of this transfer");
    if (++asked_[block->offset] >= kMaxBlockAttempts)
        return fail_msg("the receiver asked for the block at byte " + std::to_string(block->offset) + " " +
                        std::to_string(kMaxBlockAttempts) + " times");
    queue_.push_back(*block);
    progress_.blocks_resent.fetch_add(1);
    return {};
}

Status DamagedBlocks::ask_again(uint64_t offset, uint32_t length, const TrailerCheck &check) {
    const unsigned attempt = ++failures_[offset];
    char fields[160];
    std::snprintf(fields, sizeof fields, " offset=%llu length=%u crc32c=%08x expected=%08x attempt=%u",
                  static_cast<unsigned long long>(offset), length, check.got, check.want, attempt);
    log::warning("event=block_checksum_mismatch transport=tcp stream=" + stream_ + fields);
    if (attempt >= kMaxBlockAttempts)
        return fail_msg(ftp::checksum_failure_text(offset, length, attempt), -EBADMSG);
    auto request = ftp::encode_frame({ftp::kFrameResend, length, offset});
    if (auto ok = write_all(sock_, request.data(), request.size()); !ok)
        return fail(ok.error().with_context("asking for a damaged block again"));
    awaited_.insert(offset);
    progress_.blocks_resent.fetch_add(1);
    return {};
}

}  // namespace rftp::middleware
