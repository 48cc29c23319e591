// A damaged block is sent again on the connection it came by
// (docs/protocol.md, "A damaged block"). The receiver asks in that
// connection's otherwise silent reverse direction, with a resend frame; the
// sender reads the block from its file again and sends it again. A
// connection ends only when the sender has sent its end-of-data frame and
// the receiver, holding every block the connection brought intact and
// written, echoes that frame: so a transfer never ends with a damaged
// block, never has to start again over new connections because of one, and
// a receiver that failed (it only closes) is never taken for one that
// finished.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/result.h"
#include "middleware/integrity/block_checksum.h"
#include "middleware/tcp/block_layout.h"
#include "middleware/tcp/connection_end.h"
#include "middleware/transfer_progress.h"
#include "protocol/block_frame.h"

namespace rftp::middleware {

// More damaged blocks than this on one connection fail the transfer: a
// path that damages so much needs fixing, not retrying, and neither side
// keeps more than this many requests in memory for a peer.
inline constexpr unsigned kMaxResendsPerConnection = 64;

// What the receiver said after the sender's end-of-data frame.
enum class ReceiverWord { asked_again, confirmed };

// The sending side of one connection: the receiver's requests.
class ResendRequests {
public:
    ResendRequests(int sock, const BlockLayout &layout, TransferProgress &progress)
        : sock_(sock), layout_(layout), progress_(progress) {}

    // Takes the requests that have arrived, without waiting.
    Status poll();
    // After the end-of-data frame: waits for the receiver's word: blocks
    // asked for again (next() has them), or its echo of the end-of-data
    // frame, holding every block this connection brought. A receiver that
    // closes without either has failed.
    Result<ReceiverWord> wait();
    // The next block to send again, in the order asked.
    std::optional<BlockRange> next();
    bool pending() const { return !queue_.empty(); }

private:
    // Reads what is there (or, waiting, what comes next); false at the end of the stream.
    Result<bool> read_some(bool wait);
    Result<ReceiverWord> take_frame();

    int sock_;
    const BlockLayout &layout_;
    TransferProgress &progress_;
    uint8_t header_[ftp::kFrameHeaderSize] = {};
    std::size_t have_ = 0;
    std::deque<BlockRange> queue_;
    std::unordered_map<uint64_t, unsigned> asked_;  // times each block (by offset) was asked for
    unsigned requests_ = 0;
};

// The receiving side of one connection: the damaged blocks it brought.
class DamagedBlocks {
public:
    // deferred: requests wait for the sender's end-of-data frame
    // (ask_deferred), where the session agreed to unechoed ends: a request
    // sent earlier could meet the sender's next transfer.
    DamagedBlocks(int sock, std::string stream, TransferProgress &progress, bool deferred = false)
        : sock_(sock), stream_(std::move(stream)), progress_(progress), deferred_(deferred) {}

    // A block failed its check: ask the sender for it again (now, or at
    // the end-of-data frame), or fail the transfer once it has failed
    // kMaxBlockAttempts times, or once the connection brought more than
    // kMaxResendsPerConnection damaged blocks.
    Status ask_again(uint64_t offset, uint32_t length, const TrailerCheck &check);
    // At an echoed end-of-data frame: the requests that waited for it.
    Status ask_deferred();
    // An intact block arrived.
    void arrived(uint64_t offset) { awaited_.erase(offset); }
    // Blocks asked for again and not back yet.
    std::size_t awaited() const { return awaited_.size(); }
    // Every block this connection brought is intact and written: the echo
    // of the end-of-data frame (size: the file's) tells the sender so. A
    // sender that is gone by then changes nothing here. Then this side
    // ends the connection as how says (connection_end.h).
    void confirm_end(uint64_t size, ConnectionEnd how);

private:
    Status send_request(const ftp::FrameHeader &h);

    int sock_;
    std::string stream_;
    TransferProgress &progress_;
    std::unordered_map<uint64_t, unsigned> failures_;  // by offset
    std::unordered_set<uint64_t> awaited_;
    unsigned asked_ = 0;
    bool deferred_ = false;
    std::vector<ftp::FrameHeader> waiting_;  // deferred requests, in the order found
};

}  // namespace rftp::middleware
