// One file as the disk engine sees it while blocks move: the caller's
// descriptor (buffered I/O, and the only one for pipes) and, where the file
// system takes it, a second descriptor on the same file opened O_DIRECT.
// Lives until every block operation on it has finished.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "common/unique_fd.h"

namespace rftp::middleware::disk {

// Direct I/O moves whole, aligned sectors at aligned memory; 4096 suits
// every common logical block size (512 and 4096).
inline constexpr uint64_t kDirectAlign = 4096;

// Where writes land. at_own_position: in order, through the descriptor's own
// file offset, as for a pipe, even where the file could seek. For stdout,
// which may be a file the caller's shell shares: `(echo head; rget URL -) > f`
// must follow "head", and whatever the shell writes next must follow us.
enum class Placement { at_offsets, at_own_position };

// Whether fd's file system keeps its files in memory (tmpfs, ramfs). There
// O_DIRECT, which tmpfs takes from Linux 6.6 on, is a copy into the page
// cache as a buffered write is.
bool in_memory_file_system(int fd);

struct DiskFile {
    int fd = -1;           // not owned
    UniqueFd direct;       // the same file opened O_DIRECT; empty where refused
    bool seekable = true;  // false: a pipe, an O_APPEND file or Placement::at_own_position: in order at its own position
    bool regular = false;  // a regular file (not a device, pipe or socket)
    std::atomic<bool> direct_usable{false};
    std::string buffered_reason;  // why the file (or a part of it) goes buffered
    std::atomic<uint64_t> direct_bytes{0}, buffered_bytes{0};
    // Of buffered_bytes, those sent to a socket by sendfile from the page
    // cache (tcp/page_cache_blocks.h) rather than read into a buffer.
    std::atomic<uint64_t> sendfile_bytes{0};

    // Never fails: a file that cannot be opened O_DIRECT is read or written
    // buffered, and buffered_reason says why.
    static std::unique_ptr<DiskFile> open(int fd, bool writing, bool want_direct,
                                          Placement placement = Placement::at_offsets);
    // Direct I/O was refused mid-file (EINVAL): the rest goes buffered.
    void refuse_direct(const std::string &why);
    // For the transfer log: "direct_bytes=... buffered_bytes=... [buffered_reason=...] [sendfile_bytes=...]".
    std::string summary() const;
};

}  // namespace rftp::middleware::disk
