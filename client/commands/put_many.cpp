// rftp put [-r] LOCAL... URL/dir/: every file goes into the remote directory
// (URL path ending in '/', made if missing, or an existing directory); -r
// recreates local directory trees there with MKD.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "client/batch/batch_run.h"
#include "client/batch/remote_tree.h"
#include "client/batch/upload_plan.h"
#include "client/commands/files_ahead.h"
#include "client/commands/many_files.h"
#include "client/commands/resume_command.h"
#include "client/commands/put_one_file.h"

namespace rftp::client {
namespace {

// Makes sure the directory files go into exists (planning already named it).
OutcomeStatus check_destination_directory(Session &session, const std::string &url_path) {
    if (url_path.ends_with('/')) {
        if (url_path != "/") {
            if (auto ok = ensure_remote_directory(session, url_path.substr(0, url_path.size() - 1)); !ok) return ok;
        }
        return {};
    }
    auto is_dir = remote_is_directory(session, url_path);
    if (!is_dir) return std::unexpected(is_dir.error());
    if (!*is_dir)
        return fail_as(ExitCode::usage, url_path + " is not a directory on the server; with several files or -r "
                                                   "the URL must end in / or name an existing directory");
    return {};
}

bool is_under(const std::string &path, const std::string &dir) {
    return path.size() > dir.size() && path.starts_with(dir) && path[dir.size()] == '/';
}

// MKDs sent to rftpd in one write: a tree of many directories then costs a
// round trip per kMkdAhead of them, not one each. 32 lines are well within
// what rftpd lets wait.
constexpr std::size_t kMkdAhead = 32;

// The MKDs of directories [first, first + kMkdAhead), ahead, to rftpd. Each
// reply is read as make_or_find_remote_directory asks for it; a refusal's
// CWD reads the rest first, and their directories are asked for again.
OutcomeStatus send_mkds_ahead(Session &session, const std::vector<std::string> &directories, std::size_t first) {
    if (!session.features.is_rftpd() || session.control.has_lines_ahead()) return {};
    std::vector<std::string> lines;
    // Up to a name FTP cannot carry: its own MKD fails without a line sent.
    for (std::size_t i = first; i < directories.size() && lines.size() < kMkdAhead; ++i) {
        if (!ftp_can_carry(directories[i])) break;
        lines.push_back("MKD " + directories[i]);
    }
    const std::vector<std::string_view> views(lines.begin(), lines.end());
    return session.control.send_ahead(views);
}

// MKD for every directory of the trees, parents first. A refused one fails
// the files meant for it (and skips its subdirectories), not the run; only a
// lost session is returned. MKDs go ahead until one finds its directory
// there: the tree then likely exists, and MKDs sent ahead would only be
// refused and sent again.
OutcomeStatus make_remote_directories(Session &session, UploadPlan &plan, BatchRun &batch) {
    std::vector<std::string> refused;
    bool ahead = true;
    for (std::size_t i = 0; i < plan.remote_directories.size(); ++i) {
        const std::string &d = plan.remote_directories[i];
        if (std::ranges::any_of(refused, [&](const std::string &r) { return is_under(d, r); })) continue;
        if (ahead)
            if (auto sent = send_mkds_ahead(session, plan.remote_directories, i); !sent) return sent;
        auto made = make_or_find_remote_directory(session, d);
        if (made && *made == DirectoryMade::made) continue;
        ahead = false;
        if (made) continue;
        if (session_lost(made.error())) return std::unexpected(made.error());
        refused.push_back(d);
        std::erase_if(plan.files, [&](const FileJob &job) {
            if (!is_under(job.remote, d)) return false;
            batch.record_failure(job, made.error());
            return true;
        });
    }
    return {};
}

}  // namespace

OutcomeStatus run_put_many(CommandContext &ctx) {
    const Options &o = ctx.options;
    BatchRun batch(ctx);
    // Planned from the local disk before connecting, so a missing source
    // fails before anything changes on the server.
    std::string base = ctx.url.path.ends_with('/') ? ctx.url.path : ctx.url.path + "/";
    UploadPlan plan = plan_upload(o.locals, o.recursive, base);
    for (auto &[job, failure] : plan.failures) batch.record_failure(job, failure);
    if (batch.stopped()) {
        batch.count_unattempted(plan.files.size());
        return batch.conclude();
    }

    auto session = open_transfer_session(ctx);
    if (!session) return std::unexpected(session.error());
    SessionsLoggingIn others(ctx, plan.files.size());
    batch.take_sessions_from(others);
    auto ready = check_destination_directory(*session, ctx.url.path);
    if (ready) ready = make_remote_directories(*session, plan, batch);
    if (!ready || batch.stopped()) {
        // Nothing moves; the files planned so far are reported as not attempted.
        if (!ready) batch.fail_setup(ready.error());
        batch.count_unattempted(plan.files.size());
        if (ready || !session_lost(ready.error())) close_session(*session);
        return batch.conclude();
    }

    std::vector<std::string> args(o.locals.begin(), o.locals.end());
    args.push_back(o.url);
    ctx.summary.resume_hint = resume_command("put", o, args);
    batch.run(std::move(plan.files), std::move(*session),
              [&o](Session &s, const FileJob &job, const FileProgressHooks &hooks, FileReport &report) -> OutcomeStatus {
                  auto source = open_upload_source(job.local);
                  if (!source) return std::unexpected(source.error());
                  return put_one_file(s, o, *source, job.remote, hooks, report);
              },
              [&o](Session &s, const FileJob &current, const FileJob &next) { return send_put_ahead(s, o, current, next); });
    return batch.conclude();
}

}  // namespace rftp::client
