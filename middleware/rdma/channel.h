// One RDMA channel between two rftp peers: a control queue pair and N data
// queue pairs, set up once per FTP session (RADR) and reused by every file
// until the session ends. Either side can be the source (its blocks go out
// by RDMA WRITE into memory the sink granted) or the sink.
//
// Threads, for the channel's whole life (docs/middleware.md):
//   dispatcher  waits on the completion channel and rdma_cm events, polls
//               completions in batches, hands each to a worker;
//   workers     run the completion handlers (never block: they move block
//               states, queue work and post receives);
//   readers     fill source blocks from the file through the disk engine
//               (io_uring, O_DIRECT, queue_depth reads each in flight) and
//               seal each with its CRC32C;
//   sender      posts RDMA WRITEs across the data queue pairs, iodepth deep;
//   writers     check each filled sink block's CRC32C, write it at its offset
//               through the disk engine and grant the freed block straight
//               back, in batches;
//   monitor     logs progress and throughput once a second.
//
// An aborted or failed file leaves the channel unusable (usable() false):
// blocks may still be in flight, so the peers set up a new one rather than
// risk a late WRITE landing in a block granted for the next file.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"
#include "middleware/disk/block_io.h"
#include "middleware/disk/disk_file.h"
#include "middleware/integrity/ordered_digest.h"
#include "middleware/range_set.h"
#include "middleware/rdma/block_states.h"
#include "middleware/rdma/channel_resources.h"
#include "middleware/rdma/control_credits.h"
#include "middleware/rdma/file_specs.h"
#include "middleware/rdma/file_state.h"
#include "middleware/rdma/grant_ledger.h"
#include "middleware/transfer_progress.h"
#include "protocol/rdma_message.h"

namespace rftp::middleware::rdma {

struct ChannelStats {
    std::string device;
    unsigned queue_pairs = 0;
    std::size_t pinned_bytes = 0;
    BlockMemory::Pages pages = BlockMemory::Pages::small;  // of the block pool
    unsigned workers = 0;  // completion worker threads; 0: the dispatcher runs the handlers
};

class Channel {
public:
    // Starts the threads on fully connected resources. label prefixes log lines.
    static Result<std::unique_ptr<Channel>> start(ChannelResources resources, std::string label,
                                                  std::function<void(const Error &)> on_failure = {});
    ~Channel();
    Channel(const Channel &) = delete;
    Channel &operator=(const Channel &) = delete;

    // This side is the source: announces the file, then sends every block
    // the sink grants. Returns when the sink confirmed the whole range.
    Result<FileResult> send_file(const SendSpec &spec, TransferProgress &progress);
    // This side is the sink: waits for the source's announcement, grants
    // blocks and writes them. received tells which ranges arrived, also on failure.
    Result<FileResult> receive_file(const ReceiveSpec &spec, TransferProgress &progress, RangeSet &received);

    // Stops the current file on both sides (ABOR, a closing session). Any thread.
    void abort(const std::string &why);

    bool usable() const;
    ChannelStats stats() const;
    const ChannelParams &params() const { return res_.params; }

private:
    Channel(ChannelResources resources, std::string label, std::function<void(const Error &)> on_failure);

    void dispatcher_loop();
    void worker_loop(unsigned index);
    void reader_loop(unsigned index);
    void sender_loop();
    void writer_loop(unsigned index);
    void monitor_loop();

    void handle_completion(const ibv_wc &wc);
    int drop_stale(ibv_wc *wcs, int n) const;
    void handle_control_message(const uint8_t *bytes, std::size_t len);
    void handle_notice(unsigned qp, uint32_t slot, uint32_t length, std::optional<uint32_t> file_id, NoticeMode mode);
    void handle_send_done(unsigned qp, uint32_t block);
    void handle_cm_event();
    void went_idle_locked() {
        if (draining_) changed_.notify_all();
    }
    // One reader or writer thread's disk engine, and whether it sleeps in
    // its ring (then only wake() reaches it, not the condition variable).
    struct DiskThread {
        std::unique_ptr<disk::BlockIo> io;
        bool in_ring_wait = false;
    };
    void wake_disk_threads_locked(std::vector<DiskThread> &threads, std::condition_variable &cv);
    std::vector<iovec> pool_buffers() const;
    void log_disk_summary_locked(const char *role, uint32_t file_id, const disk::DiskFile *file) const;

