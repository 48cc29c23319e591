#!/usr/bin/env python3
"""`make bench-sync` (and part of `make bench`): what an rftp sync of a large
dataset costs when little or nothing changed, against rsync and rclone in
the same run.

A dataset of 100,000 small files (1,000 directories of 100 files, 1..4 KiB)
in /dev/shm is synced once to rftpd on loopback. Then, 3 rounds each,
round-robin, median:
- rftp sync of the unchanged dataset: wall time, CPU, and the commands rftp
  sent (from its -vv trace), per directory and per file;
- rsync -a --dry-run of the same tree to a local copy (no network at all);
- rclone sync --dry-run and rclone check against the same rftpd over FTP;
- rftp sync after 1% of the files were rewritten: bytes and files moved.
With --doc the table goes into docs/benchmarks.md. Run as root."""

import argparse
import datetime
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib.cpu import CgroupBase  # noqa: E402
from benchlib.doc_section import replace_section  # noqa: E402
from benchlib.measure import run_client  # noqa: E402
from benchlib.servers import Rftpd  # noqa: E402
from tcp_bench import build_type, machine, progress  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "benchmarks.md"
BEGIN, END = "<!-- bench:sync:begin -->", "<!-- bench:sync:end -->"


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("build", nargs="?", default=str(REPO / "build"))
    p.add_argument("--dirs", type=int, default=1000)
    p.add_argument("--per-dir", type=int, default=100)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--quick", action="store_true", help="development: 10,000 files, 1 round")
    p.add_argument("--doc", choices=("yes", "no"))
    a, _ = p.parse_known_args()
    if a.quick:
        a.dirs, a.reps = 100, 1
    if a.doc is None:
        a.doc = "no" if a.quick else "yes"
    return a


def make_dataset(root: Path, dirs: int, per_dir: int) -> int:
    rng = random.Random(40)
    total = 0
    for d in range(dirs):
        sub = root / f"d{d // 100:02d}" / f"d{d:04d}"
        sub.mkdir(parents=True)
        for f in range(per_dir):
            data = rng.randbytes(rng.randrange(1024, 4097))
            (sub / f"f{f:03d}.dat").write_bytes(data)
            total += len(data)
    return total


def rewrite_one_percent(root: Path, rnd: int) -> tuple[int, int]:
    """Rewrites every 100th file (same size, new bytes, a new time); returns (files, bytes)."""
    files = sorted(root.rglob("*.dat"))[rnd::100]
    rng = random.Random(rnd)
    total = 0
    stamp = time.time() + 10 * (rnd + 1)
    for p in files:
        size = p.stat().st_size
        p.write_bytes(rng.randbytes(size))
        os.utime(p, (stamp, stamp))
        total += size
    return len(files), total


class Timed:
    def __init__(self, name, what):
        self.name, self.what = name, what
        self.walls, self.cpus, self.extra = [], [], {}

    def add(self, wall, cpu):
        self.walls.append(wall)
        self.cpus.append(cpu)

    def wall(self):
        return statistics.median(self.walls) if self.walls else None

    def cpu(self):
        return statistics.median(self.cpus) if self.cpus else None


def timed(argv, env=None, ok=(0,)):
    started = time.monotonic()
    r = run_client(argv, env)
    wall = time.monotonic() - started
    if r.returncode not in ok:
        raise RuntimeError(f"{' '.join(map(str, argv))} exited {r.returncode}: {r.stderr[-2000:]}")
    return wall, r


def count_commands(trace: str) -> dict:
    counts = {}
    for line in trace.splitlines():
        m = re.search(r"--> (\S+)", line)
        if m:
            counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    return counts


def rclone_env(rftpd) -> dict:
    obscured = subprocess.run(["rclone", "obscure", rftpd.password], capture_output=True, text=True,
                              check=True).stdout.strip()
    return dict(os.environ, RCLONE_CONFIG_R_TYPE="ftp", RCLONE_CONFIG_R_HOST="127.0.0.1",
                RCLONE_CONFIG_R_PORT=str(rftpd.port), RCLONE_CONFIG_R_USER=rftpd.user,
                RCLONE_CONFIG_R_PASS=obscured, RCLONE_CONFIG_R_CONCURRENCY="4")


