"""rftp sync over real kernel RDMA, on each lab device (soft-RoCE rxe0 and
soft-iWARP siw0): a tree up and down over the RDMA channel, each copy given
its source's time, a second run that moves nothing, a rewritten file that
alone moves again, and a manifest whose digests match the files."""

import hashlib
import json
import os
from pathlib import Path

from conftest import rftp, url

MiB = 1 << 20
SIZES = [0, 1, 4097, 4 * MiB + 1]  # around the client's default RDMA block


def digests(root: Path) -> dict:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def make_tree(root: Path) -> Path:
    for i, sub in enumerate(["", "a", "a/b", "c d"]):
        (root / sub).mkdir(parents=True, exist_ok=True)
        for size in SIZES:
            p = root / sub / f"f{size}.bin"
            p.write_bytes(os.urandom(size))
            os.utime(p, (1_600_000_000 + i, 1_600_000_000 + i))
    return root


def test_a_tree_synced_up_and_down_over_rdma(daemon, device, tmp_path):
    name, addr = device
    src = make_tree(tmp_path / "src")
    files = len(digests(src))
    target = url(addr, f"sync-{name}")
    # A path with a space is quoted in the log: matched up to the transport.
    stored = rf"direction=store path=\"?/sync-{name}/.* transport=rdma .* result=ok"
    stores_before = daemon.count(stored)
    _, s = rftp("--transport", "rdma", "-j", "1", "sync", str(src), target)
    assert s["files"]["ok"] == files and s["files"]["failed"] == 0, s
    assert daemon.count(stored) == stores_before + files
    remote = daemon.root / f"sync-{name}"
    assert digests(remote) == digests(src)
    for p in src.rglob("*.bin"):
        assert int((remote / p.relative_to(src)).stat().st_mtime) == int(p.stat().st_mtime), p

    _, s = rftp("--transport", "rdma", "sync", str(src), target)
    assert s["files"]["ok"] == 0 and s["files"]["unchanged"] == files and s["bytes"] == 0, s

    changed = src / "a" / f"f{4 * MiB + 1}.bin"
    changed.write_bytes(os.urandom(4 * MiB + 1))
    _, s = rftp("--transport", "rdma", "sync", str(src), target)
    assert s["files"]["ok"] == 1 and s["bytes"] == 4 * MiB + 1, s
    assert digests(remote) == digests(src)

    down, manifest = tmp_path / "down", tmp_path / "manifest.tsv"
    _, s = rftp("--transport", "rdma", "-j", "1", "sync", "--manifest", str(manifest), target, str(down))
    assert s["files"]["ok"] == files, s
    assert digests(down) == digests(src)
    # The lab's rftp runs with --json, which writes the manifest as JSON lines.
    rows = [json.loads(line) for line in manifest.read_text().splitlines()]
    assert {row["path"]: row["sha256"] for row in rows} == digests(down)
