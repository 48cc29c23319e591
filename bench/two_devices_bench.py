#!/usr/bin/env python3
"""make bench-two-devices: rftp copying a file between two devices, the
copy the disk goal speaks of, where reading and writing do not share one
disk. bench/disk_bench.py copies on one disk, where a copy is bound by the
disk doing both at once (fio's own copy there reaches about half of the
slower of fio's read and write); this script moves the file from the
machine's disk (--dir) to a second device (--other-dir) and back:

  get A->B   rftpd reads its root on A, rftp writes B;
  put B->A   rftp reads B, rftpd writes its root on A.

Each run's limit is the slower of fio's sequential O_DIRECT read on the
source device and its new-file write on the destination (io_uring, rftp's
block size and queue depth), and the network (iperf3 -P4 -Z on loopback),
measured in a pass right before the run: these disks' rates move by a third
within minutes, so every ratio is a pair's. The goal is 0.9 of that limit
with CRC32C on every block. fio copying across the two devices at once
(one job reading A while another writes B) is a reference row. Rows are
medians of --runs runs; the page cache is dropped before every pass and run.
Prints a Markdown table; writes it into docs/benchmarks.md between its
markers unless --doc no."""

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from disk_bench import (BLOCK, DEPTH, MiB, Daemon, fio, fio_pages_seen, median_row, network_limit,  # noqa: E402
                        record_in_doc, rftp)


def filesystem(path: Path) -> str:
    fstype, source = subprocess.run(["findmnt", "-no", "FSTYPE,SOURCE", "-T", str(path)], capture_output=True,
                                    text=True).stdout.split()[:2]
    return f"{fstype} on {source}"


def new_file_write(path: Path, size_mib: int) -> float:
    """fio writing path as a new file, as a copy's destination is; removed after."""
    path.unlink(missing_ok=True)
    rate = fio(path, "write", size_mib)
    path.unlink(missing_ok=True)
    return rate


