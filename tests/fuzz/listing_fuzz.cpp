// A directory listing from a hostile server, line by line: as MLSD facts
// (RFC 3659) and as Unix LIST lines, then the name check every entry must
// pass before it becomes a local path.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "client/batch/remote_tree.h"
#include "protocol/mlsx_facts.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    std::string_view input(reinterpret_cast<const char *>(data), size);
    while (!input.empty()) {
        const std::size_t end = input.find('\n');
        const std::string line(input.substr(0, end));
        input = end == std::string_view::npos ? std::string_view() : input.substr(end + 1);
        if (auto entry = rftp::ftp::parse_mlsx_line(line)) {
            (void)entry->type(), (void)entry->size(), (void)entry->modify();
            if (auto modify = entry->modify()) (void)rftp::ftp::format_mlsx_time(*modify);
            (void)rftp::client::is_safe_entry_name(entry->name);
        }
        rftp::client::RemoteEntry listed;
        if (rftp::client::parse_unix_list_line(line, listed)) (void)rftp::client::is_safe_entry_name(listed.name);
    }
    return 0;
}
