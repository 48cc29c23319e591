// A file on its way in, on either side: rftp's download and rftpd's upload
// both write into a partial file beside the final name, and both take it
// through the same life before it may have that name.
//
//   keep_journal      blocks land out of order, so a journal beside it
//                     records the complete prefix as it grows, and its
//                     checkpoints sync the file every few seconds
//                     (resume_journal.h);
//   reserve           the rest of the file is reserved before a byte moves
//                     (preallocate.h);
//   stop_checkpoints  the transfer ended, however it ended;
//   make_durable      whole: synced, then the journal goes, since the size
//                     says it all from then on.
//
// A sync that fails, at a checkpoint or at the end, is reported by the
// kernel only once: a later sync of the same bytes would say all is well,
// and a resume would trust them. None of the partial file can be trusted
// then, and the caller discards it with its journal.
//
// The caller opens the files, renames the partial file into place, and says
// how a name is removed: through the user's root on rftpd, by path in rftp.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "common/result.h"
#include "middleware/disk/preallocate.h"
#include "middleware/resume_journal.h"

namespace rftp::middleware {

class PartialFile {
public:
    // Removes the journal's name, and the partial file's too when asked,
    // partial file first: a journal left without its file is harmless, a
    // partial file left without its journal would be trusted by its size.
    // Both go in one call, so a side that first checks the names are still
    // this transfer's (rftpd) checks once for both.
    using Removal = std::function<void(bool partial_too)>;
    // How make_durable syncs: data (fdatasync), data and attributes (fsync:
    // a held upload's source record is an extended attribute), or not at
    // all (the operator turned syncs off).
    enum class Sync { none, data, data_and_attributes };

    // An empty removal: there are no names to remove (a device, stdout).
    PartialFile(int fd, Removal removal) : fd_(fd), removal_(std::move(removal)) {}

    // From here the journal vouches for the file's complete prefix.
    void keep_journal(std::unique_ptr<ResumeJournal> journal) { journal_ = std::move(journal); }
    ResumeJournal *journal() const { return journal_.get(); }
    // What a transfer calls as the complete prefix grows.
    std::function<void(uint64_t)> prefix_recorder();

    // Reserves [start, end); see preallocate().
    Status reserve(uint64_t start, uint64_t end, ReservedSize size) const;

    // Stops the journal's checkpoints. Fails when one of their syncs
    // failed: discard() then.
    Status stop_checkpoints();
    // Syncs the whole file, then removes its journal. Fails when the sync
    // fails: discard() then.
    Status make_durable(Sync sync);
    // Removes the journal's name (a file whose size is its resume point).
    void forget_journal();
    // Removes the partial file and its journal.
    void discard();

private:
    int fd_;
    Removal removal_;
    std::unique_ptr<ResumeJournal> journal_;
};

}  // namespace rftp::middleware
