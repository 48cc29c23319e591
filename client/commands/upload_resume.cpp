#include "protocol/partial_names.h"
#include "client/commands/upload_resume.h"

#include <string_view>

#include "client/commands/transfer_steps.h"
#include "client/interrupt.h"
#include "protocol/mlsx_facts.h"
#include "protocol/source_identity.h"

namespace rftp::client {

// Whether rftpd records this upload's source (SRCE) on its partial file.
// Only uploads that also announce their size: a round trip is nothing next
// to them, and a smaller partial is sent again whole rather than trusted.
bool records_source(const Session &session, const UploadSource &source) {
    return session.features.source_identity && source.identity && source.size >= kAnnounceSizeFrom;
}

namespace {

// The source rftpd recorded on a partial upload (MLST's X.rftp-source fact:
// a token, or ftp::kNoSource); nullopt when rftpd cannot tell.
Outcome<std::optional<std::string>> recorded_upload_source(Session &session, const std::string &partial) {
    auto reply = session.control.command("MLST " + partial);
    if (!reply) return std::unexpected(reply.error());
    // Gone or unreadable since its SIZE (another upload committed meanwhile,
    // say): nothing vouches for what REST would now continue.
    if (reply->code != 250) return std::optional<std::string>{std::string(ftp::kNoSource)};
    // "250-Listing x", " facts name", "250 End": the entry is the line that starts with a space.
    for (const std::string &line : reply->lines) {
        if (line.empty() || line.front() != ' ') continue;
        auto entry = ftp::parse_mlsx_line(std::string_view(line).substr(1));
        if (entry) return entry->fact(ftp::kSourceFact);
    }
    return std::optional<std::string>{};
}

// Whether rftpd's partial upload holds the beginning of this local file, as
// far as its record says (SRCE, docs/protocol.md "Uploads"); a note says why not.
Outcome<bool> partial_is_of(FileReport &report, Session &session, const std::string &remote,
                            const std::string &partial_name, const UploadSource &source) {
    // An older rftpd, or a device as the source: sizes are all there is.
    if (!session.features.source_identity || !source.identity) return true;
    if (!records_source(session, source)) {
        report.note(remote + ": a partial upload of a file under 8 MiB records no source; uploading it whole");
        return false;
    }
    auto recorded = recorded_upload_source(session, partial_name);
    if (!recorded) return std::unexpected(recorded.error());
    if (!*recorded) {
        report.note(remote + ": rftpd cannot tell which file its partial upload came from (no extended attributes "
                             "there?); resuming by its size");
        return true;
    }
    if (**recorded == *source.identity) return true;
    report.note(remote + (**recorded == ftp::kNoSource
                              ? ": the server's partial upload records no source (another client's, or an older rftp's)"
                              : ": the server's partial upload was begun from another version of the local file (" +
                                    **recorded + ", now " + *source.identity + ")") +
                "; uploading it whole");
    return false;
}

// rftpd renames only whole uploads into place, so a shorter remote file is
// an earlier upload, complete: this file's beginning only if the file grew
// by appending since. Its SHA-256 against the local prefix's says which.
Outcome<bool> remote_file_is_prefix(FileReport &report, Session &session, const std::string &remote,
                                    const UploadSource &source, uint64_t remote_size) {
    if (!session.features.hash_sha256 || source.device) return true;
    auto theirs = remote_sha256(session, remote);
    if (!theirs) {
        // Only a refusal leaves the session in step for the upload (a timeout
        // leaves the reply to come; Ctrl-C stops here).
        const ExitCode code = theirs.error().exit;
        if (code == ExitCode::connection || code == ExitCode::interrupted) return std::unexpected(theirs.error());
        report.note(remote + ": could not compare the remote file with the local one's beginning (" +
                    theirs.error().message + "); uploading it whole");
        return false;
    }
    Result<std::string> ours = sha256_until_interrupted(source.fd.get(), remote_size);
    if (interrupted()) return fail_as(ExitCode::interrupted, "interrupted");
    if (!ours) return fail_as(exit_for_data_error(ours.error()), "put " + source.path + ": " + ours.error().message);
    if (*ours == *theirs) return true;
    report.note(remote + ": the remote file is not the beginning of the local one; uploading it whole");
    return false;
}

}  // namespace

Outcome<std::optional<ResumePoint>> resume_offset(FileReport &report, Session &session, const std::string &remote,
                                                  const UploadSource &source) {
    auto at = [](uint64_t offset, uint64_t copied_first = 0) {
        return std::optional<ResumePoint>{ResumePoint{offset, copied_first}};
    };
    const uint64_t local_size = source.size;
    if (session.features.is_rftpd()) {
        const std::string partial_name = ftp::server_partial_name(remote);
        auto partial = probe_size(session, partial_name);
        if (!partial) return std::unexpected(partial.error());
        if (partial->size && *partial->size <= local_size) {
            if (*partial->size == 0) return at(0);
            // Bytes of another version of the file are no prefix of this one.
            auto same = partial_is_of(report, session, remote, partial_name, source);
            if (!same) return std::unexpected(same.error());
            return at(*same ? *partial->size : 0);
        }
        // rftpd continues its partial file, not the final one, on REST: one
        // longer than the local file is of another file, so start afresh
        // (an offset taken from the final file would land on its bytes).
        if (partial->size) {
            report.note(remote + ": the server's partial upload is larger than the local file; uploading it whole");
            return at(0);
        }
    }
    auto probe = probe_size(session, remote);
    if (!probe) return std::unexpected(probe.error());
    const std::optional<uint64_t> &existing = probe->size;
    if (existing && *existing == local_size) return std::optional<ResumePoint>{};
    if (existing && *existing < local_size) {
        if (*existing == 0 || !session.features.is_rftpd()) return at(*existing);
        auto prefix = remote_file_is_prefix(report, session, remote, source, *existing);
        if (!prefix) return std::unexpected(prefix.error());
        if (!*prefix) return at(0);
        return at(*existing, *existing);
    }
    if (existing) report.note(remote + ": remote file is larger than the local one; uploading it whole");
    return at(0);
}

}  // namespace rftp::client
