// The sink side of a channel: take the source's announcement, grant every
// free block ahead of need (the whole pool: it should cover bandwidth x
// round trip), take each block's notice, and have the disk writers check
// the block and write it at its offset (disk_writers.cpp), then grant it
// straight back, batched with whatever else freed meanwhile. When a file
// is done, the next file's first blocks are granted before it is known
// (docs/protocol.md, "Grants ahead"), so files in a row do not wait a
// round trip each for their first grant. Its state and
// lock are its own: the completion handlers reach it through try_begin and
// on_notice; its lock comes before the control link's, never after.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "common/result.h"
#include "middleware/range_set.h"
#include "middleware/rdma/channel_core.h"
#include "middleware/rdma/disk_thread.h"
#include "middleware/rdma/file_specs.h"
#include "middleware/rdma/file_state.h"
#include "middleware/transfer_progress.h"
#include "protocol/rdma_message.h"

namespace rftp::middleware::rdma {

class SinkPipeline {
public:
    explicit SinkPipeline(ChannelCore &core) : core_(core) {}
    ~SinkPipeline() { stop(); }

    // The disk writers.
    Status start();
    // Wakes and joins them; a file still waiting ends. Idempotent.
    void stop();

    // Makes ready for one file (the channel's gate lets one run at a time);
    // received tells which ranges arrived, also on failure. Quick: the gate
    // holds its lock meanwhile.
    Status open(const ReceiveSpec &spec, TransferProgress &progress, RangeSet &received);
    // The source's file_begin: taken by the open file if it waits for one;
    // no_file when none is open or the open one is done (the begin is then
    // the next file's, for the channel to keep).
    enum class Begin { taken, no_file, already_begun };
    Begin try_begin(const wire::RdmaMessage &begin);
    // Waits until the open file is done, then closes it.
    Result<FileResult> wait();

    // A block notice: a WRITE WITH IMMEDIATE's, or a block_done message's.
    // An error is the peer's protocol violation, for the channel to fail on.
    Status on_notice(unsigned qp, uint32_t slot, uint32_t length, std::optional<uint32_t> file_id, NoticeMode mode);
    // This side announces a file of its own: the grants ahead lapse.
    void forget_grants_ahead();
    // The channel failed with e: the current file, if any, ends with the channel's first error.
    void end_file(const Error &e);

    uint32_t current_file() const;  // 0 between files and before file_begin
    std::optional<ProgressSample> progress() const;

private:
    void writer_loop(unsigned index);

    // All *_locked run with mutex_ held.
    void fail_locked(const Error &e, bool tell_peer);
    void end_file_locked(const Error &e);
    void begin_locked(const wire::RdmaMessage &begin);
    void grant_ahead_locked();
    void take_ahead_into_file_locked();
    void adopt_ahead_locked();
    Status park_ahead_notice_locked(uint32_t slot, uint32_t length, std::optional<uint32_t> file_id, NoticeMode mode);
    Status take_filled_locked(uint32_t slot);
    void reserve_then_grant(std::unique_lock<std::mutex> &lock);
    wire::Grant grant_of(uint32_t slot, uint64_t offset, uint32_t len) const;
    void grant_locked();
    void lend_locked(uint32_t slot, uint64_t offset, uint32_t len, std::optional<uint32_t> contents_crc);
    void flush_grants_locked();
    void finish_locked();
    void block_stored_locked(uint32_t slot);
    void checksum_failed_locked(uint32_t slot, uint32_t got, uint32_t want);
    void send_locked(const wire::RdmaMessage &m);
    bool current_locked(uint32_t id) const { return file_ && file_->id == id && !file_->done; }
    void went_idle_locked() {
        if (draining_) changed_.notify_all();
    }

    ChannelCore &core_;
    mutable std::mutex mutex_;
    std::condition_variable changed_;  // the file's state: whoever waits on it
    std::condition_variable writer_cv_;
    bool stopping_ = false;
    unsigned disk_busy_ = 0;  // writers with blocks in their hands or in flight
    // wait() waits for the writers to go idle; only then do they signal
    // changed_ (waking it per block costs dearly).
    bool draining_ = false;
    std::optional<SinkFile> file_;

    // Blocks granted ahead for the source's next file: lent before its
    // file_begin, and before this side opened it.
    struct AheadBlock {
        uint32_t slot = 0;
        uint64_t relative_offset = 0;  // k x block, counted from where the file starts
        std::optional<uint32_t> filled;  // the notice's length, once it came
    };
    struct Ahead {
        uint32_t file_id = 0;
        NoticeMode notice = NoticeMode::unknown;
        std::vector<AheadBlock> blocks;
    };
    std::optional<Ahead> ahead_;
    uint32_t last_begun_ = 0;  // the last file_begin's id

    std::vector<DiskThread> writers_;  // destroyed before the pool
    std::vector<std::thread> threads_;
};

}  // namespace rftp::middleware::rdma
