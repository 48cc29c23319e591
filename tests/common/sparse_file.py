"""The several-GiB sparse test file both end-to-end trees move (tests/e2e over
TCP, tests/rdma/guest over RDMA): past 2^32 bytes, so no 32-bit offset
survives it, with marks around 2 GiB and 4 GiB so a block at the wrong
offset changes the digest."""

from pathlib import Path

GiB = 1 << 30
SPARSE_SIZE = 4 * GiB + 4097
MARKS = [0, 2 * GiB - 8, 4 * GiB - 8, SPARSE_SIZE - 16]


def write_sparse(path: Path) -> Path:
    with open(path, "wb") as f:
        f.truncate(SPARSE_SIZE)
        for i, at in enumerate(MARKS):
            f.seek(at)
            f.write(f"mark{i:02d}{at:08x}"[:16].encode())
    return path
