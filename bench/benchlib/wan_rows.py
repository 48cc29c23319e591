"""The rows of the wide-area benches (bench/wan_bench.py in the lab guest,
bench/wan_tcp_bench.py on the host): rftp, iperf3 and the peers at a
round trip, each the median of several runs, and the table and goals
printed from them.

Every measurement returns {"ok", "value" (GB/s or files/s), "error",
"streams"}. Clients run behind `prefix` (a command that enters the client's
network namespace, or nothing), servers where the bench runs."""

import argparse
import datetime
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from .data import check_tree, check_tree_files, make_small_files, make_tree_files
from .doc_section import replace_section
from .wan_peers import Peers

MiB = 1 << 20
RTTS_MS = (0, 10, 50)
IPERF_PORT = 5211
RDMA_PATHS = ("rxe0", "siw0")
# The round trip of rows whose clients skip the delay line (plain loopback).
LOOPBACK = "0, no line"

_HANDSHAKES = """
import socket, sys, time
times = []
for _ in range(5):
    start = time.monotonic()
    with socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10):
        times.append((time.monotonic() - start) * 1000)
print(sorted(times)[2])
"""


def measured_rtt_ms(addr: str, port: int, prefix: list[str]) -> float:
    """The median of five TCP handshakes to addr:port from the client's side, in ms."""
    p = subprocess.run([*prefix, sys.executable, "-c", _HANDSHAKES, addr, str(port)],
                       capture_output=True, text=True, check=True)
    return float(p.stdout)


