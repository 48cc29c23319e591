#!/usr/bin/env python3
"""make bench-wan, run INSIDE the RDMA lab guest (bench/lab-bench.sh boots
it): rftp at round-trip times of 0, 10 and 50 ms, over TCP, siw and rxe.
The guest's kernel has netem (tests/rdma/lab/build-kernel.sh); all traffic
between the lab's two addresses passes the loopback device once each way,
so netem there delays every packet by half the round trip. The round trip
is measured as a TCP handshake to rftpd, not assumed.

Rows, each the median of --runs runs with rftp's default settings:
- the limit: iperf3 -Z -R moving the large file's bytes over one stream;
- one large file, get (GB/s), and its ratio to the same transport at 0 ms
  and, over TCP, to iperf3 at the same round trip;
- many small files, get -r -j 4 (files/s);
- the large file over TCP at 50 ms with -P 1, 2, 4 and 8 (--streams);
- the large file over TCP at 50 ms with 0.01 % loss;
- iperf3 and the large file on every path again at 0 and 50 ms, with the
  guest's TCP buffers raised as ESnet's fasterdata advises for long paths
  (TUNED_TCP_BUFFERS): what the host's window ceiling costs, apart from
  what rftp costs.
- the peers over TCP at every round trip, from the same tree (--peers):
  GridFTP (`globus-url-copy -r -cc 4`, with and without `-pp`; `-p 4` for
  the large file), XRootD (`xrdcp -r --parallel 4`; `xrdcp`) and
  vsftpd+curl (`--parallel-max 4`; one stream), with their own defaults.
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
from benchlib.data import check_tree, make_small_files  # noqa: E402
from benchlib.doc_section import replace_section  # noqa: E402
from benchlib.wan_peers import GuestPeers  # noqa: E402

MiB = 1 << 20
RTTS_MS = (0, 10, 50)
MARK_BEGIN, MARK_END = "<!-- bench-wan:results:begin -->", "<!-- bench-wan:results:end -->"
IPERF_PORT = 5211
# fasterdata.es.net's host tuning for paths up to about 100 ms: a 64 MiB
# ceiling for autotuning and for SO_RCVBUF/SO_SNDBUF. The kernel default
# ceiling (tcp_rmem's third field, 6 MiB here) caps one stream's window.
TUNED_TCP_BUFFERS = {
    "net/core/rmem_max": "67108864",
    "net/core/wmem_max": "67108864",
    "net/ipv4/tcp_rmem": "4096 131072 67108864",
    "net/ipv4/tcp_wmem": "4096 16384 67108864",
}


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


def set_tcp_buffers(values: dict) -> dict:
    """Writes the sysctls in values; returns what they were."""
    before = {}
    for key, value in values.items():
        path = Path("/proc/sys") / key
        before[key] = path.read_text().strip()
        path.write_text(value)
    return before


def iperf3_get(addr: str, size: int) -> dict:
    """The limit: iperf3's server sends size bytes over one stream with
    sendfile (-Z -R), as rftpd sends a file to `get`."""
    server = subprocess.Popen(["iperf3", "-s", "-1", "-B", addr, "-p", str(IPERF_PORT)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):   # a probe connection would be the server's one test
            p = subprocess.run(["iperf3", "-c", addr, "-p", str(IPERF_PORT), "-n", str(size), "-Z", "-R", "-J"],
                               capture_output=True, text=True, timeout=600)
            if "unable to connect" not in p.stdout + p.stderr:
                break
            time.sleep(0.1)
    finally:
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:   # no client reached it
            server.kill()
            server.wait()
    try:
        rate = json.loads(p.stdout)["end"]["sum_received"]["bits_per_second"] / 8 / 1e9
    except (ValueError, KeyError):
        return {"ok": False, "value": 0.0, "error": (p.stdout + p.stderr)[-300:], "streams": 1}
    return {"ok": p.returncode == 0, "value": rate, "error": p.stderr[-300:], "streams": 1}


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
    got = down / "small" if (down / "small").is_dir() else down
    error = r["error"] if r["rc"] else check_tree(got, work / "alice" / "small", count, 64 << 10, compare=False)
    subprocess.run(["rm", "-rf", str(down)])
    return {"ok": not error, "value": count / r["wall"] if not error else 0.0, "error": error}


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
    make_small_files(root / "small", small_count, 64 << 10)
    # The peers read the tree as other users (nobody, ftp).
    for d in (root.parent, root, root / "small"):
        os.chmod(d, 0o755)


def measure(rows: list, runs: int, label: dict, fn, *args) -> None:
    """Appends the median of runs calls of fn(*args), labelled."""
    r = median([fn(*args) for _ in range(runs)])
    r.update(label)
    rows.append(r)
    print(json.dumps(r), flush=True)


def measure_peers(rows: list, runs: int, label: dict, peers: GuestPeers, size: int, count: int) -> None:
    """The peers' rows at the round trip in force, over TCP on the same tree."""
    for path, test, fn, *args in (
            ("GridFTP", "small files -r -cc 4", peers.gridftp_small, count, False),
            ("GridFTP", "small files -r -cc 4 -pp", peers.gridftp_small, count, True),
            ("XRootD", "small files -r --parallel 4", peers.xrootd_small, count),
            ("vsftpd+curl", "small files --parallel-max 4", peers.curl_small, count),
            ("GridFTP", "large file get -p 4", peers.gridftp_large, size),
            ("XRootD", "large file get", peers.xrootd_large, size),
            ("vsftpd+curl", "large file get", peers.curl_large, size)):
        measure(rows, runs, dict(label, path=path, test=test), fn, *args)


