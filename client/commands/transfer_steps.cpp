#include "client/commands/transfer_steps.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>

#include <cstring>

#include "client/ftp_connection.h"
#include "client/interrupt.h"
#include "common/path_text.h"
#include "common/log.h"
#include "common/unique_fd.h"
#include "middleware/integrity/file_digest.h"
#include "protocol/parallel_option.h"

namespace rftp::client {

OutcomeStatus set_binary_mode(Session &session) {
    auto reply = session.control.command("TYPE I");
    if (!reply) return std::unexpected(reply.error());
    if (!reply->positive_completion()) return refused("TYPE I", *reply);
    return {};
}

OutcomeStatus prepare_transfer_session(Session &session, const Options &options) {
    if (options.verify) {
        if (auto ok = require_hash_for_verify(session); !ok) return ok;
        // Says digests will be asked for, so rftpd takes each file's while
        // it moves (framed streams and RDMA); any server that refuses still
        // answers HASH.
        auto chosen = session.control.command("OPTS HASH SHA-256");
        if (!chosen) return std::unexpected(chosen.error());
    }
    if (!options.block_checksums && session.features.blocksum_none) {
        // Both ends must agree, or every block would fail its check: a
        // server that does not say NONE keeps them on for this session.
        auto chosen = session.control.command("OPTS BLOCKSUM NONE");
        if (!chosen) return std::unexpected(chosen.error());
        session.block_checksums = !(chosen->code == 200 && chosen->text() == "NONE");
        if (session.block_checksums)
            log::warning("the server would not turn block checksums off; every block is still checked");
    } else if (!options.block_checksums && session.features.is_rftpd()) {
        log::warning("this rftpd cannot turn block checksums off; every block is still checked");
    }
    // (A server without rftp's framing has no blocks to check: nothing to say.)
    return set_binary_mode(session);
}

Outcome<SizeProbe> probe_size(Session &session, const std::string &path) {
    auto reply = session.control.command("SIZE " + path);
    if (!reply) return std::unexpected(reply.error());
    if (reply->code != 213) return SizeProbe{std::nullopt, *reply};
    std::string text = reply->text();
    uint64_t size = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), size);
    if (ec != std::errc()) return fail_as(ExitCode::remote_file, "SIZE " + path + ": unreadable reply '" + text + "'");
    return SizeProbe{size, *reply};
}

bool grant_exceeds_request(uint64_t asked_streams, uint64_t asked_block, uint64_t streams, uint64_t block) {
    constexpr uint64_t kServersSmallestBlock = 64u << 10;  // rftpd raises smaller requests to this
    return streams > asked_streams || block > std::max(asked_block, kServersSmallestBlock);
}

OutcomeStatus refuse_name_ftp_cannot_carry(const char *verb, const std::string &remote) {
    if (ftp_can_carry(remote)) return {};
    return fail_as(ExitCode::usage, std::string(verb) + " " + remote.substr(0, remote.find_first_of("\r\n")) +
                                        "...: the name holds a line break or NUL byte, which FTP cannot carry");
}

std::unexpected<Failure> refuse_verify_of_device(const char *side) {
    return fail_as(ExitCode::usage, std::string("--verify reads the ") + side +
                                        " again for its digest, which stdout or a device cannot give; use a file, or "
                                        "compare with `rftp hash URL`");
}

