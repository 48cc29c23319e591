#!/usr/bin/env python3
"""make bench-wan, run INSIDE the RDMA lab guest (bench/lab-bench.sh boots
it): rftp at round-trip times of 0, 10 and 50 ms, over TCP, siw and rxe.
The guest's kernel has netem (tests/rdma/lab/build-kernel.sh); all traffic
between the lab's two addresses passes the loopback device once each way,
so netem there delays every packet by half the round trip. The round trip
is measured as a TCP handshake to rftpd, not assumed.

Rows, each the median of --runs runs with default settings:
- one large file, get (GB/s), and its ratio to the same transport at 0 ms;
- many small files, get -r -j 4 (files/s);
- the large file over TCP at 50 ms with -P 1, 2, 4 and 8 (--streams);
- the large file over TCP at 50 ms with 0.01 % loss.
Writes the table between the bench-wan markers of docs/benchmarks.md
unless --doc no.

The guest has one virtual CPU, shared by client and daemon: its absolute
rates are far below the host's. The ratios against 0 ms are the result."""

import argparse
import datetime
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "rdma" / "guest"))
from conftest import BUILD, PASSWORD, Daemon  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from benchlib.doc_section import replace_section  # noqa: E402

MiB = 1 << 20
RTTS_MS = (0, 10, 50)
MARK_BEGIN, MARK_END = "<!-- bench-wan:results:begin -->", "<!-- bench-wan:results:end -->"


def set_path(rtt_ms: float, loss_pct: float = 0.0):
    """netem on lo: half the round trip each way, and the loss, if any."""
    if rtt_ms == 0 and loss_pct == 0:
        subprocess.run(["tc", "qdisc", "del", "dev", "lo", "root"], capture_output=True)
        return
    args = ["tc", "qdisc", "replace", "dev", "lo", "root", "netem", "delay", f"{rtt_ms / 2}ms", "limit", "100000"]
    if loss_pct:
        args += ["loss", f"{loss_pct}%"]
    subprocess.run(args, check=True)


def measured_rtt_ms(addr: str, port: int) -> float:
    """The median of five TCP handshakes to rftpd, in ms."""
    times = []
    for _ in range(5):
        start = time.monotonic()
        with socket.create_connection((addr, port), timeout=10):
            times.append((time.monotonic() - start) * 1000)
    return sorted(times)[2]


def run_rftp(args) -> dict:
    env = dict(os.environ, RFTP_PASSWORD=PASSWORD)
    start = time.monotonic()
    p = subprocess.run([str(BUILD / "rftp"), "--json", "--no-progress", *args], capture_output=True, text=True,
                       env=env, timeout=1800)
    wall = time.monotonic() - start
    summary = next((json.loads(l) for l in p.stdout.splitlines() if '"summary"' in l), {})
    return {"rc": p.returncode, "wall": wall, "summary": summary, "error": p.stderr[-300:]}


def large_get(url: str, transport: str, size: int, work: Path, *extra: str) -> dict:
    r = run_rftp(["--transport", transport, *extra, "get", f"{url}/large.bin", str(work / "large.down")])
    (work / "large.down").unlink(missing_ok=True)
    ok = r["rc"] == 0 and r["summary"].get("bytes") == size
    seconds = r["summary"].get("seconds") or r["wall"]
    return {"ok": ok, "value": size / 1e9 / seconds if ok else 0.0, "error": "" if ok else r["error"],
            "streams": r["summary"].get("streams", 0)}


def small_get(url: str, transport: str, count: int, work: Path) -> dict:
    down = work / "small.down"
    down.mkdir()
    r = run_rftp(["--transport", transport, "-j", "4", "get", "-r", f"{url}/small/", str(down)])
    got = sum(1 for p in down.rglob("*") if p.is_file())
    subprocess.run(["rm", "-rf", str(down)])
    ok = r["rc"] == 0 and got == count
    return {"ok": ok, "value": count / r["wall"] if ok else 0.0, "error": "" if ok else r["error"]}


