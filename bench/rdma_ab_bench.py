#!/usr/bin/env python3
"""make bench-rdma-ab, run INSIDE the RDMA lab guest (bench/rdma-ab-bench.sh
boots it): the rftp rows of make bench-rdma for two builds in the same boot,
a base and this one, so a change to the RDMA engine is measured against what
it replaced on the same guest, devices and memory. Runs alternate base, this,
this, base, ... so drift over the boot falls on both alike. Each build runs
its own shipped rftpd (info logging) and rftp. Per row: the median GB/s of
each build, and CPU seconds and the client's context switches per GB.
With --files N it measures files in a row instead: `get -r -j 4` and
`put -r -j 4` of N files of 64 KiB over each device, at round trips of 0
and 50 ms (netem on the guest's loopback, as make bench-wan), in files/s.
Prints the table; writes nothing."""

import argparse
import datetime
import json
import os
import platform
import resource
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rdma_bench import BUILD, MiB, Daemon, ib_write_bw, measure, median_of, prepare_guest_files, rftp_rows  # noqa: E402
from benchlib.wan_rows import RftpClient, measured_rtt_ms, prepare  # noqa: E402
from conftest import PASSWORD  # noqa: E402
from wan_bench import set_path  # noqa: E402


def client_switches() -> int:
    """Context switches of every waited-for child so far, all their threads."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_nvcsw + r.ru_nivcsw


def one_run(daemon, args, size, build) -> dict:
    before = client_switches()
    r = measure(daemon, args, size, build)
    r["client_switches"] = (client_switches() - before) / (size / 1e9)
    return r


def middle(runs: list, key: str) -> float:
    values = sorted(r[key] for r in runs)
    return values[len(values) // 2]


def files_in_a_row(a) -> int:
    """The --files rows: each build's own rftpd and rftp, runs alternating."""
    builds = {"base": Path(a.base_build), "this": BUILD}
    devices = [tuple(x.split("=", 1)) for x in os.environ["RFTP_LAB_DEVICES"].split()]
    work = Path(tempfile.mkdtemp(prefix="rdma-files-ab-", dir="/tmp"))
    daemons, lines = {}, []
    try:
        for i, (name, build) in enumerate(builds.items()):
            (work / name).mkdir()
            daemons[name] = Daemon(work / name, [addr for _, addr in devices], port=2121 + i,
                                   extra_config="rdma: {pool_size: 64M}\n", program=build / "rftpd", log_level="notice")
            prepare(daemons[name].root, 1, a.files)
        for rtt in (0, 50):
            set_path(rtt)
            measured = measured_rtt_ms(devices[0][1], daemons["base"].port, [])
            for (dev, addr), test in ((device, test) for device in devices for test in ("get -r", "put -r")):
                runs = {name: [] for name in builds}
                for round_ in range(a.runs):
                    for name in (builds if round_ % 2 == 0 else reversed(builds)):
                        d, client = daemons[name], RftpClient(builds[name], PASSWORD, [])
                        url = f"rftp://alice@{addr}:{d.port}"
                        r = (client.small_get(url, "rdma", a.files, work, d.root / "small") if test == "get -r"
                             else client.small_put(url, "rdma", a.files, d.root / "small", d.root))
                        runs[name].append(r["value"] if r["ok"] else 0.0)
                        if not r["ok"]:
                            print(f"{name} failed: {r['error'][-300:]}", flush=True)
                base, this = (sorted(runs[n])[len(runs[n]) // 2] for n in builds)
                ok = all(v > 0 for n in builds for v in runs[n])
                lines.append(f"| {rtt} ({measured:.1f}) | {dev} | {test} | {base:.0f} | {this:.0f} | "
                             f"{this / base if base else 0:.2f} | {'yes' if ok else 'NO'} |")
                print(lines[-1], flush=True)
    finally:
        set_path(0)
        for d in daemons.values():
            d.stop()
    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    print("\n".join([f"### {stamp} — UML guest (1 vCPU) on {platform.node()}, kernel {platform.release()}", "",
                     f"base: {a.base_build}; this: {BUILD}. `-j 4` with {a.files} × 64 KiB over RDMA, "
                     f"{a.runs} runs per row and build, alternating; medians in files/s.", "",
                     "| RTT ms (measured) | device | test | base files/s | this files/s | this / base | ok |",
                     "|---|---|---|---|---|---|---|", *lines]))
    return 0 if all(line.endswith("yes |") for line in lines) else 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base-build", required=True, help="the build to compare against")
    ap.add_argument("--size-mib", type=int, default=512)
    ap.add_argument("--runs", type=int, default=4, help="runs of each row per build (even: base and this alternate)")
    ap.add_argument("--files", type=int, default=0, help="measure N small files in a row at 0 and 50 ms instead")
    a = ap.parse_args()
    if a.files:
        return files_in_a_row(a)
    size = a.size_mib * MiB
    builds = {"base": Path(a.base_build), "this": BUILD}
    devices = [tuple(x.split("=", 1)) for x in os.environ["RFTP_LAB_DEVICES"].split()]
    work = Path(tempfile.mkdtemp(prefix="rdma-ab-", dir="/tmp"))
    src = prepare_guest_files(work, a.size_mib)
    daemons = {}
    rows = []
    try:
        for i, (name, build) in enumerate(builds.items()):
            (work / name).mkdir()
            daemons[name] = Daemon(work / name, [addr for _, addr in devices], port=2121 + i,
                                   extra_config="rdma: {pool_size: 64M}\n", program=build / "rftpd", log_level="info")
        for dev, addr in devices:
            limits = {qps: ib_write_bw(dev, addr, 18600 + qps, 4 * MiB, max(100, size // (4 * MiB)), qps) for qps in (1, 4)}
            for qps in (1, 4):
                runs = {name: {} for name in builds}
                for round_ in range(a.runs):
                    order = list(builds) if round_ % 2 == 0 else list(reversed(builds))
                    for name in order:
                        d = daemons[name]
                        for test, args in rftp_rows(f"rftp://alice@{addr}:{d.port}", qps, a.size_mib, src, work):
                            runs[name].setdefault(test, []).append(one_run(d, args, size, builds[name]))
                            (work / "down.bin").unlink(missing_ok=True)
                for test in runs["base"]:
                    row = {"device": dev, "test": test, "limit": limits[qps]}
                    for name in builds:
                        r = runs[name][test]
                        m = median_of(r)
                        row[name] = {"ok": all(x["ok"] for x in r), "gbps": m["gbps"], "spread": m.get("spread"),
                                     "cpu": middle(r, "client_cpu") + middle(r, "server_cpu"),
                                     "client_cpu": middle(r, "client_cpu"), "server_cpu": middle(r, "server_cpu"),
                                     "client_switches": middle(r, "client_switches"), "error": m["error"]}
                    rows.append(row)
                    print(json.dumps(row), flush=True)
                for d in daemons.values():
                    (d.root / "up.bin").unlink(missing_ok=True)
    finally:
        for d in daemons.values():
            d.stop()

    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    lines = [f"### {stamp} — UML guest (1 vCPU) on {platform.node()}, kernel {platform.release()}",
             "",
             f"base: {a.base_build}; this: {BUILD}. {a.size_mib} MiB per run, pools 64 MiB, {a.runs} runs per row "
             "and build, alternating; medians (range of GB/s in brackets). CPU is client + daemon seconds per GB; "
             "switches are the client's context switches per GB.",
             "",
             "| device | test | ib_write_bw GB/s | base GB/s | this GB/s | this / base | base CPU s/GB | this CPU s/GB | "
             "base switches/GB | this switches/GB | ok |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]

    def rate(r):
        spread = f" ({r['spread'][0]:.2f}–{r['spread'][1]:.2f})" if r.get("spread") else ""
        return f"{r['gbps']:.2f}{spread}"

    for row in rows:
        b, t = row["base"], row["this"]
        ok = b["ok"] and t["ok"]
        ratio = f"{t['gbps'] / b['gbps']:.2f}" if ok and b["gbps"] else "-"
        limit = f"{row['limit']:.2f}" if row["limit"] else "-"
        lines.append(f"| {row['device']} | {row['test']} | {limit} | {rate(b)} | {rate(t)} | {ratio} | {b['cpu']:.3f} | "
                     f"{t['cpu']:.3f} | {b['client_switches']:.0f} | {t['client_switches']:.0f} | "
                     f"{'yes' if ok else 'NO: ' + (b['error'] or t['error'])[:80]} |")
    print("\n".join(lines))
    return 0 if all(row["base"]["ok"] and row["this"]["ok"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