Outcome<ParallelGrant> negotiate_parallel(Session &session, unsigned streams, uint64_t block_size) {
    if (session.parallel_in_force && session.parallel_asked_streams == streams && session.parallel_asked_block == block_size)
        return ParallelGrant{session.parallel_granted_streams, session.parallel_granted_block};
    auto reply = session.control.command("OPTS " + ftp::format_parallel_request({.streams = streams, .block_size = block_size}));
    if (!reply) return std::unexpected(reply.error());
    if (reply->code != 200) return refused("OPTS PARALLEL", *reply);
    auto grant = ftp::parse_parallel_grant(reply->text());
    if (!grant) return fail_as(ExitCode::remote_file, "OPTS PARALLEL: unreadable reply '" + reply->text() + "'");
    if (grant_exceeds_request(streams, block_size, grant->streams, grant->block_size))
        return fail_as(ExitCode::remote_file, "OPTS PARALLEL: the server granted more than was asked ('" +
                                                  reply->text() + "' for " + std::to_string(streams) + " streams of " +
                                                  std::to_string(block_size) + " bytes)");
    session.parallel_in_force = true;
    session.parallel_asked_streams = streams;
    session.parallel_asked_block = block_size;
    session.parallel_granted_streams = grant->streams;
    session.parallel_granted_block = grant->block_size;
    return *grant;
}

OutcomeStatus disable_parallel(Session &session) {
    if (!session.parallel_in_force) return {};
    auto reply = session.control.command("OPTS " + ftp::format_parallel_request({.streams = 0}));
    if (!reply) return std::unexpected(reply.error());
    if (reply->code != 200) return refused("OPTS PARALLEL 0", *reply);
    session.parallel_in_force = false;
    return {};
}

void abort_transfer(Session &session) {
    // Until both answers are read, a late one would be taken for the next
    // command's reply: the session is out of step unless shown otherwise.
    session.out_of_step = true;
    if (!session.control.send("ABOR")) return;
    // Typically 426 for the aborted transfer, then 226 for the ABOR itself.
    // But the transfer may have ended before the ABOR came (its own 226 or
    // 4xx), and then the ABOR's answer (225) still follows: it must be read
    // here, or the next command would take it for its own reply.
    auto first = session.control.read_reply(5);
    if (!first) return;
    if (first->code == 225) {
        session.out_of_step = false;
        return;
    }
    // 5xx: a server without ABOR may refuse it at once while the transfer's
    // own reply is still to come, or say it after that reply; either way
    // one more reply ends the exchange.
    session.out_of_step = !session.control.read_reply(first->code == 226 ? 1 : 5);
}

ExitCode exit_for_data_error(const Error &error) {
    if (error.code == kFileChanged) return ExitCode::verification;
    // A block that failed its CRC32C (EBADMSG) was damaged on the way, not
    // here: a transfer failure, resumable, like a broken connection.
    switch (-error.code) {
        case ENOSPC: case EDQUOT: case EFBIG: case EIO: case EROFS: case ESTALE: case EBADF: case EISDIR:
            return ExitCode::local_file;
        default:
            return ExitCode::transfer;
    }
}

// 100 GB: about 35 minutes more than --timeout.
int timeout_after_reading(const Session &session, std::optional<uint64_t> bytes) {
    constexpr uint64_t kSlowestRead = 50'000'000;
    uint64_t seconds = static_cast<uint64_t>(session.control.timeout()) + (bytes ? *bytes / kSlowestRead : 0);
    return static_cast<int>(std::min<uint64_t>(seconds, INT_MAX / 1000));
}

Outcome<std::string> remote_sha256(Session &session, const std::string &path) {
    if (!session.features.hash_sha256)
        return fail_as(ExitCode::remote_file, "server does not offer HASH SHA-256 (not in its FEAT reply)");
    std::optional<uint64_t> size;
    if (session.features.size) {
        auto probe = probe_size(session, path);
        if (!probe) return std::unexpected(probe.error());
        size = probe->size;
    }
    auto reply = session.control.command("HASH " + path, timeout_after_reading(session, size));
    if (!reply) return fail_as(reply.error().exit, "HASH " + path + ": " + reply.error().message);
    if (reply->code != 213) return refused("HASH " + path, *reply);
    // "SHA-256 0-<size> <hex> <path>"
    std::istringstream words(reply->text());
    std::string algorithm, range, hex;
    words >> algorithm >> range >> hex;
    bool hex_ok = hex.size() == 64;
    for (char &c : hex) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        hex_ok = hex_ok && std::isxdigit(static_cast<unsigned char>(c));
    }
    if (algorithm != "SHA-256" || !hex_ok)
        return fail_as(ExitCode::remote_file, "HASH " + path + ": unreadable reply '" + reply->text() + "'");
    return hex;
}