def median(runs: list) -> dict:
    failed = [r for r in runs if not r["ok"]]
    if failed:
        return failed[0]
    return sorted(runs, key=lambda r: r["value"])[len(runs) // 2]


def prepare(root: Path, large_mib: int, small_count: int):
    with open(root / "large.bin", "wb") as f:
        block = os.urandom(MiB)
        for i in range(large_mib):
            f.write(i.to_bytes(8, "little") + block[8:])
    (root / "small").mkdir()
    for i in range(small_count):
        (root / "small" / f"f{i:05d}.bin").write_bytes(os.urandom(64 << 10))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--large-mib", type=int, default=256)
    ap.add_argument("--small-files", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--doc", default="yes")
    ap.add_argument("--streams", type=lambda t: [int(x) for x in t.split(",") if x], default=[1, 2, 4, 8],
                    help="-P rows for the large file over TCP at 50 ms")
    a = ap.parse_args()
    devices = [tuple(x.split("=", 1)) for x in os.environ["RFTP_LAB_DEVICES"].split()]
    work = Path(tempfile.mkdtemp(prefix="wan-bench-", dir="/tmp"))
    daemon = Daemon(work, [addr for _, addr in devices], extra_config="rdma: {pool_size: 64M}\n", log_level="notice")
    prepare(daemon.root, a.large_mib, a.small_files)
    size = a.large_mib * MiB
    # TCP over the first address; RDMA over each device's own.
    paths = [("tcp", "tcp", devices[0][1])] + [(dev, "rdma", addr) for dev, addr in devices]
    rows, rtts = [], {}
    try:
        for rtt in RTTS_MS:
            set_path(rtt)
            rtts[rtt] = measured_rtt_ms(devices[0][1], daemon.port)
            for name, transport, addr in paths:
                url = f"rftp://alice@{addr}:{daemon.port}"
                for test, fn, arg in (("large file get", large_get, size), ("small files get -r -j 4", small_get, a.small_files)):
                    r = median([fn(url, transport, arg, work) for _ in range(a.runs)])
                    r.update(rtt=rtt, path=name, test=test)
                    rows.append(r)
                    print(json.dumps(r), flush=True)
        # Streams given with -P at 50 ms, beside the default's own choice above.
        for n in a.streams:
            r = median([large_get(f"rftp://alice@{devices[0][1]}:{daemon.port}", "tcp", size, work, "-P", str(n))
                        for _ in range(a.runs)])
            r.update(rtt=50, path="tcp", test=f"large file get -P {n}", base="large file get")
            rows.append(r)
            print(json.dumps(r), flush=True)
        set_path(50, 0.01)
        rtts["50+loss"] = measured_rtt_ms(devices[0][1], daemon.port)
        r = median([large_get(f"rftp://alice@{devices[0][1]}:{daemon.port}", "tcp", size, work) for _ in range(a.runs)])
        r.update(rtt="50, 0.01 % loss", path="tcp", test="large file get")
        rows.append(r)
        print(json.dumps(r), flush=True)
    finally:
        set_path(0)
        daemon.stop()

    at_zero = {(r["path"], r["test"]): r["value"] for r in rows if r["rtt"] == 0}
    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    lines = [f"### {stamp} — UML guest (1 vCPU) on {platform.node()}, kernel {platform.release()}, netem on lo",
             "",
             f"Large file: {a.large_mib} MiB, tmpfs to tmpfs. Small files: {a.small_files} × 64 KiB, `-j 4`. "
             f"Default settings. Median of {a.runs} runs. GB = 10^9 bytes. Round trips measured as TCP handshakes: "
             + ", ".join(f"{k} ms → {v:.1f} ms" for k, v in rtts.items()) + ".",
             "",
             "| RTT (ms) | path | test | rate | vs 0 ms | TCP streams | ok |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        unit = "GB/s" if r["test"].startswith("large") else "files/s"
        base = at_zero.get((r["path"], r.get("base", r["test"])))
        ratio = f"{r['value'] / base:.2f} ×" if base and r["ok"] else "-"
        value = f"{r['value']:.3f}" if unit == "GB/s" else f"{r['value']:.0f}"
        streams = str(r["streams"]) if r.get("streams") and r["path"] == "tcp" else "–"
        lines.append(f"| {r['rtt']} | {r['path']} | {r['test']} | {value} {unit} | {ratio} | {streams} | "
                     f"{'yes' if r['ok'] else 'NO: ' + r['error'][:80]} |")
    lines.append("")
    for r in rows:
        if r["rtt"] == 50 and r["test"] == "large file get":
            base = at_zero[(r["path"], r["test"])]
            ratio = r["value"] / base if base else 0
            lines.append(f"- goal {r['path']} large file at 50 ms ≥ 0.9 × its 0 ms rate: {ratio:.2f} × "
                         f"**{'met' if ratio >= 0.9 else 'not met'}**")
    table = "\n".join(lines)
    print(table)
    if a.doc == "yes":
        replace_section(MARK_BEGIN, MARK_END, table, "Results: wide-area round trips (`make bench-wan`)")
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
