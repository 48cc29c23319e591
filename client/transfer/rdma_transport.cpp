#include "client/transfer/rdma_transport.h"

#include <sys/socket.h>

#include <algorithm>

#include "client/transfer/transfer_control.h"
#include "client/interrupt.h"
#include "common/byte_size.h"
#include "common/log.h"
#include "middleware/tls/token_binding.h"
#include "middleware/rdma/cm_setup.h"
#include "middleware/rdma/device_check.h"
#include "protocol/rdma_setup.h"

namespace rftp::client {
namespace rdma = middleware::rdma;

Outcome<rdma::Channel *> rdma_channel_for(Session &session, const Options &o, FileReport &report) {
    if (o.transport == Transport::tcp) return nullptr;
    // A transfer sent ahead and then not wanted was ended with ABOR, which
    // closes the channel at rftpd: set up a new one.
    if (session.rdma && session.control.take_abandoned_transfer()) session.rdma.reset();
    if (session.rdma && session.rdma->usable()) return session.rdma.get();
    session.rdma.reset();
    if (session.rdma_declined) return nullptr;
    // Said once per session, in one line; on a machine without any RDMA
    // device that is the normal case, so only -v says it.
    bool have_device = !rdma::device_names().empty();
    auto decline = [&](const std::string &why) -> Outcome<rdma::Channel *> {
        if (o.transport == Transport::rdma) return fail_as(ExitCode::connection, "RDMA unavailable: " + why);
        session.rdma_declined = true;
        log::write(have_device ? log::Level::notice : log::Level::info, "rftp: " + why + "; using TCP");
        report.notes.push_back(why + "; using TCP");
        return nullptr;
    };
    if (!have_device) return decline("no RDMA device on this machine");
    if (!session.features.rdma) return decline("server does not offer RDMA");

    // Checked before asking the server for anything: pinning the pool needs it.
    if (auto problem = rdma::memlock_problem(o.rdma_pool + (1u << 20))) return decline(*problem);
    unsigned streams = std::clamp(o.parallel, 1u, std::max(1u, session.features.rdma_max));
    auto radr = session.control.command(
        ftp::format_rdma_request({.streams = streams, .block_size = o.rdma_block_size, .depth = o.iodepth,
                                  .ahead = session.features.rdma_ahead}));
    if (!radr) return std::unexpected(radr.error());
    if (!radr->positive_completion()) return decline("server refused RDMA (" + describe(*radr) + ")");
    auto grant = ftp::parse_rdma_grant(radr->text());
    if (!grant || grant->block_size < 4096)
        return fail_as(ExitCode::connection, "unreadable RADR reply: " + describe(*radr));
    // Nor a deeper queue than asked: the block decides how much memory the
    // pool pins here.
    if (grant_exceeds_request(streams, o.rdma_block_size, grant->streams, grant->block_size) || grant->depth > o.iodepth)
        return fail_as(ExitCode::remote_file, "RADR: the server granted more than was asked ('" + radr->text() + "' for " +
                                                  std::to_string(streams) + " streams of " +
                                                  std::to_string(o.rdma_block_size) + " bytes at depth " +
                                                  std::to_string(o.iodepth) + ")");

    rdma::ChannelParams p;
    p.streams = grant->streams;
    p.block_size = grant->block_size;
    p.iodepth = grant->depth;
    p.blocks = static_cast<unsigned>(std::clamp<uint64_t>(o.rdma_pool / grant->block_size, 2, 1024));
    p.stall_timeout_s = static_cast<unsigned>(o.timeout_seconds);
    p.workers = rdma::default_workers();
    p.grant_ahead = session.features.rdma_ahead;
    auto give_up = [&](const std::string &why) -> Outcome<rdma::Channel *> {
        // The server waits for our queue pairs; tell it to stop waiting.
        (void)session.control.command("ABOR");
        return decline(why);
    };
    sockaddr_storage server{};
    socklen_t len = sizeof server;
    if (::getpeername(session.control.fd(), reinterpret_cast<sockaddr *>(&server), &len) != 0)
        return give_up("cannot tell the server's address");
    auto resources = rdma::ChannelResources::allocate(p);
    if (!resources) return give_up(resources.error().message);
    // Under TLS the queue pairs show the token bound to the TLS session.
    wire::ChannelTokens tokens(grant->token);
    if (SSL *tls = session.control.tls()) {
        auto bound = middleware::tls::bind_tokens(tls, grant->token, p.queue_pairs());
        if (!bound) return give_up(bound.error().message);
        tokens = std::move(*bound);
    }
    if (auto ok = rdma::connect_channel(*resources, server, grant->port, tokens,
                                        static_cast<unsigned>(o.timeout_seconds));
        !ok)
        return give_up("RDMA connection to " + rdma::address_string(server) + " failed: " + ok.error().message);
    auto channel = rdma::Channel::start(std::move(*resources), "rftp",
                                        [](const Error &e) { log::debug("rftp: RDMA channel closed: " + e.message); });
    if (!channel) return give_up(channel.error().message);
    session.rdma = std::move(*channel);
    // A transfer sent ahead and ended with ABOR while this channel was set
    // up (its RADR read their replies) concerned the channel it replaced.
    if (session.control.take_abandoned_transfer()) session.kept_data.clear();
    auto st = session.rdma->stats();
    log::info("RDMA channel on " + st.device + ": " + std::to_string(p.streams) + " queue pair(s), block " +
              human_bytes(p.block_size) + ", iodepth " + std::to_string(p.iodepth));
    return session.rdma.get();
}

RdmaTransport::RdmaTransport(rdma::Channel &channel, Move move) : channel_(channel), move_(std::move(move)) {}

Status RdmaTransport::move(middleware::TransferProgress &progress) {
    moved_ = move_(channel_, progress);
    if (!moved_) return fail(moved_.error());
    return {};
}

void RdmaTransport::finish(FileReport &report) {
    report.transport = "rdma";
    report.streams = channel_.params().streams;
    if (!moved_) return;
    report.notice = rdma::to_string(moved_->notice);
    report.transfer_seconds = moved_->seconds;
    if (moved_->sha256) report.sha256 = moved_->sha256;
}

// Blocks may still be in flight: this channel is done for.
void RdmaTransport::interrupted(Session &session) { session.rdma.reset(); }

std::unexpected<Failure> RdmaTransport::failed(Session &session, const Error &error, const std::string &what) {
    session.rdma.reset();  // blocks may still be in flight
    auto reply = session.control.read_reply();
    // Unanswered, the server's reply may still come and be taken for the next command's.
    if (!reply) session.out_of_step = true;
    std::string server = reply ? " (server: " + describe(*reply) + ")" : "";
    // A failure of this side's own (its disk, a changed file) keeps its
    // code. Otherwise the channel only knows it broke, or that the server
    // broke it off, and the server's reply says why, as over TCP: 452 its
    // disk is full, 451 its disk failed, 421 it is being stopped or restarted.
    ExitCode code = exit_for_data_error(error);
    if (reply && reply->code >= 400 && code == ExitCode::transfer) code = classify_refusal(*reply);
    return fail_as(code, what + ": " + error.message + server);
}

RdmaTransport rdma_upload(rdma::Channel &channel, const rdma::SendSpec &spec) {
    return RdmaTransport(channel, [spec](rdma::Channel &c, middleware::TransferProgress &progress) {
        return c.send_file(spec, progress);
    });
}

RdmaTransport rdma_download(rdma::Channel &channel, rdma::ReceiveSpec spec, middleware::RangeSet &received,
                            middleware::ResumeJournal *journal) {
    return RdmaTransport(channel, [spec, &received, journal](rdma::Channel &c, middleware::TransferProgress &progress) {
        middleware::StopOnFailedCheckpoint stop(journal, progress.abort);
        return c.receive_file(spec, progress, received);
    });
}

}  // namespace rftp::client
