#include "daemon/config/config_loader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "common/unique_fd.h"
#include "common/yaml/yaml_document.h"
#include "daemon/config/schema.h"
#include "daemon/vfs/other_writers.h"

namespace rftp::daemon {
using yaml::load_one_document;
namespace {

// A config file is a few kilobytes; anything this large is a mistake (a log
// or a disk image passed by accident), and we would rather say so than parse it.
constexpr off_t kMaxConfigBytes = 1 << 20;

Result<std::string> read_small_file(const std::string &path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
    if (!fd) return fail_errno("config " + path);
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return fail_errno("config " + path);
    if (!S_ISREG(st.st_mode)) return fail_msg("config " + path + ": not a regular file", -EINVAL);
    // Whoever may write the config chooses who logs in and which directory
    // each user sees as /: only root and the daemon's own user may.
    if (auto other = other_writer(path, st))
        return fail_msg("config " + path + ": " + other->who + "; " + other->fix, -EPERM);
    if (st.st_size > kMaxConfigBytes) {
        return fail_msg("config " + path + ": larger than 1 MiB, not a config file?", -EFBIG);
    }
    std::string text;
    char buf[8192];
    for (;;) {
        ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            return fail_errno("config " + path);
        }
        if (n == 0) break;
        text.append(buf, static_cast<size_t>(n));
        if (text.size() > static_cast<size_t>(kMaxConfigBytes)) {
            return fail_msg("config " + path + ": larger than 1 MiB, not a config file?", -EFBIG);
        }
    }
    return text;
}

}  // namespace

Result<DaemonOptions> apply_config_text(const DaemonOptions &base, std::string_view yaml,
                                        const std::string &source) {
    DaemonOptions options = base;
    // yaml-cpp reports syntax errors (and, defensively, any misuse) by
    // throwing; this is the boundary where they become values.
    try {
        // One document: a second ("---") is refused rather than silently
        // ignored, with its settings.
        auto document = load_one_document(yaml, source);
        if (!document) return fail(document.error());
        if (auto ok = apply_config_document(*document, source, options); !ok) return fail(ok.error());
    } catch (const YAML::Exception &e) {
        std::string where = source;
        if (!e.mark.is_null()) {
            where += ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1);
        }
        return fail_msg(where + ": invalid YAML: " + e.msg, -EINVAL);
    }
    return options;
}

Result<DaemonOptions> load_default_config() {
    return apply_config_text(DaemonOptions{}, embedded_default_config(), "<embedded default config>");
}

Result<DaemonOptions> load_config_file(const std::string &path) {
    auto defaults = load_default_config();
    if (!defaults) return defaults;
    auto text = read_small_file(path);
    if (!text) return fail(text.error());
    return apply_config_text(*defaults, *text, path);
}

}  // namespace rftp::daemon
