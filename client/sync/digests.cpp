#include "client/sync/digests.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

#include "client/commands/transfer_steps.h"
#include "client/interrupt.h"
#include "client/sync/tree.h"
#include "common/unique_fd.h"
#include "middleware/integrity/file_digest.h"

namespace rftp::client {
namespace {

Outcome<std::string> digest_of(const std::string &path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    struct stat st {};
    if (!fd || ::fstat(fd.get(), &st) != 0)
        return fail_as(ExitCode::local_file, "cannot read " + path + ": " + std::strerror(errno));
    auto hex = sha256_until_interrupted(fd.get(), static_cast<uint64_t>(st.st_size));
    if (interrupted()) return fail_as(ExitCode::interrupted, "interrupted");
    if (!hex) return fail_as(ExitCode::local_file, "cannot read " + path + ": " + hex.error().message);
    return *hex;
}

}  // namespace

Outcome<std::map<std::string, std::string>> local_digests(const std::string &top, const std::vector<std::string> &paths,
                                                           unsigned threads) {
    std::map<std::string, std::string> out;
    std::mutex mutex;
    std::optional<Failure> failure;
    std::atomic<std::size_t> next{0};
    auto work = [&] {
        for (std::size_t i; (i = next.fetch_add(1)) < paths.size();) {
            auto hex = digest_of(path_under(top, paths[i]));
            std::lock_guard lock(mutex);
            if (!hex) {
                if (!failure) failure = hex.error();
                next.store(paths.size());
                return;
            }
            out[paths[i]] = std::move(*hex);
        }
    };
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < std::max(1u, threads) && t < paths.size(); ++t) pool.emplace_back(work);
    for (auto &t : pool) t.join();
    if (failure) return std::unexpected(*failure);
    return out;
}

Outcome<std::map<std::string, std::string>> remote_digests(Session &session, const std::string &top,
                                                           const std::vector<std::string> &paths) {
    std::map<std::string, std::string> out;
    for (const auto &path : paths) {
        if (interrupted()) return fail_as(ExitCode::interrupted, "interrupted");
        auto hex = remote_sha256(session, path_under(top, path));
        if (!hex) return std::unexpected(hex.error());
        out[path] = std::move(*hex);
    }
    return out;
}

}  // namespace rftp::client
