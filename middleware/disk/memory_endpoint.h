// Memory-to-memory mode: /dev/zero as the source and /dev/null as the sink
// are not files. Reading zeros into a block costs as much CPU as the network
// copy itself, and writing into /dev/null does nothing; so the engine fills
// a zero block once and never reads it again, and frees a discarded block
// the moment it arrives. Recognised by device number, not by path, so a
// symlink or an open descriptor handed over works the same.
#pragma once

namespace rftp::middleware {

enum class MemoryEndpoint { none, zeros, discard };

MemoryEndpoint memory_endpoint(int fd);

}  // namespace rftp::middleware
