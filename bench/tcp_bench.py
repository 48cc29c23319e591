#!/usr/bin/env python3
"""`make bench`: rftp over TCP loopback, side by side with its limits and a peer.

In one run, round-robin over the reps so that background noise spreads
evenly, it measures:
  1. the limits: iperf3 over loopback with and without -Z, and dd writing a
     new file into tmpfs (the ceiling for any upload that lands in tmpfs);
  2. rftp download (to /dev/null) and upload (into tmpfs) of one big random
     file with 1 and 4 streams;
  3. the same with vsftpd + curl;
  4. many small files up and down.
It prints medians with GB/s, CPU seconds per GB for client and server
separately, and the ratio against the limits; with --doc it also writes the
results into docs/benchmarks.md. Correctness is checked on every run (byte
counts) and by content on the first rep. Everything lives in
/dev/shm/rftp-bench-<pid>/ and is removed at the end.

Run as root: servers are put into cgroups to measure their CPU."""

import argparse
import datetime
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import data, report  # noqa: E402
from benchlib.cpu import CgroupBase, wait_for_quiet  # noqa: E402
from benchlib.doc_section import replace_section  # noqa: E402
from benchlib.servers import Iperf3Server, Rftpd, Vsftpd  # noqa: E402
from benchlib.tests import Env, all_tests, rftp_supports  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "benchmarks.md"
BEGIN, END = "<!-- bench:results:begin -->", "<!-- bench:results:end -->"


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("build", nargs="?", default=str(REPO / "build"), help="build directory with rftp and rftpd")
    p.add_argument("--size-gib", type=float, default=4, help="size of the big file (default 4)")
    p.add_argument("--reps", type=int, default=3, help="repetitions of each test (default 3)")
    p.add_argument("--small-files", type=int, default=2000, help="number of small files (default 2000)")
    p.add_argument("--small-kib", type=int, default=64, help="size of each small file (default 64)")
    p.add_argument("--iperf-secs", type=int, default=5, help="iperf3 -t (default 5)")
    p.add_argument("--jobs", type=int, default=4, help="concurrent files for the small-file tests (default 4)")
    p.add_argument("--only", help="regex: run only the tests whose id matches (limits are kept)")
    p.add_argument("--quiet-wait", type=float, default=10,
                   help="before each row wait up to this many seconds for the machine to go quiet (default 10)")
    p.add_argument("--quick", action="store_true", help="development: 1 GiB, 1 rep, 200 small files")
    p.add_argument("--doc", choices=("yes", "no"), help="write docs/benchmarks.md (default: yes unless --quick)")
    a = p.parse_args()
    if a.quick:
        a.size_gib, a.reps, a.small_files = 1, 1, 200
    if a.doc is None:
        a.doc = "no" if a.quick else "yes"
    if a.small_files > 10000:
        p.error("--small-files is limited to 10000 (four-digit names)")
    return a


def machine() -> dict[str, str]:
    cpuinfo = Path("/proc/cpuinfo").read_text()
    model = re.search(r"^model name\s*:\s*(.*)$", cpuinfo, re.M)
    mem_kib = int(re.search(r"^MemTotal:\s*(\d+)", Path("/proc/meminfo").read_text(), re.M).group(1))
    return {"nproc": str(os.cpu_count()), "cpu": model.group(1).strip() if model else "unknown",
            "memory": f"{mem_kib / 1024 / 1024:.1f} GiB", "kernel": platform.release()}


def build_type(build: Path) -> str:
    cache = build / "CMakeCache.txt"
    m = re.search(r"^CMAKE_BUILD_TYPE:\w+=(.*)$", cache.read_text(), re.M) if cache.exists() else None
    if not m:
        return "unknown"
    # Left empty, CMakeLists.txt sets RelWithDebInfo.
    return m.group(1) or "RelWithDebInfo"


def versions() -> str:
    def first_line(argv):
        try:
            return subprocess.run(argv, capture_output=True, text=True).stdout.splitlines()[0]
        except (OSError, IndexError):
            return "?"
    return (f"iperf3 {first_line(['iperf3', '--version']).split()[1]}, "
            f"{' '.join(first_line(['curl', '--version']).split()[:2])}, "
            f"vsftpd {first_line(['dpkg-query', '-W', '-f', '${Version}', 'vsftpd'])}")