def iperf3_get(addr: str, size: int, prefix: list[str]) -> dict:
    """The limit: iperf3's server sends size bytes over one stream with
    sendfile (-Z -R), as rftpd sends a file to `get`."""
    server = subprocess.Popen(["iperf3", "-s", "-1", "-B", addr, "-p", str(IPERF_PORT)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):   # a probe connection would be the server's one test
            p = subprocess.run([*prefix, "iperf3", "-c", addr, "-p", str(IPERF_PORT), "-n", str(size), "-Z", "-R",
                                "-J"], capture_output=True, text=True, timeout=600)
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


class RftpClient:
    """rftp with --json, behind the client's prefix, logging in with password;
    with tls (rftp's --tls) as given, or rftp's default for the address;
    trusting the CA bundle ca where given."""

    def __init__(self, build: Path, password: str, prefix: list[str], tls: str | None = None,
                 ca: Path | None = None):
        self.build, self.password, self.prefix = build, password, prefix
        self.tls = ["--tls", tls] if tls else []
        self.ca = ca

    def run(self, args: list[str]) -> dict:
        env = dict(os.environ, RFTP_PASSWORD=self.password)
        if self.ca:
            env["RFTP_CA_BUNDLE"] = str(self.ca)
        start = time.monotonic()
        p = subprocess.run([*self.prefix, str(self.build / "rftp"), "--json", "--no-progress", *self.tls, *args],
                           capture_output=True, text=True, env=env, timeout=1800)
        wall = time.monotonic() - start
        summary = next((json.loads(l) for l in p.stdout.splitlines() if '"summary"' in l), {})
        return {"rc": p.returncode, "wall": wall, "summary": summary, "error": p.stderr[-300:]}

    def large_get(self, url: str, transport: str, size: int, work: Path, *extra: str, name: str = "large.bin",
                  discard: bool = False) -> dict:
        """One file into a new tmpfs file, or into /dev/null (discard), where
        the receiver writes nothing and only the path and the checks are left."""
        target = "/dev/null" if discard else str(work / "large.down")
        r = self.run(["--transport", transport, *extra, "get", f"{url}/{name}", target])
        (work / "large.down").unlink(missing_ok=True)
        ok = r["rc"] == 0 and r["summary"].get("bytes") == size
        seconds = r["summary"].get("seconds") or r["wall"]
        return {"ok": ok, "value": size / 1e9 / seconds if ok else 0.0, "error": "" if ok else r["error"],
                "streams": r["summary"].get("streams", 0), "bytes": size}

    def small_get(self, url: str, transport: str, count: int, work: Path, source: Path) -> dict:
        down = work / "small.down"
        down.mkdir()
        r = self.run(["--transport", transport, "-j", "4", "get", "-r", f"{url}/small/", str(down)])
        got = down / "small" if (down / "small").is_dir() else down
        error = r["error"] if r["rc"] else check_tree(got, source, count, 64 << 10, compare=False)
        subprocess.run(["rm", "-rf", str(down)])
        return {"ok": not error, "value": count / r["wall"] if not error else 0.0, "error": error}


    def tree_get(self, url: str, transport: str, count: int, work: Path) -> dict:
        """get -r -j 4 of url/tree/, the small files spread over directories."""
        down = work / "tree.down"
        down.mkdir()
        r = self.run(["--transport", transport, "-j", "4", "get", "-r", f"{url}/tree/", str(down)])
        error = r["error"] if r["rc"] else check_tree_files(down / "tree", count, 64 << 10)
        subprocess.run(["rm", "-rf", str(down)])
        return {"ok": not error, "value": count / r["wall"] if not error else 0.0, "error": error}

    def small_put(self, url: str, transport: str, count: int, source: Path, landed: Path) -> dict:
        """put -r of source into url/up/, which lands in the server's landed/up."""
        r = self.run(["--transport", transport, "-j", "4", "put", "-r", str(source), f"{url}/up/"])
        got = landed / "up" / source.name
        error = r["error"] if r["rc"] else check_tree(got, source, count, 64 << 10, compare=False)
        subprocess.run(["rm", "-rf", str(landed / "up")])
        return {"ok": not error, "value": count / r["wall"] if not error else 0.0, "error": error}


def median(runs: list) -> dict:
    failed = [r for r in runs if not r["ok"]]
    if failed:
        return failed[0]
    return sorted(runs, key=lambda r: r["value"])[len(runs) // 2]


def write_large_file(path: Path, mib: int):
    """mib MiB of random data, each MiB made unique by its number."""
    with open(path, "wb") as f:
        block = os.urandom(MiB)
        for i in range(mib):
            f.write(i.to_bytes(8, "little") + block[8:])


def prepare(root: Path, large_mib: int, small_count: int, tree: bool = False):
    """The served tree: large.bin, small/ with small_count files of 64 KiB,
    and with tree, tree/ with as many spread over directories."""
    write_large_file(root / "large.bin", large_mib)
    make_small_files(root / "small", small_count, 64 << 10)
    if tree:
        make_tree_files(root / "tree", small_count, 64 << 10)
    # The peers read the tree as other users (nobody, ftp).
    for d in (root.parent, root, root / "small", *(p for p in root.glob("tree/**") if p.is_dir())):
        os.chmod(d, 0o755)


def measure(rows: list, runs: int, label: dict, fn, *args) -> None:
    """Appends the median of runs calls of fn(*args), labelled."""
    r = median([fn(*args) for _ in range(runs)])
    r.update(label)
    rows.append(r)
    print(json.dumps(r), flush=True)


def measure_peers(rows: list, runs: int, label: dict, peers: Peers, size: int, count: int) -> None:
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
    for rtt, want_gridftp, want_curl in ((0, 3, 2), (LOOPBACK, 3, 2), (50, 5, None)):
        at = [r for r in rows if r["rtt"] == rtt and r["tcp"] == "default" and r["ok"]]
        rftp = next((r["value"] for r in at if r["path"] == "tcp" and r["test"].startswith("small")), None)
        gridftp = max((r["value"] for r in at if r["path"] == "GridFTP" and r["test"].startswith("small")),
                      default=None)
        curl = next((r["value"] for r in at if r["path"] == "vsftpd+curl" and r["test"].startswith("small")),
                    None)
        for peer, value, want in (("GridFTP's better mode", gridftp, want_gridftp), ("vsftpd+curl", curl, want_curl)):
            if want and rftp and value:
                ratio = rftp / value
                where = "on plain loopback (no delay line)" if rtt == LOOPBACK else f"at {rtt} ms"
                lines.append(f"- goal small files over TCP {where} ≥ {want} × {peer}: {rftp:.0f} vs "
                             f"{value:.0f} files/s, {ratio:.2f} × **{'met' if ratio >= want else 'not met'}**")
    return lines


def tree_goals(rows: list) -> list[str]:
    """The small files as a tree against GridFTP's better mode on the same
    tree, at 50 ms: the small-file goal's 5 ×, for a dataset's shape."""
    at = [r for r in rows if r["rtt"] == 50 and r["ok"] and r["test"].startswith("tree")]
    rftp = next((r["value"] for r in at if r["path"] == "tcp"), None)
    gridftp = max((r["value"] for r in at if r["path"] == "GridFTP"), default=None)
    if not rftp or not gridftp:
        return []
    ratio = rftp / gridftp
    return [f"- goal small files as a tree over TCP at 50 ms ≥ 5 × GridFTP's better mode: {rftp:.0f} vs "
            f"{gridftp:.0f} files/s, {ratio:.2f} × **{'met' if ratio >= 5 else 'not met'}**"]


def large_goals(rows: list) -> list[str]:
    """Each rftp path's large file at 50 ms against its own 0 ms rate."""
    at_zero = {(r["path"], r["test"], r["tcp"]): r["value"] for r in rows if r["rtt"] == 0}
    lines = []
    for r in rows:
        # "large file get", and "large file get, <what>" for a longer file's
        # rows or another destination.
        whole_file = r["test"] == "large file get" or r["test"].startswith("large file get, ")
        if r["rtt"] == 50 and whole_file and r["path"] in ("tcp", *RDMA_PATHS):
            base = at_zero.get((r["path"], r["test"], r["tcp"]))
            ratio = r["value"] / base if base else 0
            which = r["test"].removeprefix("large file get").lstrip(", ")
            lines.append(f"- goal {r['path']} large file{' (' + which + ')' if which else ''} at 50 ms "
                         "≥ 0.9 × its 0 ms rate, host TCP buffers "
                         f"{r['tcp']}: {ratio:.2f} × **{'met' if ratio >= 0.9 else 'not met'}**")
    return lines + beyond_set_up(rows)


def beyond_set_up(rows: list) -> list[str]:
    """The rate of a longer file's extra bytes, from two files of different
    sizes at the same round trip and destination: (S2 − S1) / (T2 − T1).
    Set-up and slow start cost both files alike and cancel, so this is the
    rate once the windows are open; T1 − S1 / rate is what they cost."""
    timed = {}
    for r in rows:
        if r["ok"] and r["path"] == "tcp" and r.get("bytes") and r["test"].startswith("large file get") \
                and "-P" not in r["test"]:
            into = "/dev/null" if r["test"].endswith("/dev/null") else "tmpfs"
            timed.setdefault((r["rtt"], into), []).append((r["bytes"], r["bytes"] / 1e9 / r["value"]))
    lines = []
    for into in ("tmpfs", "/dev/null"):
        rates, fixed = {}, {}
        for rtt in (0, 50):
            sizes = sorted(timed.get((rtt, into), []))
            if len(sizes) == 2 and sizes[1][0] > sizes[0][0] and sizes[1][1] > sizes[0][1]:
                (s1, t1), (s2, t2) = sizes
                rates[rtt] = (s2 - s1) / 1e9 / (t2 - t1)
                fixed[rtt] = t1 - s1 / 1e9 / rates[rtt]
        if len(rates) == 2:
            lines.append(f"- beyond set-up and slow start, into {into}: the longer file's extra bytes moved at "
                         f"{rates[50]:.3f} GB/s at 50 ms and {rates[0]:.3f} at 0 ms ({rates[50] / rates[0]:.2f} ×); "
                         f"set-up and slow start cost {fixed[50]:.2f} s at 50 ms and {fixed[0]:.2f} s at 0 ms")
    return lines


def format_table(rows: list, heading: str, description: str) -> str:
    """The rows under `### <date> — heading` and description, then the goals."""
    at_zero = {(r["path"], r["test"], r["tcp"]): r["value"] for r in rows if r["rtt"] == 0}
    iperf = {(r["rtt"], r["tcp"]): r["value"] for r in rows if r["path"] == "iperf3"}
    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    lines = [f"### {stamp} — {heading}", "", description, "",
             "| RTT (ms) | host TCP buffers | path | test | rate | vs 0 ms | vs iperf3 | TCP streams | ok |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        unit = "GB/s" if r["test"].startswith(("large", "iperf3")) else "files/s"
        base = at_zero.get((r["path"], r.get("base", r["test"]), r["tcp"])) if r["rtt"] != LOOPBACK else None
        ratio = f"{r['value'] / base:.2f} ×" if base and r["ok"] else "-"
        limit = iperf.get((r["rtt"], r["tcp"]))
        over_tcp = r["path"] not in ("iperf3", *RDMA_PATHS)
        vs_iperf = (f"{r['value'] / limit:.2f} ×" if limit and r["ok"] and over_tcp
                    and unit == "GB/s" else "–")
        value = f"{r['value']:.3f}" if unit == "GB/s" else f"{r['value']:.0f}"
        streams = str(r["streams"]) if r.get("streams") and r["path"] not in RDMA_PATHS else "–"
        lines.append(f"| {r['rtt']} | {r['tcp']} | {r['path']} | {r['test']} | {value} {unit} | {ratio} | "
                     f"{vs_iperf} | {streams} | {'yes' if r['ok'] else 'NO: ' + r['error'][:80]} |")
    lines.append("")
    return "\n".join(lines + large_goals(rows) + small_goals(rows) + tree_goals(rows))


def common_arguments(ap: argparse.ArgumentParser, small_files: int, streams: list[int]) -> None:
    """The options both wide-area benches take (docs/benchmarks.md)."""
    ap.add_argument("--large-mib", type=int, default=256)
    ap.add_argument("--small-files", type=int, default=small_files)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--doc", default="yes")
    ap.add_argument("--streams", type=lambda t: [int(x) for x in t.split(",") if x], default=streams,
                    help="-P rows for the large file over TCP at 50 ms")
    ap.add_argument("--peers", default="yes", help="GridFTP, XRootD and vsftpd+curl rows (yes/no)")


def publish(rows: list, heading: str, description: str, doc: str, markers: tuple[str, str], title: str) -> int:
    """Prints the table, writes it between markers unless doc is "no";
    the exit status: 0 when every row succeeded."""
    table = format_table(rows, heading, description)
    print(table)
    if doc == "yes":
        replace_section(*markers, table, title)
    return 0 if all(r["ok"] for r in rows) else 1