def render(args, started, build, files, total, rows, commands, one_percent) -> str:
    m = machine()
    fmt = lambda v, d=2: "-" if v is None else f"{v:.{d}f}"  # noqa: E731
    lines = [f"### {started:%Y-%m-%d %H:%M} — {m['nproc']} × {m['cpu']}, kernel {m['kernel']}", "",
             f"{files:,} files ({args.dirs:,} directories of {args.per_dir}, 1..4 KiB, {total / 1e6:.0f} MB) in "
             f"/dev/shm, rftpd on loopback; {args.reps} round(s), median. rftp build `{build.name}` "
             f"({build_type(build)}). rsync works on local paths (no network): the floor for a tree walk.", "",
             "| unchanged dataset | what ran | wall s | client CPU s | vs rsync |", "|---|---|---|---|---|"]
    base = rows[1].wall()
    for r in rows:
        ratio = fmt(r.wall() / base) if r.wall() and base else "-"
        lines.append(f"| {r.name} | {r.what} | {fmt(r.wall())} | {fmt(r.cpu())} | {ratio} |")
    per_dir = sum(v for k, v in commands.items() if k in ("MLSD", "LIST", "CWD"))
    per_file = sum(v for k, v in commands.items() if k in ("SIZE", "MDTM", "MLST", "HASH", "RETR", "STOR", "MFMT"))
    lines += ["", f"Commands rftp sent for the unchanged dataset: {sum(commands.values()):,} in all; "
                  f"{per_dir:,} listing commands (CWD, MLSD) for {args.dirs + args.dirs // 100 + 1:,} directories; "
                  f"{per_file} per-file commands. "
                  f"By command: {', '.join(f'{k} {v}' for k, v in sorted(commands.items()))}.", ""]
    f1, b1, moved_files, moved_bytes, wall1 = one_percent
    lines += ["| 1% changed | files rewritten | bytes rewritten | files copied | bytes moved | wall s |",
              "|---|---|---|---|---|---|",
              f"| rftp sync | {f1:,} | {b1:,} | {moved_files:,} | {moved_bytes:,} | {fmt(wall1)} |", ""]
    met = lambda ok: "met" if ok else "not met"  # noqa: E731
    lines += [f"- Goal: an unchanged dataset costs one listing per directory and no per-file round trip: "
              f"{met(per_file == 0 and per_dir <= args.dirs + args.dirs // 100 + 2)} ({per_file} per-file commands).",
              f"- Goal: with 1% changed, only that 1% moves: {met(moved_files == f1 and moved_bytes == b1)} "
              f"({moved_files:,} files and {moved_bytes:,} bytes moved of {f1:,} and {b1:,} rewritten)."]
    return "\n".join(lines)


def write_doc(text: str) -> None:
    replace_section(BEGIN, END, text, "Sync of a large dataset")


def main() -> int:
    args = parse_args()
    build = Path(args.build).resolve()
    if os.geteuid() != 0:
        print("sync_bench: run as root (the CPU cgroups need it)", file=sys.stderr)
        return 2
    for tool in ("rsync", "rclone"):
        if not shutil.which(tool):
            print(f"sync_bench: {tool} is missing (scripts/install-deps.sh installs it)", file=sys.stderr)
            return 2
    started = datetime.datetime.now()
    base = Path(f"/dev/shm/rftp-sync-bench-{os.getpid()}")
    cgroups = CgroupBase(f"rftp-sync-bench-{os.getpid()}")
    rftpd = None
    try:
        src, root, local_copy, work = base / "src", base / "root", base / "copy", base / "work"
        for d in (root, work):
            d.mkdir(parents=True)
        files = args.dirs * args.per_dir
        progress(f"creating {files:,} files in {src}")
        total = make_dataset(src, args.dirs, args.per_dir)
        shutil.copytree(src, local_copy, copy_function=shutil.copy2)
        rftpd = Rftpd(cgroups.group("rftpd"), work, build, root)
        rftp = str(build / "rftp")
        env = dict(os.environ, RFTP_PASSWORD=rftpd.password)
        url = rftpd.url("/set")
        progress("first sync (every file)")
        wall, _ = timed([rftp, "-q", "-j", "8", "sync", str(src), url], env)
        progress(f"  {files / wall:.0f} files/s")
        renv = rclone_env(rftpd)
        rows = [Timed("rftp sync", "`rftp sync SRC URL` (MLSD per directory)"),
                Timed("rsync -a --dry-run", "`rsync -a --dry-run SRC/ COPY/`, local"),
                Timed("rclone sync --dry-run", "`rclone sync --dry-run SRC r:/set` over FTP (MLSD), 4 checkers"),
                Timed("rclone check", "`rclone check SRC r:/set --size-only` over FTP")]
        argvs = [([rftp, "-q", "sync", str(src), url], env, (0,)),
                 (["rsync", "-a", "--dry-run", f"{src}/", f"{local_copy}/"], None, (0,)),
                 (["rclone", "sync", "--dry-run", "-q", str(src), "r:/set"], renv, (0,)),
                 (["rclone", "check", "-q", "--size-only", str(src), "r:/set"], renv, (0,))]
        for rnd in range(args.reps):
            for row, (argv, e, ok) in zip(rows, argvs):
                wall, r = timed(argv, e, ok)
                row.add(wall, r.cpu)
                progress(f"round {rnd + 1}: {row.name}: {wall:.2f} s")
        _, traced = timed([rftp, "-vv", "sync", str(src), url], env)
        commands = count_commands(traced.stderr)
        progress(f"commands: {commands}")
        f1, b1 = rewrite_one_percent(src, 0)
        wall1, r = timed([rftp, "--json", "sync", str(src), url], env)
        summary = json.loads(r.stdout.splitlines()[-1])
        one_percent = (f1, b1, summary["files"]["ok"], summary["bytes"], wall1)
        text = render(args, started, build, files, total, rows, commands, one_percent)
        print(text)
        if args.doc == "yes":
            write_doc(text)
            progress(f"results written to {DOC}")
        return 0
    finally:
        if rftpd:
            rftpd.stop()
        cgroups.remove()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
