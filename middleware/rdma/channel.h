// One RDMA channel between two rftp peers: a control queue pair and N data
// queue pairs, set up once per FTP session (RADR) and reused by every file
// until the session ends. Either side can be the source (its blocks go out
// by RDMA WRITE into memory the sink granted) or the sink.
//
// Its parts (docs/middleware.md), each with its own state and lock:
//   gate        this class: one file at a time, sending or receiving;
//   dispatcher  waits on the completion channel and rdma_cm events, polls
//               completions in batches and hands each to a worker, which
//               runs the handlers below (completion_dispatcher.h);
//   control     the control queue pair's messages and credits (control_link.h);
//   source      the sink's grants, the disk readers that fill blocks and
//               seal each with its CRC32C, the sender thread that posts RDMA
//               WRITEs iodepth deep (source_pipeline.h);
//   sink        grants, block notices, the disk writers that check each
//               block and write it at its offset (sink_pipeline.h);
//   monitor     logs progress and throughput once a second.
// The block pool, the control link and the failure latch are shared
// (channel_core.h). Locks are taken in the order gate, pipeline, control
// link; never the other way round.
//
// An aborted or failed file leaves the channel unusable (usable() false):
// blocks may still be in flight, so the peers set up a new one rather than
// risk a late WRITE landing in a block granted for the next file.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "common/result.h"
#include "middleware/block_memory.h"
#include "middleware/range_set.h"
#include "middleware/rdma/channel_core.h"
#include "middleware/rdma/channel_resources.h"
#include "middleware/rdma/completion_dispatcher.h"
#include "middleware/rdma/file_specs.h"
#include "middleware/rdma/sink_pipeline.h"
#include "middleware/rdma/source_pipeline.h"
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

    bool usable() const { return core_.usable(); }
    ChannelStats stats() const;
    const ChannelParams &params() const { return core_.params(); }

private:
    Channel(ChannelResources resources, std::string label, std::function<void(const Error &)> on_failure);

    void handle_completion(const ibv_wc &wc);
    void handle_data_receive(const ibv_wc &wc);
    void handle_control_message(const uint8_t *bytes, std::size_t len);
    void handle_file_begin(const wire::RdmaMessage &begin);
    // A failure of the whole channel; no lock held.
    void fail_channel(const Error &e, bool tell_peer);
    void monitor_loop();

    enum class Role { idle, sending, receiving };
    // The gate's checks before a file; gate_mutex_ held.
    Status may_start_locked();

    ChannelCore core_;
    SourcePipeline source_;
    SinkPipeline sink_;

    std::mutex gate_mutex_;  // first in the lock order
    Role role_ = Role::idle;
    uint32_t next_file_id_ = 0;
    std::optional<wire::RdmaMessage> early_begin_;  // a file_begin that came before receive_file

    std::mutex monitor_mutex_;
    std::condition_variable monitor_cv_;
    bool monitor_stopping_ = false;
    std::thread monitor_;
    std::unique_ptr<CompletionDispatcher> dispatcher_;  // stopped first: no handler outlives the parts
};

}  // namespace rftp::middleware::rdma