def progress(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def main() -> int:
    args = parse_args()
    build = Path(args.build).resolve()
    for exe in ("rftp", "rftpd"):
        if not (build / exe).is_file():
            print(f"tcp_bench: {build / exe} not found: build first", file=sys.stderr)
            return 2
    for tool in ("iperf3", "curl", "dd"):
        if shutil.which(tool) is None:
            print(f"tcp_bench: {tool} is not installed", file=sys.stderr)
            return 2
    if os.geteuid() != 0:
        print("tcp_bench: run as root (vsftpd's anonymous login and the CPU cgroups need it)", file=sys.stderr)
        return 2

    size = int(args.size_gib * (1 << 30))
    base = Path(f"/dev/shm/rftp-bench-{os.getpid()}")
    cgroups = CgroupBase(f"rftp-bench-{os.getpid()}")
    servers = []
    started = datetime.datetime.now()
    try:
        root, work = base / "root", base / "work"
        root.mkdir(parents=True)
        work.mkdir()
        os.chmod(base, 0o755)
        os.chmod(root, 0o755)  # vsftpd wants an anon_root the anonymous user cannot write
        progress(f"creating {args.size_gib:g} GiB random file and {args.small_files} x {args.small_kib} KiB in {base}")
        data.make_random_file(root / "big.bin", size)
        data.make_small_files(root / "small", args.small_files, args.small_kib * 1024)
        (root / "empty").mkdir()
        big_sha = data.sha256_of(root / "big.bin")

        rftpd = Rftpd(cgroups.group("rftpd"), work, build, root)
        servers.append(rftpd)
        vsftpd = Vsftpd(cgroups.group("vsftpd"), work, root)
        servers.append(vsftpd)
        iperf = Iperf3Server(cgroups.group("iperf3"), work)
        servers.append(iperf)

        env = Env(build=build, root=root, work=work, size=size, small_count=args.small_files,
                  small_size=args.small_kib * 1024, big_sha=big_sha, rftpd=rftpd, vsftpd=vsftpd,
                  iperf=iperf, iperf_secs=args.iperf_secs, jobs=args.jobs,
                  multi_put=rftp_supports(build, "--concurrency"),
                  multi_get=rftp_supports(build, "--concurrency") and rftp_supports(build, "--recursive"))
        tests = all_tests(env)
        if args.only:
            tests = [t for t in tests if t.kind.startswith("limit") or re.search(args.only, t.id)]
        progress("small files: " + ("rftp put FILE... -j" if env.multi_put else "one rftp put per file") +
                 ", " + ("rftp get -r -j" if env.multi_get else "one rftp get per file"))
        rows = [report.Row(t, []) for t in tests]
        for rep in range(args.reps):
            for row in rows:
                waited = wait_for_quiet(args.quiet_wait) if args.quiet_wait > 0 else 0
                progress(f"rep {rep + 1}/{args.reps}: {row.test.id} (waited {waited:.0f} s for quiet)")
                sample = row.test.run(rep)
                row.samples.append(sample)
                if sample.error:
                    progress(f"  FAILED: {sample.error}")
                else:
                    rate = f"{sample.files / sample.wall:.0f} per s" if sample.files else \
                        f"{sample.extra.get('rate', sample.bytes / sample.wall) / 1e9:.2f} GB/s"
                    progress(f"  {rate}, {sample.wall:.2f} s, client {sample.client_cpu:.2f} s, "
                             f"server {sample.server_cpu:.2f} s, others {sample.others_cpu:.2f} s")
        # The daemon's own counters, as a cross-check of its cgroup (same run, all tests).
        rftpd_own = rftpd.own_cpu_seconds()
        rftpd_cg = rftpd.cpu_seconds()

        m = machine()
        text = render(args, m, env, rows, started, build, cgroups.kind, rftpd_own, rftpd_cg)
        print(text)
        if args.doc == "yes":
            write_doc(text)
            progress(f"results written to {DOC}")
        failed = sum(len(r.samples) - len(r.good) for r in rows)
        return 1 if failed else 0
    finally:
        for s in servers:
            s.stop()
        cgroups.remove()
        shutil.rmtree(base, ignore_errors=True)


def render(args, m, env, rows, started, build, cpu_kind, rftpd_own, rftpd_cg) -> str:
    small = f"{args.small_files} × {args.small_kib} KiB"
    how_small = []
    if not env.multi_put:
        how_small.append("`rftp put` has no multi-file form yet: one `rftp put` per file, "
                         f"{args.jobs} processes at a time (each logs in anew)")
    if not env.multi_get:
        how_small.append("`rftp get` has no `-r` yet: one `rftp get` per file, "
                         f"{args.jobs} processes at a time (each logs in anew)")
    lines = [
        f"### {started:%Y-%m-%d %H:%M} — {m['nproc']} × {m['cpu']}, {m['memory']} RAM, kernel {m['kernel']}",
        "",
        f"Big file {args.size_gib:g} GiB of random data in /dev/shm, {args.reps} rep(s), median (min–max). "
        f"GB = 10^9 bytes. Small files: {small}. rftp build: `{build.name}` ({build_type(build)}). "
        f"{versions()}. Server CPU measured with {cpu_kind}. Before each row the harness waited "
        f"up to {args.quiet_wait:g} s for a quiet second.",
        "",
        report.big_table(rows, args.reps),
        "",
        report.small_table(rows, args.reps),
        "",
        report.session_table(rows, args.reps),
        "",
    ]
    if how_small:
        lines += ["Small files: " + "; ".join(how_small) + ".", ""]
    lines += ["Goals (this run's medians):", "", report.goals(rows), "",
              f"Cross-check: rftpd's own utime+stime over the whole run {rftpd_own:.2f} s, "
              f"its cgroup {rftpd_cg:.2f} s.", ""]
    errors = [f"- {r.test.id} rep {i + 1}: {s.error}" for r in rows for i, s in enumerate(r.samples) if s.error]
    if errors:
        lines += ["Failed runs:", ""] + errors + [""]
    return "\n".join(lines)


def write_doc(text: str) -> None:
    replace_section(BEGIN, END, text, "Results: TCP loopback (`make bench`)")


def interrupt_on_sigterm() -> None:
    """SIGTERM (e.g. from a CI timeout) unwinds like Ctrl-C, so servers stop and tmpfs is cleaned."""
    def handler(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, handler)


if __name__ == "__main__":
    interrupt_on_sigterm()
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
