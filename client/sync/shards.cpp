#include "client/sync/shards.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <numeric>

#include "common/decimal.h"

namespace rftp::client {
namespace {

constexpr std::size_t kMaxShards = 100'000;
// What a file costs beyond its bytes (a few round trips, opening, renaming),
// in bytes: about what moves in the time a small file takes. Shares are
// balanced by bytes plus this per file, so a share of many small files is
// not taken for a light one.
constexpr uint64_t kPerFileWeight = 256 << 10;

std::optional<std::size_t> number(const std::string &text) {
    auto n = parse_decimal(text, kMaxShards);
    if (!n) return std::nullopt;
    return static_cast<std::size_t>(*n);
}

std::optional<std::size_t> from_env(const char *name) {
    const char *v = std::getenv(name);
    return v ? number(v) : std::nullopt;
}

// This task's 0-based index, from Slurm or Kubernetes.
std::optional<std::size_t> task_index() {
    auto id = from_env("SLURM_ARRAY_TASK_ID"), min = from_env("SLURM_ARRAY_TASK_MIN");
    if (id && min && *id >= *min) return *id - *min;
    return from_env("JOB_COMPLETION_INDEX");
}

}  // namespace

Outcome<ShardId> parse_shard(const std::string &spec) {
    const auto slash = spec.find('/');
    const std::string first = spec.substr(0, slash), second = slash == std::string::npos ? "" : spec.substr(slash + 1);
    std::optional<std::size_t> index, count;
    if (first == "auto") {
        index = task_index();
        count = second.empty() ? from_env("SLURM_ARRAY_TASK_COUNT") : number(second);
        if (!index || !count)
            return fail_as(ExitCode::usage, "--shard " + spec + ": this is no Slurm array task (SLURM_ARRAY_TASK_ID, "
                                            "_MIN, _COUNT) nor a Kubernetes Indexed Job (JOB_COMPLETION_INDEX with "
                                            "--shard auto/N); give --shard K/N");
    } else {
        auto k = number(first);
        count = number(second);
        if (!k || *k == 0) return fail_as(ExitCode::usage, "--shard: expected K/N with 1 <= K <= N, or auto, got " + spec);
        index = *k - 1;
    }
    if (!count || *count == 0 || *index >= *count)
        return fail_as(ExitCode::usage, "--shard " + spec + ": the share must be one of 1.." +
                                            (count ? std::to_string(*count) : std::string("N")));
    return ShardId{*index, *count};
}

std::vector<SyncItem> share_of(const std::vector<SyncItem> &items, ShardId id) {
    std::vector<std::size_t> order(items.size());
    std::iota(order.begin(), order.end(), 0);
    std::ranges::sort(order, [&](std::size_t a, std::size_t b) {
        if (items[a].size != items[b].size) return items[a].size > items[b].size;
        return items[a].path < items[b].path;
    });
    std::vector<uint64_t> bytes(id.count, 0);
    std::vector<bool> mine(items.size(), false);
    for (std::size_t i : order) {
        const auto lightest = std::ranges::min_element(bytes) - bytes.begin();  // the first of equals
        bytes[static_cast<std::size_t>(lightest)] += items[i].size + kPerFileWeight;
        mine[i] = static_cast<std::size_t>(lightest) == id.index;
    }
    std::vector<SyncItem> share;
    for (std::size_t i = 0; i < items.size(); ++i)
        if (mine[i]) share.push_back(items[i]);
    return share;
}

}  // namespace rftp::client