def small_goals(rows: list) -> list[str]:
    """rftp's small files over TCP against GridFTP's better mode and
    vsftpd+curl at the same round trip and buffers: 3 × and 2 × at 0 ms,
    5 × GridFTP at 50 ms (docs/benchmarks.md, Goals)."""
    lines = []
    for rtt, want_gridftp, want_curl in ((0, 3, 2), (50, 5, None)):
        at = [r for r in rows if r["rtt"] == rtt and r["tcp"] == "default" and r["ok"]]
        rftp = next((r["value"] for r in at if r["path"] == "tcp" and r["test"].startswith("small")), None)
        gridftp = max((r["value"] for r in at if r["path"] == "GridFTP" and r["test"].startswith("small")),
                      default=None)
        curl = next((r["value"] for r in at if r["path"] == "vsftpd+curl" and r["test"].startswith("small")),
                    None)
        for peer, value, want in (("GridFTP's better mode", gridftp, want_gridftp), ("vsftpd+curl", curl, want_curl)):
            if want and rftp and value:
                ratio = rftp / value
                lines.append(f"- goal small files over TCP at {rtt} ms ≥ {want} × {peer}: {rftp:.0f} vs "
                             f"{value:.0f} files/s, {ratio:.2f} × **{'met' if ratio >= want else 'not met'}**")
    return lines


def host_name() -> str:
    """The host the guest runs on (lab-bench.sh says; the guest has no name)."""
    return os.environ.get("RFTP_BENCH_HOST") or platform.node()


