#include "client/commands/transfer_steps.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>

#include <cstring>

#include "client/ftp_connection.h"
#include "common/decimal.h"
#include "client/interrupt.h"
#include "common/ascii_case.h"
#include "common/hex.h"
#include "common/path_text.h"
#include "common/log.h"
#include "common/unique_fd.h"
#include "middleware/integrity/file_digest.h"
#include "protocol/parallel_option.h"

namespace rftp::client {

OutcomeStatus set_binary_mode(Session &session) {
    // rftpd takes commands ahead (FEAT PIPELINE): TYPE I then shares the
    // next command's round trip, and its refusal fails that command.
    if (session.features.is_rftpd()) return session.control.send_setting_ahead("TYPE I");
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
    // The whole reply is the size (RFC 3659): "213 12abc" is no size of 12.
    std::string text = reply->text();
    auto size = parse_decimal(std::string_view(text).substr(0, text.find_last_not_of(' ') + 1));
    if (!size) return fail_as(ExitCode::remote_file, "SIZE " + path + ": unreadable reply '" + text + "'");
    return SizeProbe{*size, *reply};
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
    hex = ascii_lower(hex);
    const bool hex_ok = hex.size() == 64 && hex.find_first_not_of(kHexDigits) == std::string::npos;
    if (algorithm != "SHA-256" || !hex_ok)
        return fail_as(ExitCode::remote_file, "HASH " + path + ": unreadable reply '" + reply->text() + "'");
    return hex;
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

}  // namespace rftp::client
