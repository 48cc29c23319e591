"""The several-GiB sparse test file both end-to-end trees move (tests/e2e over
TCP, tests/rdma/guest over RDMA): past 2^32 bytes, so no 32-bit offset
survives it, with marks around 2 GiB and 4 GiB so a block at the wrong
offset changes the digest."""

import hashlib
from pathlib import Path

GiB = 1 << 30
SPARSE_SIZE = 4 * GiB + 4097
MARKS = [0, 2 * GiB - 8, 4 * GiB - 8, SPARSE_SIZE - 16]


def _mark(i: int, at: int) -> bytes:
    return f"mark{i:02d}{at:08x}"[:16].encode()


def write_sparse(path: Path) -> Path:
    with open(path, "wb") as f:
        f.truncate(SPARSE_SIZE)
        for i, at in enumerate(MARKS):
            f.seek(at)
            f.write(_mark(i, at))
    return path


def sparse_digest() -> str:
    """The SHA-256 of what write_sparse writes, from its pattern in memory.
    Reading the file's holes back costs far more: in the lab guest, 12 s of
    page faults and reads for what the CPU hashes in two."""
    h = hashlib.sha256()
    zeros = memoryview(bytes(8 << 20))
    at = 0
    for i, mark_at in [*enumerate(MARKS), (None, SPARSE_SIZE)]:
        while at < mark_at:
            n = min(len(zeros), mark_at - at)
            h.update(zeros[:n])
            at += n
        if i is not None:
            h.update(_mark(i, mark_at))
            at += len(_mark(i, mark_at))
    return h.hexdigest()
