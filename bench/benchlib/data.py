"""The benchmark's files in tmpfs: one big random file, many small ones, and
the checks that an upload or download arrived whole."""

import hashlib
import os
import shutil
from pathlib import Path

CHUNK = 8 << 20


def make_random_file(path: Path, size: int) -> None:
    # dd from /dev/urandom in one process: much faster than Python's os.urandom loop.
    with open(path, "wb") as out, open("/dev/urandom", "rb") as rnd:
        left = size
        while left:
            n = min(CHUNK, left)
            out.write(rnd.read(n))
            left -= n


def make_small_files(directory: Path, count: int, size: int) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / small_name(i) for i in range(count)]
    for p in paths:
        p.write_bytes(os.urandom(size))
    return paths


def make_tree_files(top: Path, count: int, size: int, per_dir: int = 10, groups: int = 10) -> None:
    """count files of size bytes, per_dir to a directory, the directories
    spread over groups parents: a dataset's shape, where small_files is
    one flat directory."""
    for i in range(count):
        leaf = i // per_dir
        d = top / f"g{leaf % groups:02d}" / f"d{leaf:04d}"
        d.mkdir(parents=True, exist_ok=True)
        (d / small_name(i)).write_bytes(os.urandom(size))


def check_tree_files(got_dir: Path, count: int, size: int) -> str:
    """'' when got_dir holds count files of size bytes, at any depth."""
    if not got_dir.is_dir():
        return f"{got_dir} is missing"
    files = [p for p in got_dir.rglob("*") if p.is_file()]
    if len(files) != count:
        return f"{got_dir}: {len(files)} files, want {count}"
    wrong = next((p for p in files if p.stat().st_size != size), None)
    return f"{wrong} has {wrong.stat().st_size} bytes, want {size}" if wrong else ""


def small_name(i: int) -> str:
    return f"f{i:04d}.bin"


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


def check_file(path: Path, size: int, want_sha: str | None) -> str:
    """'' when path holds `size` bytes (and, if given, the digest), else what is wrong."""
    if not path.exists():
        return f"{path} is missing"
    got = path.stat().st_size
    if got != size:
        return f"{path} has {got} bytes, want {size}"
    if want_sha is not None and sha256_of(path) != want_sha:
        return f"{path} differs from the source (SHA-256)"
    return ""


def check_tree(got_dir: Path, source_dir: Path, count: int, size: int, compare: bool) -> str:
    """'' when got_dir holds the `count` small files of source_dir with the right sizes
    (and, with compare, the same bytes)."""
    if not got_dir.is_dir():
        return f"{got_dir} is missing"
    names = sorted(p.name for p in got_dir.iterdir() if p.is_file())
    want = [small_name(i) for i in range(count)]
    if names != want:
        missing = sorted(set(want) - set(names))[:3]
        extra = sorted(set(names) - set(want))[:3]
        return f"{got_dir}: {len(names)} files, want {count} (missing {missing}, unexpected {extra})"
    for name in names:
        p = got_dir / name
        if p.stat().st_size != size:
            return f"{p} has {p.stat().st_size} bytes, want {size}"
        if compare and p.read_bytes() != (source_dir / name).read_bytes():
            return f"{p} differs from the source"
    return ""


def empty_dir(path: Path, mode: int = 0o755) -> None:
    """Recreate path as an empty directory (between reps, outside the timing)."""
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    os.chmod(path, mode)