def slower_fio(read_from: Path, write_to: Path, size_mib: int) -> float:
    """The slower of fio reading read_from and writing write_to as a new file,
    one after the other: what a copy between two devices can reach."""
    return min(fio(read_from, "read", size_mib), new_file_write(write_to, size_mib))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="/var/tmp", help="a directory on the machine's disk (A; rftpd's root)")
    ap.add_argument("--other-dir", required=True, help="a directory on a second device (B; rftp's files)")
    ap.add_argument("--other-label", default="", help="what the second device is, for the table")
    ap.add_argument("--size-mib", type=int, default=4096)
    ap.add_argument("--runs", type=int, default=3, help="runs per row; the median is reported")
    ap.add_argument("--doc", default="yes")
    a = ap.parse_args()
    size = a.size_mib * MiB
    work = Path(tempfile.mkdtemp(prefix="rftp-two-devices-", dir=a.dir))
    other = Path(tempfile.mkdtemp(prefix="rftp-two-devices-", dir=a.other_dir))
    fs_a, fs_b = filesystem(work), filesystem(other)
    if os.stat(work).st_dev == os.stat(other).st_dev:
        print(f"two-devices bench: {a.dir} and {a.other_dir} are on the same file system; give --other-dir "
              "a directory on a second device", file=sys.stderr)
        shutil.rmtree(work)
        shutil.rmtree(other)
        return 2
    daemon = None
    rows = []
    try:
        daemon = Daemon(work / "daemon", ["127.0.0.1"], port=2132)
        on_a = daemon.root / "src.bin"
        on_b = other / "src.bin"
        with open(on_a, "wb") as f:  # distinct MiBs, cheaply
            block = os.urandom(MiB)
            for i in range(a.size_mib):
                f.write(i.to_bytes(8, "little") + block[8:])
        shutil.copyfile(on_a, on_b)
        probe_a, probe_b = work / "fio.bin", other / "fio.bin"
        url = "rftp://alice@127.0.0.1:2132"

        def median_of(measure):
            return sorted(measure() for _ in range(a.runs))[a.runs // 2]

        for where, src, probe in (("A", on_a, probe_a), ("B", on_b, probe_b)):
            rows.append({"test": f"fio read, {where}", "gbps": median_of(lambda: fio(src, "read", a.size_mib))})
            rows.append({"test": f"fio write, a new file, {where}",
                         "gbps": median_of(lambda: new_file_write(probe, a.size_mib))})
        for name, src, dst in (("A to B", on_a, probe_b), ("B to A", on_b, probe_a)):
            rows.append({"test": f"reference: fio copying {name}, reading and writing at once",
                         "gbps": median_of(lambda: fio(src, "copy", a.size_mib, new_file=dst))})
        net = network_limit("tcp", "loopback", "127.0.0.1")
        rows.append({"test": "network: iperf3 -P4 -Z on loopback", "gbps": net})
        for r in rows:
            r["limit"] = True

        def measure(test, args, limit_pass, cleanup):
            runs, pairs = [], []
            for _ in range(a.runs):
                limit = min(limit_pass(), net)
                run = rftp(daemon, args, size, "tcp")
                cleanup()
                runs.append(run)
                pairs.append((run["gbps"] / limit if run["ok"] else 0.0, limit))
            row = median_row(runs)
            ratios = sorted(p[0] for p in pairs)
            row.update(test=test, ratio=ratios[len(ratios) // 2] if row["ok"] else None,
                       limit_gbps=sorted(p[1] for p in pairs)[len(pairs) // 2])
            rows.append(row)
            print(json.dumps(row), flush=True)

        for streams, sums in ((1, True), (4, True), (4, False)):
            flags = ["-P", str(streams), "--block-size", f"{BLOCK // MiB}M", "--transport", "tcp"]
            flags += [] if sums else ["--no-block-checksums"]
            label = f"-P{streams}" + ("" if sums else ", checksums off")
            measure(f"get A->B {label}", ["get", *flags, f"{url}/src.bin", str(other / "down.bin")],
                    lambda: slower_fio(on_a, probe_b, a.size_mib),
                    lambda: (other / "down.bin").unlink(missing_ok=True))
            measure(f"put B->A {label}", ["put", *flags, str(on_b), f"{url}/up.bin"],
                    lambda: slower_fio(on_b, probe_a, a.size_mib),
                    lambda: (daemon.root / "up.bin").unlink(missing_ok=True))
    finally:
        if daemon:
            daemon.stop()
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(other, ignore_errors=True)

    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    b_label = a.other_label or fs_b
    lines = [f"#### {stamp} — {platform.node()}, A: {fs_a}, B: {b_label}, TCP loopback, kernel {platform.release()}",
             "",
             f"{a.size_mib} MiB file, block {BLOCK // MiB} MiB, queue depth {DEPTH}, CRC32C on every block unless "
             f"the row says checksums off. GB = 10^9 bytes. Each row is the median of {a.runs} runs; every run "
             f"follows a pass of its limit (the slower of fio read on the source device and fio write on the "
             f"destination, or the network if slower), and the ratio is the median of those pairs'. Page cache "
             f"dropped before each pass and run. fio's buffers: {' and '.join(sorted(fio_pages_seen))} pages.", "",
             "| test | GB/s | vs its limit (goal 0.9) | its limit, median GB/s | client CPU s/GB | server CPU s/GB | ok |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        if r.get("limit"):
            lines.append(f"| {r['test']} | {r['gbps']:.2f} | limit | - | - | - | yes |")
            continue
        ratio = f"{r['ratio']:.2f} ×" if r.get("ratio") else "-"
        lines.append(f"| {r['test']} | {r['gbps']:.2f} | {ratio} | {r['limit_gbps']:.2f} | {r['client_cpu']:.3f} | "
                     f"{r['server_cpu']:.3f} | {'yes' if r['ok'] else 'NO: ' + r['error'][:80]} |")
    runs = [r for r in rows if not r.get("limit")]
    met = [r for r in runs if r.get("ratio") and r["ratio"] >= 0.9]
    lines += ["", f"- copies between two devices, goal ≥ 0.9 × the slower of fio read (source) and fio write "
              f"(destination): met by {len(met)} of {len(runs)} rows"]
    table = "\n".join(lines)
    print(table)
    if a.doc == "yes":
        record_in_doc("bench-two-devices", table)
    return 0 if all(r.get("ok", True) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
