#include "protocol/partial_names.h"
#include "daemon/data/upload_flow.h"

#include <fcntl.h>
#include <unistd.h>

#include <optional>

#include "common/log.h"
#include "daemon/commands/command_support.h"
#include "middleware/disk/partial_file.h"
#include "middleware/disk/source_attribute.h"
#include "middleware/resume_journal.h"

namespace rftp::daemon {

TransferOutcome run_upload(const UserRoot &root, const UploadRequest &req, TransferJob &job,
                           const UploadReceiver &receive) {
    auto target = prepare_upload(root, req.path, req.rest, req.append);
    if (!target) {
        const Error &e = target.error();
        if (e.kind != ErrorKind::system) return failed_outcome(e, false, 0);
        if (e.code == -ENOENT) return {553, "Could not create file: no such directory.", 0, "failed"};
        FtpReply r = fs_error_reply(e);
        return {r.code, r.text, 0, "failed"};
    }
    // Blocks land out of order (framed streams, RDMA), and even one stream's
    // disk writes finish in any order: the complete prefix is journaled while
    // the upload runs, so that a crash of the daemon leaves a correct resume
    // point rather than a file whose size runs past a block never written.
    // With syncs on, its checkpoints also keep a resume point that survives
    // a power loss.
    if (!req.source) {
        middleware::forget_source(target->fd.get());
    } else if (Status recorded = middleware::record_source(target->fd.get(), *req.source); !recorded) {
        // A resume of this upload can then only trust the partial's size: an
        // operator should hear why, unless the file system has no such
        // attributes at all (then every upload there would say so).
        const bool unsupported = recorded.error().code == -ENOTSUP;
        (unsupported ? log::debug : log::warning)("event=source_not_recorded path=" + log::quote(req.path) +
                                                  " error=" + log::quote(recorded.error().message));
    }
    std::string journal_path = ftp::server_journal_name(target->partial);
    // The partial file and its journal are removed by name, and only while
    // the name still holds this upload's partial: if another session deleted
    // it meanwhile and began its own upload there, both names are that
    // upload's now, and its journal is the only record of which of its
    // bytes are good.
    middleware::PartialFile partial(target->fd.get(), [&](bool partial_too) {
        if (!held_file_is_there(root, *target)) return;
        if (partial_too) (void)root.remove_file(target->partial);
        (void)root.remove_file(journal_path);
    });
    if (!req.in_order) {
        auto jfd = root.open_file(journal_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC);
        if (!jfd) return {451, "Could not create resume journal: " + jfd.error().message + ".", 0, "failed"};
        middleware::Checkpoints checkpoints;
        if (req.sync) checkpoints.data_fd = target->fd.get();
        auto j = middleware::ResumeJournal::create(std::move(*jfd), target->start, checkpoints);
        if (!j) return {451, "Could not write resume journal: " + j.error().message + ".", 0, "failed"};
        partial.keep_journal(std::move(*j));
    } else if (target->start > 0) {
        // Written in order, an ASCII upload keeps no journal: its size is its
        // resume point. One it continues from would vouch, after a power
        // loss, for bytes this upload is now rewriting without a sync. The
        // prefix it continues from is synced first, as the journal's first
        // checkpoint of a resumed upload does, so that nothing but a synced
        // file then vouches for it; where that fails the journal stays.
        if (!req.sync || ::fdatasync(target->fd.get()) == 0) partial.forget_journal();
    }
    if (req.reserve_size) {
        // With the journal in place the partial may take its whole size at
        // once (its writes then never extend it); a plain stream's resume
        // point is the partial's size, so there it stays hidden.
        auto size = req.ranged ? middleware::ReservedSize::whole : middleware::ReservedSize::hidden;
        // No room (452) or too large (552): said before a byte moves, and a
        // new upload's empty partial file is not left behind. A resumed one
        // keeps its journal, which says where it really ends even if the
        // failed reservation left it longer.
        if (auto reserved = partial.reserve(target->start, *req.reserve_size, size); !reserved) {
            if (target->start == 0) partial.discard();
            return failed_outcome(reserved.error(), false, 0);
        }
    }

    middleware::RangeSet received(target->start);
    Status moved;
    {
        middleware::StopOnFailedCheckpoint stop(partial.journal(), job.progress.abort);
        moved = receive(*target, received, partial.prefix_recorder());
    }
    const uint64_t bytes = job.progress.bytes.load();
    // A failed sync: none of the partial can be trusted (partial_file.h), so
    // it goes, whether or not the rest arrived (a failed checkpoint stops
    // the transfer).
    auto discard_unsynced = [&](const Error &why) -> TransferOutcome {
        partial.discard();
        return {451, "Could not flush the upload to disk: " + why.message +
                         "; the partial file was discarded: send the whole file again.",
                bytes, "failed"};
    };
    if (Status checkpointed = partial.stop_checkpoints(); !checkpointed) {
        TransferOutcome discarded = discard_unsynced(checkpointed.error());
        // ABOR meanwhile: answered as an abort (426), with the partial gone all the same.
        return job.aborted() ? failed_outcome(Error{-ECANCELED, "aborted"}, true, bytes) : discarded;
    }
    // Blocks: the complete prefix is the file (all of it when everything
    // arrived), whatever was reserved or written past it.
    Status cut;
    if (req.ranged) cut = middleware::cut_to(target->fd.get(), received.contiguous_end());
    // A plain stream that ended short of what ALLO announced gives the rest back.
    else if (req.reserve_size) middleware::release_reservation(target->fd.get());
    // The journal stays whenever the upload does not complete: until the
    // file is synced, only its durable prefix survives a power loss.
    if (!moved) {
        if (moved.error().code == kDataConnectionNotOpened || moved.error().code == kDataTlsRefused)
            return open_failed_outcome(moved.error(), job.aborted());
        return failed_outcome(moved.error(), job.aborted(), bytes);
    }
    if (job.aborted()) return failed_outcome(Error{-ECANCELED, "aborted"}, true, bytes);
    // Longer than what arrived (reserved past it): never under the final name.
    if (!cut)
        return {451, "Could not " + cut.error().message + "; the partial file and its journal are kept for REST.", bytes,
                "failed"};
    // On stable storage before it has its final name: after a crash, a file
    // under that name is whole. A held upload stays a partial file, and its
    // SRCE record (an extended attribute, which fdatasync may leave out) is
    // what lets put -c --verify finish it after a crash without sending it
    // again: synced whole.
    using Sync = middleware::PartialFile::Sync;
    const Sync sync = !req.sync ? Sync::none : req.hold ? Sync::data_and_attributes : Sync::data;
    if (Status durable = partial.make_durable(sync); !durable) return discard_unsynced(durable.error());
    if (req.hold) {
        TransferOutcome held{226, "Transfer complete; held as " + target->partial + " until COMT.", bytes, "ok"};
        held.held = std::make_shared<UploadTarget>(std::move(*target));
        return held;
    }
    middleware::forget_source(target->fd.get());
    if (auto c = commit_upload(root, *target); !c)
        return {451, "Could not rename upload into place: " + c.error().message + ".", bytes, "failed"};
    return {226, "Transfer complete.", bytes, "ok"};
}

}  // namespace rftp::daemon