void note_blocks_resent(FileReport &report, const middleware::TransferProgress &progress) {
    const uint64_t n = progress.blocks_resent.load();
    if (n == 0) return;
    report.note(std::to_string(n) + (n == 1 ? " block" : " blocks") +
                " failed the CRC32C check on the way and " + (n == 1 ? "was" : "were") + " sent again");
}

OutcomeStatus require_hash_for_verify(const Session &session) {
    if (session.features.hash_sha256) return {};
    return fail_as(ExitCode::verification,
                   "--verify needs a server that offers HASH SHA-256 (such as rftpd); this one does not");
}

OutcomeStatus verify_digest(Session &session, const std::string &remote_path, const LocalDigest &local_digest) {
    auto remote = remote_sha256(session, remote_path);
    // Only a digest that differs is a verification failure: a timeout, a
    // lost connection or a refused HASH keeps its own exit code (and a
    // download that may well be whole keeps its partial file).
    if (!remote) return fail_as(remote.error().exit, "--verify: " + remote.error().message);
    auto local = local_digest();
    if (!local) return std::unexpected(local.error());
    if (*remote != *local)
        return fail_as(ExitCode::verification, "SHA-256 mismatch: server " + *remote + ", local " + *local);
    return {};
}

Outcome<std::string> taken_local_sha256(const std::string &taken, const std::string &path) {
    log::debug("verify: the local SHA-256 of " + path + " was taken during the transfer");
    return taken;
}

Result<std::string> sha256_until_interrupted(int fd, uint64_t size) {
    middleware::TransferProgress hashing;
    InterruptGuard guard(hashing, {});
    return middleware::sha256_of_file(fd, size, &hashing);
}

Outcome<std::string> read_local_sha256(int fd, uint64_t size, const std::string &path) {
    log::debug("verify: reading " + path + " for its SHA-256");
    auto read = sha256_until_interrupted(fd, size);
    // The partial file stays for -c, its source record too (the digests never met).
    if (interrupted()) return fail_as(ExitCode::interrupted, "--verify: interrupted while reading " + path);
    if (read) return *read;
    // A file that ended early is not the one that moved (7); any other
    // failure to read it is this side's disk (6).
    const ExitCode exit = read.error().code == kFileChanged ? ExitCode::verification : ExitCode::local_file;
    return fail_as(exit, "--verify: " + path + ": " + read.error().message);
}

std::unexpected<Failure> skipped_file_differs(Failure mismatch, const std::string &where, const std::string &again) {
    mismatch.message += "; " + where + " was already there and is left as it is: " + again + " without -c";
    return std::unexpected(mismatch);
}

OutcomeStatus verify_digest(Session &session, const std::string &remote_path, const std::string &local_path,
                            const std::optional<std::string> &taken_during_transfer) {
    return verify_digest(session, remote_path, [&]() -> Outcome<std::string> {
        if (taken_during_transfer) return taken_local_sha256(*taken_during_transfer, local_path);
        UniqueFd fd(::open(local_path.c_str(), O_RDONLY | O_CLOEXEC));
        struct stat st {};
        if (!fd || ::fstat(fd.get(), &st) < 0)
            return fail_as(ExitCode::local_file, "--verify: open " + local_path + ": " + std::strerror(errno));
        return read_local_sha256(fd.get(), static_cast<uint64_t>(st.st_size), local_path);
    });
}

OutcomeStatus hold_next_upload(Session &session) {
    auto held = session.control.command("HOLD");
    if (!held) return std::unexpected(held.error());
    if (held->code != 200) return refused("HOLD", *held);
    return {};
}

}  // namespace rftp::client
