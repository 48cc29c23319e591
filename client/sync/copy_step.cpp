#include "client/sync/copy_step.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "client/batch/remote_tree.h"
#include "client/commands/files_ahead.h"
#include "client/commands/get_one_file.h"
#include "client/commands/put_one_file.h"
#include "client/sync/backup.h"
#include "client/sync/file_times.h"
#include "protocol/time_val.h"

namespace rftp::client {

OutcomeStatus make_directories(Session &session, bool upload, const std::string &top, bool top_exists,
                               const std::vector<std::string> &directories) {
    std::vector<std::string> wanted;
    if (!top_exists) {
        // The top and any missing parents of it, outermost first.
        std::filesystem::path so_far;
        for (const auto &part : std::filesystem::path(top)) {
            so_far /= part;
            if (part != "/" && !part.empty()) wanted.push_back(so_far.generic_string());
        }
    }
    for (const auto &dir : directories) wanted.push_back(path_under(top, dir));
    for (const auto &dir : wanted) {
        if (upload) {
            if (auto made = ensure_remote_directory(session, dir); !made) return made;
        } else if (::mkdir(dir.c_str(), 0777) != 0) {
            if (errno != EEXIST)
                return fail_as(ExitCode::local_file, "cannot make directory " + dir + ": " + std::strerror(errno));
            // A symbolic link there (the walk left it out) would take the
            // copies somewhere else entirely.
            struct stat st {};
            if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
                return fail_as(ExitCode::local_file, dir + " exists and is not a directory (a symbolic link, or a "
                                                           "file): sync writes only into real directories");
        }
    }
    return {};
}

std::vector<FileJob> jobs_of(const Options &o, const Comparison &c, const std::vector<SyncItem> &items) {
    std::vector<FileJob> jobs;
    const std::string &local_top = o.sync.upload ? c.source_top : c.destination_top;
    const std::string &remote_top = o.sync.upload ? c.destination_top : c.source_top;
    for (const auto &item : items) {
        if (item.action != SyncAction::copy_new && item.action != SyncAction::copy_changed) continue;
        FileJob job{path_under(local_top, item.path), path_under(remote_top, item.path), item.size, std::nullopt};
        job.replaces = item.action == SyncAction::copy_changed;
        job.relative = item.path;
        job.source_mtime = item.source_mtime;
        // A download's resume check takes the listing's time, not an MDTM.
        if (!o.sync.upload && item.source_mtime) job.modify = ftp::format_time_val(*item.source_mtime);
        jobs.push_back(std::move(job));
    }
    return jobs;
}

namespace {

// Said once per run whatever the number of files, so the same words for all.
constexpr const char *kTimesRefused =
    "the server would not set modification times (MFMT or MDTM); the next sync copies these files again "
    "unless it compares with --compare size or --compare checksum";

// The source's time as it is now: the file may have changed since the plan.
std::optional<int64_t> current_mtime(int fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return std::nullopt;
    return static_cast<int64_t>(st.st_mtim.tv_sec);
}

}  // namespace

FileAction sync_action(const Options &o, const std::string &destination_top) {
    auto fresh = std::make_shared<Options>(o), continuing = std::make_shared<Options>(o);
    fresh->resume = false;
    continuing->resume = true;
    return [fresh, continuing, upload = o.sync.upload, destination_top, backup_dir = o.sync.backup_dir](
               Session &s, const FileJob &job, const FileProgressHooks &hooks, FileReport &report) -> OutcomeStatus {
        const Options &fo = job.replaces ? *fresh : *continuing;
        if (job.replaces && !backup_dir.empty())
            if (auto kept = back_up(upload ? &s : nullptr, destination_top, backup_dir, job.relative); !kept) return kept;
        if (upload) {
            auto source = open_upload_source(job.local);
            if (!source) return std::unexpected(source.error());
            const auto when = current_mtime(source->fd.get());
            if (auto moved = put_one_file(s, fo, *source, job.remote, hooks, report); !moved) return moved;
            // Skipped: -c found a file of this size there, which sync did
            // not plan; it keeps its own time, so the next run compares it again.
            if (!when || report.skipped) return {};
            report.size_copied = source->size;
            auto set = set_remote_mtime(s, job.remote, *when);
            if (!set && session_lost(set.error())) return set;
            if (!set) report.note(kTimesRefused);
            else report.mtime_set = when;
            return {};
        }
        auto dest = destination_at(job.local);
        if (!dest) return std::unexpected(dest.error());
        if (dest->direct) return fail_as(ExitCode::local_file, job.local + " exists and is not a regular file");
        if (auto moved = get_one_file(s, fo, job.remote, *dest, hooks, report, ListedFacts{job.size, job.modify}); !moved)
            return moved;
        if (report.skipped) return {};  // as for an upload: its own time stays
        if (struct stat st {}; ::stat(job.local.c_str(), &st) == 0) report.size_copied = static_cast<uint64_t>(st.st_size);
        auto when = job.source_mtime;
        if (!when) {  // the listing gave none (LIST): MDTM, one round trip
            auto asked = remote_mtime(s, job.remote);
            if (!asked) return std::unexpected(asked.error());
            when = *asked;
        }
        if (!when) return {};
        if (auto set = set_local_mtime(job.local, *when); !set) return set;
        report.mtime_set = when;
        return {};
    };
}

AheadAction sync_ahead(const Options &o) {
    if (o.sync.upload) return {};
    auto fresh = std::make_shared<Options>(o), continuing = std::make_shared<Options>(o);
    fresh->resume = false;
    continuing->resume = true;
    return [fresh, continuing](Session &s, const FileJob &current, const FileJob &next) -> bool {
        // Without the source's time, the current copy asks MDTM after its
        // 226, which would come between.
        return current.source_mtime && send_get_ahead(s, next.replaces ? *fresh : *continuing, current, next);
    };
}

AheadWindow sync_ahead_window(const Options &o) {
    if (o.sync.upload) return {};
    return [options = std::make_shared<Options>(o)](const Session &s) { return get_ahead_window(s, *options); };
}

// What the destination holds after the run: the unchanged files and the
// copies that succeeded, with the digests taken on the way (--verify).
std::vector<ManifestEntry> manifest_entries(const Options &o, const Comparison &c, const std::vector<SyncItem> &items,
                                            const std::vector<FileResult> &results) {
    const std::string &remote_top = o.sync.upload ? c.destination_top : c.source_top;
    std::map<std::string, const FileResult *> by_remote;
    for (const auto &r : results) by_remote[r.job.remote] = &r;
    std::vector<ManifestEntry> entries;
    for (const auto &item : items) {
        if (item.action == SyncAction::remove) continue;
        ManifestEntry e{item.path, item.size, item.source_mtime, item.sha256};
        if (item.action == SyncAction::unchanged) {
            e.mtime = c.destination.files.at(item.path).mtime;
        } else {
            auto r = by_remote.find(path_under(remote_top, item.path));
            if (r == by_remote.end() || r->second->failure) continue;  // not there, or not this version
            e.sha256 = r->second->report.sha256;
            e.mtime = r->second->report.mtime_set;
            e.size = r->second->report.size_copied.value_or(item.size);
        }
        entries.push_back(std::move(e));
    }
    return entries;
}

// The source-relative paths of the files to copy that did not arrive.
std::vector<std::string> unfinished_paths(const Options &o, const Comparison &c, const std::vector<SyncItem> &items,
                                          const std::vector<FileResult> &results) {
    const std::string &remote_top = o.sync.upload ? c.destination_top : c.source_top;
    std::set<std::string> arrived;
    for (const auto &r : results)
        if (!r.failure) arrived.insert(r.job.remote);
    std::vector<std::string> paths;
    for (const auto &item : items)
        if ((item.action == SyncAction::copy_new || item.action == SyncAction::copy_changed) &&
            !arrived.contains(path_under(remote_top, item.path)))
            paths.push_back(item.path);
    return paths;
}

}  // namespace rftp::client
