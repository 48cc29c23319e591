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
        auto word = take_frame();
        if (!word) return fail(word.error());
        if (*word == ReceiverWord::confirmed) return fail_msg("the receiver confirmed an end that was not offered");
    }
}

Result<ReceiverWord> ResendRequests::wait() {
    for (;;) {
        auto more = read_some(true);
        if (!more) return fail(more.error());
        if (!*more) {
            // A stream shut down to stop it reads as the end too.
            if (progress_.abort.load()) return fail(Error{-ECANCELED, "transfer aborted"});
            return fail_msg("the receiver closed the connection without confirming the blocks it received");
        }
        if (have_ < sizeof header_) continue;
        return take_frame();
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
// transfer, each block is sent again at most kMaxBlockAttempts - 1 times
// (the receiver gives up on the next failure anyway), and a connection
// takes at most kMaxResendsPerConnection requests; an echoed end must name
// the file's size.
Result<ReceiverWord> ResendRequests::take_frame() {
    have_ = 0;
    auto h = ftp::decode_receiver_frame(header_, layout_.block_size(), layout_.end());
    if (!h) return fail(h.error());
    if (h->descriptor == ftp::kFrameEod) {
        if (h->offset != layout_.end())
            return fail_msg("the receiver confirmed an end at byte " + std::to_string(h->offset) + ", not " +
                            std::to_string(layout_.end()));
        return ReceiverWord::confirmed;
    }
    if (++requests_ > kMaxResendsPerConnection)
        return fail_msg("the receiver asked for more than " + std::to_string(kMaxResendsPerConnection) +
                        " blocks again on one connection");
    auto block = layout_.block_at(h->offset, h->count);
    if (!block)
        return fail_msg("the receiver asked again for bytes " + std::to_string(h->offset) + "+" +
                        std::to_string(h->count) + ", which are no block of this transfer");
    if (++asked_[block->offset] >= kMaxBlockAttempts)
        return fail_msg("the receiver asked for the block at byte " + std::to_string(block->offset) + " " +
                        std::to_string(kMaxBlockAttempts) + " times");
    queue_.push_back(*block);
    progress_.blocks_resent.fetch_add(1);
    return ReceiverWord::asked_again;
}

Status DamagedBlocks::ask_again(uint64_t offset, uint32_t length, const TrailerCheck &check) {
    if (++asked_ > kMaxResendsPerConnection)
        return fail_msg("more than " + std::to_string(kMaxResendsPerConnection) +
                            " blocks failed their CRC32C check on one connection; data is being damaged between "
                            "the two hosts (check the NICs, cables and memory)",
                        -EBADMSG);
    const unsigned attempt = ++failures_[offset];
    char fields[160];
    std::snprintf(fields, sizeof fields, " offset=%llu length=%u crc32c=%08x expected=%08x attempt=%u",
                  static_cast<unsigned long long>(offset), length, check.got, check.want, attempt);
    log::warning("event=block_checksum_mismatch transport=tcp stream=" + stream_ + fields);
    if (attempt >= kMaxBlockAttempts)
        return fail_msg(ftp::checksum_failure_text(offset, length, attempt), -EBADMSG);
    awaited_.insert(offset);
    if (deferred_) {
        waiting_.push_back({ftp::kFrameResend, length, offset});
        return {};
    }
    return send_request({ftp::kFrameResend, length, offset});
}

// Counted as sent again only once asked for: a deferred request that an
// unechoed end leaves unsent fails the transfer instead.
Status DamagedBlocks::send_request(const ftp::FrameHeader &h) {
    auto request = ftp::encode_frame(h);
    if (auto ok = write_all(sock_, request.data(), request.size()); !ok)
        return fail(ok.error().with_context("asking for a damaged block again"));
    progress_.blocks_resent.fetch_add(1);
    return {};
}

Status DamagedBlocks::ask_deferred() {
    for (const ftp::FrameHeader &h : waiting_)
        if (auto ok = send_request(h); !ok) return ok;
    waiting_.clear();
    return {};
}

void DamagedBlocks::confirm_end(uint64_t size, ConnectionEnd how) {
    auto echo = ftp::encode_frame({ftp::kFrameEod, 0, size});
    if (!write_all(sock_, echo.data(), echo.size())) return;
    end_connection(sock_, how);
}

}  // namespace rftp::middleware
