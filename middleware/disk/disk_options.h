// How the disk engine reads and writes files: one struct with its defaults,
// shared by the daemon's config (storage.*), the client and docs/config.md.
#pragma once

namespace rftp::middleware::disk {

struct DiskOptions {
    // O_DIRECT where the file system takes it: blocks go disk <-> registered
    // memory with no page-cache copy. Unaligned parts and file systems that
    // refuse it (tmpfs before Linux 6.6, some network file systems) fall
    // back to buffered I/O for just that part.
    bool direct_io = true;
    unsigned readers = 1;      // reader threads per transfer, each with its own io_uring
    unsigned writers = 1;      // writer threads per transfer, each with its own io_uring
    unsigned queue_depth = 4;  // block reads or writes each of them keeps in flight
};

}  // namespace rftp::middleware::disk
