#include "daemon/data/upload_target.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "middleware/resume_journal.h"
#include "protocol/partial_names.h"

namespace rftp::daemon {
namespace {

// Copies the first count bytes of from into to, in the kernel (a reflink on
// file systems that have them).
Status copy_prefix(int from, int to, uint64_t count) {
    loff_t in = 0, out = 0;
    while (static_cast<uint64_t>(in) < count) {
        ssize_t n = ::copy_file_range(from, &in, to, &out, count - static_cast<uint64_t>(in), 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            return fail_errno("copy existing file into partial upload");
        }
        if (n == 0) return fail_msg("existing file shrank while resuming");
    }
    return {};
}

// With the partial file locked: cut it to what its journal vouches for, if it has one.
Status apply_journal(const UserRoot &root, int partial_fd, const std::string &partial_vpath) {
    std::string journal = ftp::server_journal_name(partial_vpath);
    auto jfd = root.open_file(journal, O_RDONLY | O_CLOEXEC);
    if (!jfd) return jfd.error().code == -ENOENT ? Status{} : fail(jfd.error());
    uint64_t good = middleware::read_resume_journal(jfd->get());
    struct stat st {};
    if (::fstat(partial_fd, &st) != 0) return fail_errno("stat partial upload");
    if (static_cast<uint64_t>(st.st_size) > good && ::ftruncate(partial_fd, static_cast<off_t>(good)) != 0)
        return fail_errno("truncate partial upload to its journal");
    // The journal stays: the bytes it vouches for may not be on the disk
    // yet, and after a power loss only its durable prefix counts. The next
    // upload of the file replaces it (a resumed one syncs its start first).
    return {};
}

// Whether fd is still the file at vpath: between opening a partial file and
// locking it, another session may have renamed it into place (and the name
// may now hold a new one).
bool still_at(const UserRoot &root, int fd, const std::string &vpath) {
    struct stat held {};
    auto there = root.stat_entry(vpath);
    return ::fstat(fd, &held) == 0 && there && there->st_dev == held.st_dev && there->st_ino == held.st_ino;
}

}  // namespace

Status repair_partial_upload(const UserRoot &root, const std::string &partial_vpath) {
    auto fd = root.open_file(partial_vpath, O_WRONLY | O_CLOEXEC);
    if (!fd) return fd.error().code == -ENOENT ? Status{} : fail(fd.error());
    if (::flock(fd->get(), LOCK_EX | LOCK_NB) != 0) return {};  // being uploaded: its journal is live
    return apply_journal(root, fd->get(), partial_vpath);
}

Result<UploadTarget> prepare_upload(const UserRoot &root, const std::string &vpath, uint64_t rest, bool append) {
    if (!root.writable()) return fail(Error{-EACCES, "read-only account"});
    if (vpath == "/") return fail(Error{-EISDIR, "cannot upload onto the root directory"});
    if (ftp::is_transfer_bookkeeping(vpath))
        return fail(Error{-EINVAL, kUploadBookkeepingRule, ErrorKind::reserved_name});
    UploadTarget t;
    t.final = vpath;
    t.partial = ftp::server_partial_name(vpath);

    // Only "no such file" means absent. Anything else (a link leading out of
    // the root, a loop, no permission) refuses the upload rather than
    // replacing what is there.
    auto partial_st = root.stat(t.partial);
    if (!partial_st && partial_st.error().code != -ENOENT) return fail(partial_st.error());
    auto final_st = root.stat(t.final);
    // An empty partial file holds nothing to continue: appending then goes
    // after the final file, not over it.
    if (append && partial_st && partial_st->st_size == 0) partial_st = std::unexpected(Error{-ENOENT, "empty"});
    // A new upload replaces whatever is at the final name by rename, link or
    // not, and never opens it; only appending or resuming from it reads it.
    bool reads_final = append || (rest > 0 && !partial_st);
    if (reads_final && !final_st && final_st.error().code != -ENOENT) return fail(final_st.error());
    if (final_st && !S_ISREG(final_st->st_mode)) return fail(Error{-EISDIR, "target is not a plain file"});
    if (partial_st && !S_ISREG(partial_st->st_mode)) return fail(Error{-EISDIR, "partial upload is not a plain file"});

    uint64_t start = rest;
    if (append) start = partial_st ? partial_st->st_size : final_st ? final_st->st_size : 0;

    bool continue_partial = start > 0 && partial_st;
    // A restart from the final file is checked before anything is created:
    // a refused REST leaves no partial file behind.
    if (start > 0 && !continue_partial) {
        if (!final_st) return fail(Error{-ERANGE, "nothing to resume: no partial upload and no file", ErrorKind::bad_offset});
        if (static_cast<uint64_t>(final_st->st_size) < start)
            return fail(Error{-ERANGE, "restart offset beyond the end of the file", ErrorKind::bad_offset});
    }
    auto fd = root.open_file(t.partial, continue_partial ? O_WRONLY | O_CLOEXEC : O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (!fd) return fail(fd.error());
    // Two sessions writing one partial file would interleave garbage.
    if (::flock(fd->get(), LOCK_EX | LOCK_NB) != 0 || !still_at(root, fd->get(), t.partial))
        return fail(Error{-EBUSY, "another session is uploading this file", ErrorKind::busy});
    if (continue_partial) {
        if (auto s = apply_journal(root, fd->get(), t.partial); !s) return fail(s.error());
        if (::fstat(fd->get(), &*partial_st) != 0) return fail_errno("stat partial upload");
        // Appending continues after what the journal vouches for, not after
        // the size a daemon that died mid-upload left (blocks beyond holes).
        if (append) start = static_cast<uint64_t>(partial_st->st_size);
        // Cut to nothing (a power loss before any checkpoint): it holds
        // nothing to continue, as an empty one above. Continuing "from 0"
        // would rename the appended bytes alone over the file.
        if (append && start == 0) {
            continue_partial = false;
            start = final_st ? static_cast<uint64_t>(final_st->st_size) : 0;
        }
        if (continue_partial && static_cast<uint64_t>(partial_st->st_size) < start)
            return fail(Error{-ERANGE,
                              "restart offset beyond the " + std::to_string(partial_st->st_size) + " bytes received so far",
                              ErrorKind::bad_offset});
    }
    if (!continue_partial) {
        // Emptied before its stale journal goes: a daemon that dies in
        // between leaves a short partial file, never one whose holes no
        // journal accounts for any more.
        if (::ftruncate(fd->get(), 0) != 0) return fail_errno("truncate partial upload");
        if (auto s = root.remove_file(ftp::server_journal_name(t.partial)); !s && s.error().code != -ENOENT)
            return fail(s.error());  // a stale journal must not outlive the file it described
        if (start > 0) {
            auto existing = root.open_file(t.final, O_RDONLY | O_CLOEXEC);
            if (!existing) return fail(existing.error());
            if (auto s = copy_prefix(existing->get(), fd->get(), start); !s) return fail(s.error());
        }
    }
    // Whatever lay beyond the restart point is stale.
    if (::ftruncate(fd->get(), static_cast<off_t>(start)) != 0) return fail_errno("truncate partial upload");
    t.fd = std::move(*fd);
    t.start = start;
    return t;
}

bool held_file_is_there(const UserRoot &root, const UploadTarget &target) {
    return still_at(root, target.fd.get(), target.partial);
}

Status commit_upload(const UserRoot &root, const UploadTarget &target) {
    // Only this upload's own file goes into place (a client may have renamed
    // or deleted the partial file meanwhile).
    if (!still_at(root, target.fd.get(), target.partial))
        return fail_msg("the partial file " + target.partial + " was moved or replaced during the upload", -ESTALE);
    return root.rename(target.partial, target.final);
}

}  // namespace rftp::daemon