def format_table(rows: list, rtts: dict, a) -> str:
    at_zero = {(r["path"], r["test"], r["tcp"]): r["value"] for r in rows if r["rtt"] == 0}
    iperf = {(r["rtt"], r["tcp"]): r["value"] for r in rows if r["path"] == "iperf3"}
    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    lines = [f"### {stamp} — UML guest (1 vCPU) on {host_name()}, kernel {platform.release()}, netem on lo",
             "",
             f"Large file: {a.large_mib} MiB, tmpfs to tmpfs. Small files: {a.small_files} × 64 KiB, `-j 4`. "
             f"rftp's default settings; the peers' own over TCP to 127.0.0.1 (the same loopback). Median of {a.runs} runs. GB = 10^9 bytes. Round trips measured as TCP "
             "handshakes: " + ", ".join(f"{k} ms → {v:.1f} ms" for k, v in rtts.items()) + ". "
             "Host TCP buffers: the guest kernel's defaults, or raised to a 64 MiB ceiling (fasterdata).",
             "",
             "| RTT (ms) | host TCP buffers | path | test | rate | vs 0 ms | vs iperf3 | TCP streams | ok |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        unit = "GB/s" if r["test"].startswith(("large", "iperf3")) else "files/s"
        base = at_zero.get((r["path"], r.get("base", r["test"]), r["tcp"]))
        ratio = f"{r['value'] / base:.2f} ×" if base and r["ok"] else "-"
        limit = iperf.get((r["rtt"], r["tcp"]))
        over_tcp = r["path"] not in ("iperf3", "rxe0", "siw0")
        vs_iperf = (f"{r['value'] / limit:.2f} ×" if limit and r["ok"] and over_tcp
                    and unit == "GB/s" else "–")
        value = f"{r['value']:.3f}" if unit == "GB/s" else f"{r['value']:.0f}"
        streams = str(r["streams"]) if r.get("streams") and r["path"] not in ("rxe0", "siw0") else "–"
        lines.append(f"| {r['rtt']} | {r['tcp']} | {r['path']} | {r['test']} | {value} {unit} | {ratio} | "
                     f"{vs_iperf} | {streams} | {'yes' if r['ok'] else 'NO: ' + r['error'][:80]} |")
    lines.append("")
    for r in rows:
        if r["rtt"] == 50 and r["test"] == "large file get" and r["path"] in ("tcp", "rxe0", "siw0"):
            base = at_zero[(r["path"], r["test"], r["tcp"])]
            ratio = r["value"] / base if base else 0
            lines.append(f"- goal {r['path']} large file at 50 ms ≥ 0.9 × its 0 ms rate, host TCP buffers "
                         f"{r['tcp']}: {ratio:.2f} × **{'met' if ratio >= 0.9 else 'not met'}**")
    lines += small_goals(rows)
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--large-mib", type=int, default=256)
    ap.add_argument("--small-files", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--doc", default="yes")
    ap.add_argument("--streams", type=lambda t: [int(x) for x in t.split(",") if x], default=[1, 2, 4, 8],
                    help="-P rows for the large file over TCP at 50 ms")
    ap.add_argument("--peers", default="yes", help="GridFTP, XRootD and vsftpd+curl rows (yes/no)")
    a = ap.parse_args()
    devices = [tuple(x.split("=", 1)) for x in os.environ["RFTP_LAB_DEVICES"].split()]
    work = Path(tempfile.mkdtemp(prefix="wan-bench-", dir="/tmp"))
    daemon = Daemon(work, [addr for _, addr in devices], extra_config="rdma: {pool_size: 64M}\n", log_level="notice")
    prepare(daemon.root, a.large_mib, a.small_files)
    size = a.large_mib * MiB
    tcp_addr = devices[0][1]
    tcp_url = f"rftp://alice@{tcp_addr}:{daemon.port}"
    # TCP over the first address; RDMA over each device's own.
    paths = [("tcp", "tcp", tcp_addr)] + [(dev, "rdma", addr) for dev, addr in devices]
    rows, rtts = [], {}
    defaults = None
    peers = GuestPeers(work, daemon.root) if a.peers == "yes" else None
    try:
        for rtt in RTTS_MS:
            set_path(rtt)
            rtts[rtt] = measured_rtt_ms(tcp_addr, daemon.port)
            label = {"rtt": rtt, "tcp": "default"}
            measure(rows, a.runs, dict(label, path="iperf3", test="iperf3 -Z -R"), iperf3_get, tcp_addr, size)
            for name, transport, addr in paths:
                url = f"rftp://alice@{addr}:{daemon.port}"
                measure(rows, a.runs, dict(label, path=name, test="large file get"),
                        large_get, url, transport, size, work)
                measure(rows, a.runs, dict(label, path=name, test="small files get -r -j 4"),
                        small_get, url, transport, a.small_files, work)
            if peers:
                measure_peers(rows, a.runs, label, peers, size, a.small_files)
        # Streams given with -P at 50 ms, beside the default's own choice above.
        for n in a.streams:
            measure(rows, a.runs, {"rtt": 50, "tcp": "default", "path": "tcp", "test": f"large file get -P {n}",
                                   "base": "large file get"}, large_get, tcp_url, "tcp", size, work, "-P", str(n))
        set_path(50, 0.01)
        rtts["50+loss"] = measured_rtt_ms(tcp_addr, daemon.port)
        label = {"rtt": "50, 0.01 % loss", "tcp": "default"}
        measure(rows, a.runs, dict(label, path="iperf3", test="iperf3 -Z -R"), iperf3_get, tcp_addr, size)
        measure(rows, a.runs, dict(label, path="tcp", test="large file get"), large_get, tcp_url, "tcp", size, work)
        # The same large file with the host's TCP buffers raised.
        defaults = set_tcp_buffers(TUNED_TCP_BUFFERS)
        for rtt in (0, 50):
            set_path(rtt)
            label = {"rtt": rtt, "tcp": "64 MiB"}
            measure(rows, a.runs, dict(label, path="iperf3", test="iperf3 -Z -R"), iperf3_get, tcp_addr, size)
            for name, transport, addr in paths:
                measure(rows, a.runs, dict(label, path=name, test="large file get"),
                        large_get, f"rftp://alice@{addr}:{daemon.port}", transport, size, work)
    finally:
        if defaults:
            set_tcp_buffers(defaults)
        set_path(0)
        if peers:
            peers.stop()
        daemon.stop()

    table = format_table(rows, rtts, a)
    print(table)
    if a.doc == "yes":
        replace_section(MARK_BEGIN, MARK_END, table, "Results: wide-area round trips (`make bench-wan`)")
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
