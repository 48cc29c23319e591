#!/usr/bin/env python3
"""make bench-rdma, run INSIDE the RDMA lab guest (bench/lab-bench.sh boots
it): per device, perftest's ib_write_bw at rftp's block size with 1 and 4
queue pairs (the limits), then rftp memory-to-memory (/dev/zero ->
/dev/null) and file-to-file from tmpfs, with 1 and 4 queue pairs, each set
against the limit with as many queue pairs. GB/s and CPU seconds per GB on
each side. A reference row runs ib_write_bw at 16 MiB: one buffer that no
longer fits the CPU's cache.
Writes the table between the bench-rdma markers of docs/benchmarks.md
unless --doc no.

The guest has ONE virtual CPU: client and daemon share it, as do perftest's
two ends, so the ratio against ib_write_bw is the fair comparison here."""

import argparse
import datetime
import json
import os
import platform
import re
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
BLOCK = 4 * MiB  # the client's default RDMA block
MARK_BEGIN, MARK_END = "<!-- bench-rdma:results:begin -->", "<!-- bench-rdma:results:end -->"


def proc_cpu(pid: int) -> float:
    """utime + stime of a process, all its threads, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def ib_write_bw(dev, addr, port, size, iters, qps=1):
    """GB/s (10^9 bytes) of ib_write_bw, retrying perftest's clock-calibration glitch in UML."""
    opts = ["-d", dev, "-R", "-p", str(port), "-s", str(size), "-n", str(iters), "-q", str(qps), "-F"]
    for _ in range(5):
        srv = subprocess.Popen(["stdbuf", "-oL", "ib_write_bw", *opts], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
        time.sleep(1.0)
        cli = subprocess.run(["ib_write_bw", *opts, addr], capture_output=True, text=True, timeout=120)
        srv.wait(timeout=60)
        rows = [l.split() for l in cli.stdout.splitlines() if re.match(r"^\s*\d+\s+\d+\s", l)]
        if cli.returncode == 0 and rows:
            mib_s = float(rows[-1][3])
            if mib_s > 0:
                return mib_s * MiB / 1e9  # GB/s
    return None


def run_rftp(daemon, args, build=BUILD):
    env = dict(os.environ, RFTP_PASSWORD=PASSWORD)
    before = proc_cpu(daemon.proc.pid)
    start = time.monotonic()
    p = subprocess.Popen([str(build / "rftp"), "--json", "--no-progress", *args], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    out, err = p.communicate(timeout=600)
    wall = time.monotonic() - start
    server_cpu = proc_cpu(daemon.proc.pid) - before
    summary = next((json.loads(l) for l in out.splitlines() if '"summary"' in l), {})
    return p.returncode, summary, wall, server_cpu, err


def measure(daemon, args, size, build=BUILD):
    """Runs one rftp with its CPU measured from its rusage (children of this process)."""
    r0 = os.times()
    rc, summary, wall, server_cpu, err = run_rftp(daemon, args, build)
    r1 = os.times()
    client_cpu = (r1.children_user - r0.children_user) + (r1.children_system - r0.children_system)
    ok = rc == 0 and summary.get("bytes") == size and summary.get("transport") == "rdma"
    # The data phase, as ib_write_bw measures it (no login, no connection setup);
    # the whole command's rate is kept beside it.
    seconds = summary.get("transfer_seconds") or summary.get("seconds") or wall
    gb = size / 1e9
    return {"ok": ok, "gbps": gb / seconds if ok else 0.0, "command_gbps": gb / (summary.get("seconds") or wall), "client_cpu": client_cpu / gb, "server_cpu": server_cpu / gb,
            "notice": summary.get("rdma_notice", "-"), "error": "" if ok else (summary.get("message") or err[-300:])}


def median_of(runs: list) -> dict:
    """The run with the median rate (a failed run instead, if any), with the
    spread of all of them."""
    failed = [r for r in runs if not r["ok"]]
    if failed:
        return failed[0]
    ranked = sorted(runs, key=lambda r: r["gbps"])
    row = dict(ranked[len(ranked) // 2])
    row["spread"] = (ranked[0]["gbps"], ranked[-1]["gbps"])
    return row


def rftp_rows(url: str, qps: int, size_mib: int, src: Path, work: Path) -> list:
    """The rftp rows with qps queue pairs: (name, rftp arguments). get reads what put wrote."""
    return [
        (f"mem->mem -P{qps}", ["put", "-P", str(qps), "--size", f"{size_mib}M", "/dev/zero", f"{url}/dev/null"]),
        (f"put tmpfs->tmpfs -P{qps}", ["put", "-P", str(qps), str(src), f"{url}/up.bin"]),
        (f"get tmpfs->tmpfs -P{qps}", ["get", "-P", str(qps), f"{url}/up.bin", str(work / "down.bin")]),
    ]


def prepare_guest_files(work: Path, size_mib: int) -> Path:
    """Touches the memory the runs will use and writes the source file; returns its path.
    The guest's memory is sparse, backed by the host's /dev/shm: the first
    touch of each page costs a host page fault. Touching it once first keeps
    the first rows from paying for it (it made them 4x slower)."""
    warm = work / "warm.bin"
    with open(warm, "wb") as f:
        chunk = b"\0" * (64 * MiB)
        for _ in range(3 * size_mib // 64 + 1):
            f.write(chunk)
    warm.unlink()
    src = work / "src.bin"
    with open(src, "wb") as f:  # distinct blocks, cheaply (one slow guest CPU)
        block = os.urandom(MiB)
        for i in range(size_mib):
            f.write(i.to_bytes(8, "little") + block[8:])
    return src


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mib", type=int, default=1024, help="bytes per run, MiB (the guest holds three copies)")
    ap.add_argument("--runs", type=int, default=3, help="runs of each row and of ib_write_bw; medians are reported")
    ap.add_argument("--doc", default="yes")
    ap.add_argument("--only", default="", help="run only tests whose name contains this (implies --doc no)")
    a = ap.parse_args()
    size = a.size_mib * MiB
    devices = [tuple(x.split("=", 1)) for x in os.environ["RFTP_LAB_DEVICES"].split()]
    work = Path(tempfile.mkdtemp(prefix="rdma-bench-", dir="/tmp"))
    daemon = Daemon(work, [addr for _, addr in devices],
                    extra_config="rdma: {pool_size: 64M}\n")
    src = prepare_guest_files(work, a.size_mib)
    rows = []
    try:
        for dev, addr in devices:
            # perftest's rate moves from run to run as much as rftp's: both
            # are the median of the same number of runs. perftest gives every
            # queue pair its own buffer and reuses it for every message.
            def perftest_row(block, qps, kind):
                runs = sorted(x for x in (ib_write_bw(dev, addr, 18600 + i, block, max(100, size // block), qps)
                                          for i in range(a.runs)) if x)
                gbps = runs[len(runs) // 2] if runs else None
                rows.append({"device": dev, "test": f"ib_write_bw {block // MiB} MiB -q {qps}", "gbps": gbps or 0.0,
                             "client_cpu": None, "server_cpu": None, "ok": gbps is not None, "notice": "-",
                             "limit": kind, "error": "" if gbps else "no result",
                             "spread": (runs[0], runs[-1]) if runs else None})
                print(json.dumps(rows[-1]), flush=True)
                return gbps

            limits = {qps: perftest_row(BLOCK, qps, "limit") for qps in (1, 4)}
            if not a.only:
                perftest_row(4 * BLOCK, 1, "reference")
            url = f"rftp://alice@{addr}:2121"
            for qps in (1, 4):
                limit = limits[qps]
                for name, args in rftp_rows(url, qps, a.size_mib, src, work):
                    if a.only not in name:
                        continue
                    runs = []
                    for _ in range(a.runs):
                        runs.append(measure(daemon, args, size))
                        (work / "down.bin").unlink(missing_ok=True)
                    r = median_of(runs)
                    r.update(device=dev, test=name, limit=False)
                    r["ratio"] = r["gbps"] / limit if limit and r["ok"] else None
                    r["ratio_1qp"] = r["gbps"] / limits[1] if limits[1] and r["ok"] else None
                    rows.append(r)
                    print(json.dumps(r), flush=True)
                (daemon.root / "up.bin").unlink(missing_ok=True)
                (work / "down.bin").unlink(missing_ok=True)
    finally:
        daemon.stop()

    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    lines = [f"### {stamp} — UML guest (1 vCPU) on {platform.node()}, kernel {platform.release()}",
             "",
             f"{a.size_mib} MiB per run, block {BLOCK // MiB} MiB, iodepth 8, pools 64 MiB. GB = 10^9 bytes. "
             f"Each row, ib_write_bw's included, is the median of {a.runs} runs (their range in brackets). "
             "Client and daemon share the guest's one CPU, as perftest's two ends do. "
             "Each rftp row is set against ib_write_bw with as many queue pairs (`-q`), and against one.",
             "",
             "| device | test | GB/s (data phase) | vs ib_write_bw, same QPs | vs ib_write_bw -q 1 | GB/s (whole command) | client CPU s/GB | server CPU s/GB | notice | ok |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ratio = r["limit"] if r.get("limit") else (f"{r['ratio']:.2f} ×" if r.get("ratio") else "-")
        ratio_1qp = "-" if r.get("limit") or not r.get("ratio_1qp") else f"{r['ratio_1qp']:.2f} ×"
        ccpu = "-" if r["client_cpu"] is None else f"{r['client_cpu']:.3f}"
        scpu = "-" if r["server_cpu"] is None else f"{r['server_cpu']:.3f}"
        whole = f"{r['command_gbps']:.2f}" if r.get("command_gbps") else "-"
        spread = f" ({r['spread'][0]:.2f}–{r['spread'][1]:.2f})" if r.get("spread") and len(set(r["spread"])) > 1 else ""
        lines.append(f"| {r['device']} | {r['test']} | {r['gbps']:.2f}{spread} | {ratio} | {ratio_1qp} | {whole} | {ccpu} | {scpu} | "
                     f"{r['notice']} | {'yes' if r['ok'] else 'NO: ' + r['error'][:80]} |")
    goals = [r for r in rows if not r.get("limit") and r["test"].startswith("mem")]
    lines.append("")
    for r in goals:
        met = r.get("ratio") and r["ratio"] >= 0.9
        lines.append(f"- goal {r['device']} {r['test']} ≥ 0.9 × ib_write_bw with as many queue pairs: "
                     f"{(r.get('ratio') or 0):.2f} × **{'met' if met else 'not met'}** "
                     f"({(r.get('ratio_1qp') or 0):.2f} × ib_write_bw -q 1)")
    table = "\n".join(lines)
    print(table)
    if a.doc == "yes" and not a.only:
        replace_section(MARK_BEGIN, MARK_END, table, "Results: RDMA (`make bench-rdma`)")
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
