// Commands on names in the user's tree: PWD, CWD, CDUP, MKD, RMD, DELE,
// RNFR/RNTO, SIZE, MDTM, MFMT, MLST, HASH. Every path goes through
// resolve_or_reply, then through UserRoot, which never leaves the root.
#include <fcntl.h>
#include <sys/stat.h>

#include "common/log.h"
#include "daemon/commands/command_support.h"
#include "daemon/commands/command_table.h"
#include "daemon/data/upload_target.h"
#include "daemon/listing/list_format.h"
#include "daemon/session/session.h"
#include "middleware/disk/source_attribute.h"
#include "middleware/integrity/file_digest.h"
#include "protocol/partial_names.h"
#include "protocol/source_identity.h"
#include "protocol/time_val.h"

namespace rftp::daemon {
namespace {

std::string change_line(const Session &s, const char *event, const std::string &path) {
    return s.log_prefix() + " event=" + event + " path=" + log::quote(path);
}

// At notice, as a transfer's end is: the audit trail (who changed what)
// stays when log.level is raised to notice to drop connect and reply chatter.
void log_change(Session &s, const char *event, const std::string &path) { log::notice(change_line(s, event, path)); }

// A partial upload's source, for a resume to compare with its own file:
// "X.rftp-source=<token>;" as SRCE named it, and nothing where the file
// system keeps no user extended attributes (no record can be there). Else
// "X.rftp-source=none;": it records none, something SRCE could not have
// set, or it could not be read; a resume then sends the whole file.
std::string recorded_source_fact(Session &s, const std::string &vpath, const struct stat &st) {
    if (!S_ISREG(st.st_mode) || !vpath.ends_with(ftp::kPartialSuffix)) return {};
    const std::string none = "X.rftp-source=" + std::string(ftp::kNoSource) + ";";
    auto fd = s.state.root->open_file(vpath, O_RDONLY | O_NONBLOCK);
    if (!fd) return none;
    auto source = middleware::recorded_source(fd->get());
    if (!source) return source.error().code == -ENOTSUP ? std::string() : none;
    // Only what SRCE could have set goes into the reply line.
    if (!*source || !ftp::valid_source_token(**source)) return none;
    return "X.rftp-source=" + **source + ";";
}

// The held upload's own name, but no longer its file (deleted, and another
// upload begun there): that file is neither this session's to take away
// (DELE) nor the one whose digest it asks for (HASH). 550, and the held
// upload, gone from its name, is let go.
bool refused_as_held_file_gone(Session &s, const std::string &vpath) {
    const auto &held = s.state.held_upload;
    if (!held || held->partial != vpath || held_file_is_there(*s.state.root, *held)) return false;
    s.state.held_upload.reset();
    s.reply(550, "The upload held as " + vpath + " is no longer there; another file has its name.");
    return true;
}

// Unlinking a file, or renaming another over it, frees its blocks inside
// the call (ext4 on the bench machine's disk: 0.8 s for 6 GB written), so
// these run off the loop and the other sessions go on meanwhile; this
// session's next commands wait their turn. The change is logged (logged, a
// change_line) where it is made: then, which runs on the loop, does not run
// once the client has gone.
void change_off_loop(Session &s, std::string logged, std::function<Status()> change,
                     std::function<void(const Status &)> then) {
    auto result = std::make_shared<Status>(fail_msg("not run"));
    s.run_blocking_change(
        [result, logged = std::move(logged), change = std::move(change)] {
            *result = change();
            if (*result) log::notice(logged);
        },
        [result, then = std::move(then)] { then(*result); });
}

// rftpd's own names for an upload's partial file and journal: another entry
// there (a file renamed in, a directory) would swap or block what that
// upload commits. Says 553 and returns true for those.
bool refused_as_bookkeeping(Session &s, const std::string &vpath) {
    if (!ftp::is_transfer_bookkeeping(vpath)) return false;
    s.reply(553, std::string("File name not allowed: ") + kUploadBookkeepingRule + ".");
    return true;
}

}  // namespace

void cmd_pwd(Session &s, const std::string &) { s.reply(257, quote_257(s.state.cwd) + " is the current directory."); }

void cmd_cwd(Session &s, const std::string &arg) {
    auto vpath = resolve_or_reply(s, arg);
    if (!vpath) return;
    auto dir = s.state.root->open_directory(*vpath);
    if (!dir) return reply_fs_error(s, dir.error());
    s.state.cwd = *vpath;
    s.reply(250, "Directory successfully changed.");
}

void cmd_cdup(Session &s, const std::string &) { cmd_cwd(s, ".."); }

void cmd_mkd(Session &s, const std::string &arg) {
    auto vpath = resolve_or_reply(s, arg);
    if (!vpath) return;
    if (refused_as_bookkeeping(s, *vpath)) return;
    if (auto r = s.state.root->make_directory(*vpath); !r) return reply_fs_error(s, r.error());
    log_change(s, "mkdir", *vpath);
    s.reply(257, quote_257(*vpath) + " created.");
}

void cmd_rmd(Session &s, const std::string &arg) {
    auto vpath = resolve_or_reply(s, arg);
    if (!vpath) return;
    if (*vpath == "/") return s.reply(550, "Permission denied: that is your root directory.");
    if (auto r = s.state.root->remove_directory(*vpath); !r) return reply_fs_error(s, r.error());
    log_change(s, "rmdir", *vpath);
    s.reply(250, "Remove directory operation successful.");
}

void cmd_dele(Session &s, const std::string &arg) {
    auto vpath = resolve_or_reply(s, arg);
    if (!vpath) return;
    if (refused_as_held_file_gone(s, *vpath)) return;
    auto root = s.state.root;
    std::string path = *vpath;
    // A held upload deleted (its digest was wrong): nothing left to put in
    // place. Its descriptor closes off the loop too: the last close of an
    // unlinked file is what frees its blocks. Given back if the DELE fails.
    auto held = std::make_shared<std::shared_ptr<UploadTarget>>();
    if (s.state.held_upload && s.state.held_upload->partial == path) *held = std::move(s.state.held_upload);
    change_off_loop(
        s, change_line(s, "delete", path),
        [root, path, held]() -> Status {
            if (auto r = root->remove_file(path); !r) return r;
            // A partial upload's journal goes with it: it is a hidden name
            // the user would not think to delete, and left alone it keeps
            // the directory from being removed.
            if (path.ends_with(ftp::kPartialSuffix)) (void)root->remove_file(ftp::server_journal_name(path));
            held->reset();
            return {};
        },
        [&s, path, held](const Status &removed) {
            if (!removed) {
                if (*held) s.state.held_upload = std::move(*held);
                return reply_fs_error(s, removed.error());
            }
            s.reply(250, "Delete operation successful.");
        });
}

// COMT <file> (rftpd's own, docs/protocol.md "Uploads"): puts the upload
// HOLD kept aside for file in place, as an upload without HOLD would have
// been at its end; the rename is checked against the held file itself, so a
// partial deleted or replaced meanwhile is never renamed in its stead.
void cmd_comt(Session &s, const std::string &arg) {
    auto vpath = resolve_or_reply(s, arg);
    if (!vpath) return;
    std::shared_ptr<UploadTarget> held = s.state.held_upload;
    if (!held || held->final != *vpath)
        return s.reply(503, "No upload of " + *vpath + " is held in this session: send HOLD, then STOR or RSTR.");
    auto root = s.state.root;
    std::string path = *vpath;
    change_off_loop(
        s, change_line(s, "commit", path),
        [root, held]() -> Status {
            if (auto c = commit_upload(*root, *held); !c) return c;
            middleware::forget_source(held->fd.get());  // the final file keeps no trace of the bookkeeping
            return {};
        },
        [&s, held, path](const Status &committed) {
            // Still held, with its record, when the rename fails (a COMT may
            // follow once the cause is mended, or put -c finishes it).
            if (!committed) return s.reply(451, "Could not put the upload in place: " + committed.error().message + ".");
            if (s.state.held_upload == held) s.state.held_upload.reset();
            s.reply(250, "Upload of " + path + " put in place.");
        });
}

void cmd_rnfr(Session &s, const std::string &arg) {
    auto vpath = resolve_or_reply(s, arg);
    if (!vpath) return;
    // Renamed away, an upload's partial file would be under a final name
    // while incomplete (perhaps still being written); its journal would no
    // longer say what of it is good.
    if (refused_as_bookkeeping(s, *vpath)) return;
    if (*vpath == "/") return s.reply(550, "Permission denied: that is your root directory.");
    // The entry itself: renaming a symlink moves the link, wherever it points.
    if (auto st = s.state.root->stat_entry(*vpath); !st) return reply_fs_error(s, st.error());
    if (!s.state.root->writable()) return s.reply(550, "Permission denied.");
    s.state.rename_from = *vpath;
    s.reply(350, "Ready for RNTO.");
}

void cmd_rnto(Session &s, const std::string &arg) {
    if (s.state.rename_from.empty()) return s.reply(503, "RNFR required first.");
    std::string from = std::move(s.state.rename_from);
    s.state.rename_from.clear();
    auto vpath = resolve_or_reply(s, arg);
    if (!vpath) return;
    if (refused_as_bookkeeping(s, *vpath)) return;
    auto root = s.state.root;
    std::string to = *vpath;
    change_off_loop(
        s, change_line(s, "rename", from + " -> " + to), [root, from, to] { return root->rename(from, to); },
        [&s](const Status &renamed) {
            if (!renamed) return reply_fs_error(s, renamed.error());
            s.reply(250, "Rename successful.");
        });
}

void cmd_size(Session &s, const std::string &arg) {
    auto vpath = resolve_or_reply(s, arg);
    if (!vpath) return;
    // The size of a partial upload is where a client resumes: after a crash
    // mid-way through a parallel upload, cut it back to what its journal
    // vouches for first (docs/protocol.md, "Uploads").
    if (vpath->ends_with(ftp::kPartialSuffix) && s.state.root->writable())
        if (auto r = repair_partial_upload(*s.state.root, *vpath); !r) return reply_fs_error(s, r.error());
    auto st = s.state.root->stat(*vpath);
    if (!st) return reply_fs_error(s, st.error());
    if (!S_ISREG(st->st_mode)) return s.reply(550, "Could not get file size: not a plain file.");
    s.reply(213, std::to_string(st->st_size));
}

void cmd_mdtm(Session &s, const std::string &arg) {
    auto vpath = resolve_or_reply(s, arg);
    if (!vpath) return;
    auto st = s.state.root->stat(*vpath);
    if (!st) return reply_fs_error(s, st.error());
    if (!S_ISREG(st->st_mode)) return s.reply(550, "Could not get modification time: not a plain file.");
    s.reply(213, ftp::format_time_val(st->st_mtime));
}

// MFMT <time-val> <path> (draft-somers-ftp-mfxx): rftp sync sets each
// copied file's time to its source's, so that the next run can compare them.
void cmd_mfmt(Session &s, const std::string &arg) {
    const auto space = arg.find(' ');
    const auto when = ftp::parse_time_val(std::string_view(arg).substr(0, space));
    if (space == std::string::npos || !when)
        return s.reply(501, "Syntax: MFMT YYYYMMDDHHMMSS[.sss] <file>, the time in UTC.");
    auto vpath = resolve_or_reply(s, arg.substr(space + 1));
    if (!vpath) return;
    if (refused_as_bookkeeping(s, *vpath)) return;
    auto root = s.state.root;
    std::string path = *vpath;
    const struct timespec mtime{static_cast<std::time_t>(when->seconds), static_cast<long>(when->nanos)};
    const std::string time_val(arg.substr(0, space));
    change_off_loop(
        s, change_line(s, "set_time", path) + " modify=" + time_val,
        [root, path, mtime] { return root->set_modification_time(path, mtime); },
        [&s, path, time_val](const Status &set) {
            if (!set) return reply_fs_error(s, set.error());
            s.reply(213, "Modify=" + time_val + "; " + path);
        });
}

void cmd_mlst(Session &s, const std::string &arg) {
    auto vpath = resolve_or_reply(s, arg.empty() ? "." : arg);
    if (!vpath) return;
    auto st = s.state.root->stat(*vpath);
    if (!st) return reply_fs_error(s, st.error());
    s.reply(250, "Listing " + *vpath + "\n " +
                     format_mlsx_line(*st, *vpath, s.state.root->writable(), false, recorded_source_fact(s, *vpath, *st)) +
                     "\nEnd");
}

void cmd_hash(Session &s, const std::string &arg) {
    auto vpath = resolve_or_reply(s, arg);
    if (!vpath) return;
    if (refused_as_held_file_gone(s, *vpath)) return;
    auto fd = s.state.root->open_file(*vpath, O_RDONLY);
    if (!fd) return reply_fs_error(s, fd.error());
    struct stat st {};
    if (::fstat(fd->get(), &st) != 0 || !S_ISREG(st.st_mode)) return s.reply(550, "Not a plain file.");
    if (s.state.last_digest && s.state.last_digest->matches(st)) {
        log::debug(s.log_prefix() + " event=hash path=" + log::quote(*vpath) + " from=transfer");
        return s.reply(213, "SHA-256 0-" + std::to_string(st.st_size) + " " + s.state.last_digest->sha256 + " " + *vpath);
    }
    log::debug(s.log_prefix() + " event=hash path=" + log::quote(*vpath) + " from=file");
    auto file = std::make_shared<UniqueFd>(std::move(*fd));
    auto digest = std::make_shared<Result<std::string>>(fail_msg("not run"));
    uint64_t size = static_cast<uint64_t>(st.st_size);
    std::string path = *vpath;
    auto progress = s.cancellable_work();
    s.run_blocking_work([file, digest, size, progress] { *digest = middleware::sha256_of_file(file->get(), size, progress.get()); },
                        [&s, digest, size, path] {
                            if (!*digest) return s.reply(451, "Digest failed: " + digest->error().message + ".");
                            s.reply(213, "SHA-256 0-" + std::to_string(size) + " " + **digest + " " + path);
                        });
}

}  // namespace rftp::daemon