    // All *_locked run with mutex_ held.
    void send_control_locked(wire::RdmaMessage msg);
    void flush_control_locked();
    void fail_locked(const Error &e, bool tell_peer);
    void hold_zero_block_locked();
    uint32_t zero_trailer_locked(uint32_t block, uint32_t len);
    void assign_blocks_locked();
    void make_ready_locked(uint32_t block);  // loaded (and sealed): to the sender
    void start_sink_locked(const wire::RdmaMessage &begin);
    void reserve_then_grant(std::unique_lock<std::mutex> &lock);
    void grant_locked();
    wire::Grant grant_of(uint32_t slot, uint64_t offset, uint32_t len) const;
    void lend_locked(uint32_t slot, uint64_t offset, uint32_t len, std::optional<uint32_t> contents_crc);
    void flush_grants_locked();
    void finish_sink_locked(std::optional<Error> error);
    void block_stored_locked(uint32_t slot);
    void checksum_failed_locked(uint32_t slot, uint32_t got, uint32_t want);
    // Hashes whatever now continues the file's digest and runs after_hash on
    // each such block, outside the lock (dropped and taken again); then, back
    // under it and while the file is still going, hands each to done.
    using PieceStep = std::function<void(const OrderedDigest::Piece &)>;
    void hash_in_order(std::unique_lock<std::mutex> &lock, OrderedDigest &digest, bool source, const PieceStep &after_hash,
                       const PieceStep &done);
    struct Posting {
        uint32_t block;
        wire::Grant grant;
        uint32_t memory;  // the block whose memory the WRITE reads: itself, or the file's zero block
    };
    Status post_chain(const std::vector<Posting> &chain, unsigned qp, uint32_t file_id);
    Result<FileResult> wait_file(std::unique_lock<std::mutex> &lock, bool source, uint64_t size,
                                 TransferProgress &progress);

    ChannelResources res_;
    std::string label_;
    std::function<void(const Error &)> on_failure_;

    mutable std::mutex mutex_;
    std::condition_variable changed_;     // file state, errors: whoever waits on a file
    std::condition_variable reader_cv_;
    std::condition_variable sender_cv_;
    std::condition_variable writer_cv_;
    std::condition_variable monitor_cv_;
    bool stopping_ = false;
    std::atomic<bool> stop_workers_{false};  // read by workers under their queue's lock only
    bool sender_busy_ = false;            // posting outside the lock
    unsigned disk_busy_ = 0;              // readers and writers with blocks in their hands or in flight
    // A file's caller waits for the readers, sender and writers to go idle; only
    // then do they signal changed_ (waking the caller per block costs dearly).
    bool draining_ = false;
    std::optional<Error> failed_;         // the channel is unusable from here on
    // failed_ or stopping_, readable without the lock: a daemon's event loop
    // asks (STAT) while a completion handler may hold the lock for a while.
    std::atomic<bool> unusable_{false};
    bool failure_reported_ = false;

    ControlCredits credits_{kControlDepth};
    std::deque<wire::RdmaMessage> control_queue_;
    std::vector<uint32_t> free_send_slots_;

    NoticeMode notice_mode_ = NoticeMode::unknown;
    std::vector<unsigned> in_flight_;     // per data queue pair
    unsigned next_qp_ = 0;
    uint32_t next_file_id_ = 0;

    // Which pool blocks hold nothing but zeros, so /dev/zero need not be read
    // into them again; any other use of a block clears its mark.
    std::vector<uint8_t> zeroed_;
    uint32_t zero_crc_length_ = UINT32_MAX, zero_crc_ = 0;  // CRC32C of that many zeros
    std::optional<SourceFile> source_;
    std::optional<SinkFile> sink_;
    std::optional<wire::RdmaMessage> early_begin_;  // a file_begin that came before receive_file

    struct WorkerQueue {
        std::mutex mutex;
        std::condition_variable cv;
        std::deque<ibv_wc> items;
    };
    std::vector<std::unique_ptr<WorkerQueue>> worker_queues_;
    std::vector<DiskThread> readers_, writers_;  // guarded by mutex_; destroyed before the pool
    UniqueFd wake_fd_;  // eventfd: tells the dispatcher to stop
    std::vector<std::thread> threads_;
};

}  // namespace rftp::middleware::rdma
