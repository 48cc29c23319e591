// The source side of a channel: announce the file, take the sink's grants,
// have the disk readers fill a local block for each (disk_readers.cpp) and
// the sender thread write it into the granted remote block with a notice
// the sink can act on (sender_thread.cpp). Its state and lock are its own:
// the completion handlers reach it through on_grants, on_file_done and
// on_send_done; its lock comes before the control link's, never after.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "common/result.h"
#include "middleware/rdma/channel_core.h"
#include "middleware/rdma/disk_thread.h"
#include "middleware/rdma/file_specs.h"
#include "middleware/rdma/file_state.h"
#include "middleware/transfer_progress.h"
#include "protocol/rdma_message.h"

namespace rftp::middleware::rdma {

class SourcePipeline {
public:
    explicit SourcePipeline(ChannelCore &core) : core_(core) {}
    ~SourcePipeline() { stop(); }

    // The disk readers and the sender thread.
    Status start();
    // Wakes and joins them; a file still waiting ends. Idempotent.
    void stop();

    // Moves one file (the channel's gate lets one run at a time); returns
    // when the sink confirmed the whole range, or the file failed.
    Result<FileResult> send(const SendSpec &spec, TransferProgress &progress, uint32_t file_id);

    // From the control link's handler: the sink's grants and its file_done.
    // An error is the peer's protocol violation, for the channel to fail on
    // (the file may not be this pipeline's to end).
    Status on_grants(const wire::RdmaMessage &m);
    // Blocks the sink granted ahead for the file this side announces next
    // (docs/protocol.md, "Grants ahead"), or for the one it just announced.
    Status on_grants_ahead(const wire::RdmaMessage &m);
    Status on_file_done(const wire::RdmaMessage &m);
    // The peer announced a file of its own: its grants ahead lapse.
    void forget_grants_ahead();
    // A signalled WRITE (or its notice) completed: its whole chain is back.
    void on_send_done(unsigned qp, uint32_t last_block);
    // The channel failed with e: the current file, if any, ends with the channel's first error.
    void end_file(const Error &e);

    uint32_t current_file() const;  // 0 between files
    std::optional<ProgressSample> progress() const;

private:
    struct Posting {
        uint32_t block;
        wire::Grant grant;
        uint32_t memory;  // the block whose memory the WRITE reads: itself, or the file's zero block
    };

    void reader_loop(unsigned index);
    void sender_loop();
    Status post_chain(const std::vector<Posting> &chain, unsigned qp, uint32_t file_id);
    // Puts the CRC32C trailer after a block's data; returns whether the test
    // fault switch then damaged it.
    static bool seal_block(BlockPool &pool, uint32_t block, uint32_t len, uint32_t crc);

    // All *_locked run with mutex_ held.
    void fail_locked(const Error &e, bool tell_peer);
    void end_file_locked(const Error &e);
    void hold_zero_block_locked();
    uint32_t zero_trailer_locked(uint32_t block, uint32_t len);
    void assign_blocks_locked();
    Status use_grants_ahead_locked(const std::vector<wire::Grant> &ahead);
    void make_ready_locked(uint32_t block);  // loaded (and sealed): to the sender
    bool current_locked(uint32_t id) const { return file_ && file_->id == id && !file_->done; }
    void went_idle_locked() {
        if (draining_) changed_.notify_all();
    }

    ChannelCore &core_;
    mutable std::mutex mutex_;
    std::condition_variable changed_;  // the file's state: whoever waits on it
    std::condition_variable reader_cv_;
    std::condition_variable sender_cv_;
    bool stopping_ = false;
    bool sender_busy_ = false;  // posting outside the lock
    unsigned disk_busy_ = 0;    // readers with blocks in their hands or in flight
    // send() waits for the readers and the sender to go idle; only then do
    // they signal changed_ (waking it per block costs dearly).
    bool draining_ = false;

    NoticeMode notice_mode_ = NoticeMode::unknown;
    std::vector<unsigned> in_flight_;  // per data queue pair
    unsigned next_qp_ = 0;
    uint32_t zero_crc_length_ = UINT32_MAX, zero_crc_ = 0;  // CRC32C of that many zeros
    std::optional<SourceFile> file_;
    uint32_t announced_ = 0;  // the id of the last file this side announced
    // Grants ahead for file announced_ + 1: whole blocks, offsets counted from its start.
    std::vector<wire::Grant> ahead_;
    uint32_t ahead_for_ = 0;  // the file the last grant_ahead was for: one message a file

    std::vector<DiskThread> readers_;  // destroyed before the pool
    std::vector<std::thread> threads_;
};

}  // namespace rftp::middleware::rdma
