// What a caller asks of an RDMA channel for one file, and what it gets
// back: the source's SendSpec, the sink's ReceiveSpec, the FileResult.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "middleware/disk/disk_file.h"

namespace rftp::middleware::rdma {

// How completion notices reach the sink on this channel: found by trying
// WRITE WITH IMMEDIATE on the first block, never by the driver's name.
enum class NoticeMode { unknown, write_with_imm, write_then_send };
const char *to_string(NoticeMode m);

struct SendSpec {
    int fd = -1;          // read at each granted offset (never through its file offset); /dev/zero is never read
    uint64_t start = 0;   // REST offset
    uint64_t size = 0;    // the file's size: blocks cover [start, size)
    // Take the file's SHA-256 from the blocks as they are read (start 0
    // only): FileResult::sha256, no second pass.
    bool digest = false;
    // Seal each block with its CRC32C. Off only when both ends agreed
    // (OPTS BLOCKSUM NONE): the trailer then travels as zero.
    bool block_checksums = true;
};

struct ReceiveSpec {
    int fd = -1;                        // written at each offset (never through its file offset); /dev/null is never written
    uint64_t start = 0;                 // the source must begin exactly here
    uint64_t max_size = 1ull << 62;     // a larger file is refused
    std::optional<uint64_t> expect_size;  // when this side knows it (a download after SIZE)
    // After the complete prefix grew (for a resume journal); quick, any thread.
    std::function<void(uint64_t contiguous_end)> on_prefix_grown;
    // Write blocks strictly in file order (they still arrive in any order):
    // for media that need it. With a non-seekable fd (a pipe) it is required,
    // and blocks are written with write(2).
    bool sequential = false;
    // Reserve [start, size) once the source announced the size (fallocate):
    // a full disk fails the file before any block is written. With a journal
    // kept through on_prefix_grown the file takes its whole size at once
    // (preallocate.h, ReservedSize::whole): the caller then cuts it to its
    // complete prefix when the transfer stops.
    bool preallocate = false;
    // Take the file's SHA-256 from the blocks as they are written (start 0 only).
    bool digest = false;
    // Check each block's CRC32C before writing it; off only as agreed with
    // the source (OPTS BLOCKSUM NONE), whose trailers are then zero.
    bool block_checksums = true;
    // at_own_position (stdout): written in order through fd's own offset,
    // which needs sequential; nothing is reserved (disk_file.h).
    disk::Placement placement = disk::Placement::at_offsets;
};

struct FileResult {
    uint64_t bytes = 0;  // moved in this transfer
    double seconds = 0;
    NoticeMode notice = NoticeMode::unknown;
    std::optional<std::string> sha256;  // when the spec asked for it: the whole file's, hex
};

}  // namespace rftp::middleware::rdma
