#!/usr/bin/env python3
"""make bench-disk: rftp file-to-file on a real disk against fio on the same
disk. Runs in one of two places (bench/disk-bench.sh runs both):

  --where host   on the machine's own disk, over TCP (1 and 4 streams);
  --where guest  in the RDMA lab guest, on its ext4 block device
                 ($LAB_DISK), over RDMA on each soft device (1 and 4 queue pairs).

The limit is fio's sequential O_DIRECT read and write (io_uring, the same
block size and queue depth as rftp's disk engine, the write into a new file
as a copy's is, its buffers in huge pages as rftp's are) on the same file
system; the goal is rftp at 0.9 of the slower of the two. A copy on one disk
reads and writes it at once, so a second, fairer limit is fio doing the
same: one job reading the file while another writes a new one (each at
rftp's depth); the slower of the two rates is the most a copy on this disk
can reach. Between two machines each disk does one of the two, so each side
also runs alone with the other end in memory: the source side (the daemon
reads the disk, the client writes /dev/null) against fio's read rate, the
sink side (the client reads /dev/zero, the daemon writes the disk) against
fio's write rate, each also capped by the network measured in the same run
(iperf3 -P4 -Z on loopback; ib_write_bw per RDMA device, the better of one
and four queue pairs).
The -P4 rows run again with --no-block-checksums, for CPU seconds per GB
with checksums on and off. Local copies with dd and cp on the same disk are
the peers (their CPU is in the client column). Each
row is the median of --runs runs, each run right after a pass of its own
limit (this disk's rate moves by a third within minutes): the ratio to it is
the median of those pairs'. The page cache is dropped before every run
where the system allows it (root). CPU seconds per GB for client and daemon.
Prints a Markdown table; writes it into docs/benchmarks.md between this
place's markers unless --doc no."""

import argparse
import contextlib
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "rdma" / "guest"))
# The lab's Daemon helper serves any address; on the host it listens on loopback.
os.environ.setdefault("RFTP_LAB_DEVICES", "loopback=127.0.0.1")
from conftest import BUILD, PASSWORD, Daemon  # noqa: E402

MiB = 1 << 20
BLOCK = 4 * MiB   # rftp's RDMA block; TCP runs ask for the same
DEPTH = 4         # storage.queue_depth's default


def proc_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def drop_caches() -> bool:
    subprocess.run(["sync"], check=False)
    try:
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


# fio's buffers in explicit 2 MiB pages, reserved around each pass where the
# system allows it (root): rftp's blocks sit in huge pages (middleware/
# block_memory.h), and in 4 KiB pages scattered in memory fio's 4 MiB reads are
# cut into ~1 MiB requests, which on this disk gave 1.8-2.4 GB/s against
# 2.9-3.1 in huge pages. 48 pages hold the largest pass (two jobs, 4 blocks each).
FIO_HUGE_PAGES = 48
fio_pages_seen = set()


@contextlib.contextmanager
def reserved_huge_pages(count: int):
    """Yields whether count more explicit huge pages are free; gives back
    what was reserved before afterwards."""
    knob = Path("/proc/sys/vm/nr_hugepages")
    try:
        before = int(knob.read_text())
        knob.write_text(f"{before + count}\n")
    except (OSError, ValueError):
        yield False
        return
    try:
        meminfo = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
        yield int(meminfo.get("HugePages_Free", "0").split()[0]) >= count
    finally:
        knob.write_text(f"{before}\n")


def fio(path: Path, rw: str, size_mib: int, new_file: Path | None = None) -> float:
    """GB/s of one sequential O_DIRECT pass. "copy": two jobs at once, one
    reading path and one writing a new file (beside it unless new_file names
    one elsewhere), each at rftp's depth, as a copy does; the slower of their
    two rates."""
    drop_caches()
    new_file = new_file or path.with_suffix(".new")
    new_file.unlink(missing_ok=True)
    common = [f"--bs={BLOCK}", f"--iodepth={DEPTH}", "--ioengine=io_uring", "--direct=1", f"--size={size_mib}M"]
    jobs = (["--name=read", f"--filename={path}", "--rw=read", *common,
             "--name=write", f"--filename={new_file}", "--rw=write", *common] if rw == "copy"
            else [f"--name={rw}", f"--filename={path}", f"--rw={rw}", *common])
    with reserved_huge_pages(FIO_HUGE_PAGES) as huge:
        fio_pages_seen.add("huge" if huge else "small")
        out = subprocess.run(["fio", "--output-format=json", *(["--mem=shmhuge"] if huge else []), *jobs],
                             capture_output=True, text=True, check=True).stdout
    new_file.unlink(missing_ok=True)
    rates = [job[d]["bw_bytes"] / 1e9 for job in json.loads(out[out.index("{"):])["jobs"]
             for d in ("read", "write") if job[d]["io_bytes"] > 0]
    return min(rates)


def fio_tree(large: Path, small: list, jobs: int, out: Path) -> float:
    """GB/s of fio copying a tree of one large file and many small ones the
    way `put -r -j jobs` shares it out, all at once: one pair of jobs reads
    the large file while writing a new one (rftp's block size and depth), and
    jobs - 1 pairs share the small files, one job reading its share and one
    writing as many new files of the same size, each synced as it is closed
    (as rftpd syncs an upload before its rename). The tree's bytes over the
    time the slowest job took. No per-file protocol, no CPU for a network:
    what this disk does with the same mix."""
    subprocess.run(["rm", "-rf", str(out)], check=True)
    common = "ioengine=io_uring\ndirect=1\nopenfiles=1\nfile_service_type=sequential\n"
    sections = [f"[large-read]\nfilename={large}\nrw=read\nbs={BLOCK}\niodepth={DEPTH}\n{common}",
                f"[large-write]\nfilename={out / 'large.new'}\nsize={large.stat().st_size}\nrw=write\n"
                f"bs={BLOCK}\niodepth={DEPTH}\n{common}"]
    pairs = max(1, jobs - 1)
    for k in range(pairs):
        share = small[k::pairs]
        if not share:
            continue
        size = share[0].stat().st_size
        (out / f"small-{k}").mkdir(parents=True)
        # fio takes a list of files from a directory (a job's option is at most 4096 bytes).
        (out / f"share-{k}").mkdir()
        for path in share:
            os.link(path, out / f"share-{k}" / path.name)
        sections += [f"[small-read-{k}]\nopendir={out / f'share-{k}'}\nrw=read\nbs={size}\niodepth=1\n{common}",
                     f"[small-write-{k}]\ndirectory={out / f'small-{k}'}\nnrfiles={len(share)}\nfilesize={size}\n"
                     f"rw=write\nbs={size}\niodepth=1\ncreate_on_open=1\nfsync_on_close=1\n{common}"]
    job_file = out / "tree.fio"
    job_file.write_text("\n".join(sections))
    drop_caches()
    with reserved_huge_pages(FIO_HUGE_PAGES) as huge:
        fio_pages_seen.add("huge" if huge else "small")
        done = subprocess.run(["fio", "--output-format=json", *(["--mem=shmhuge"] if huge else []), str(job_file)],
                              capture_output=True, text=True, check=True).stdout
    subprocess.run(["rm", "-rf", str(out)], check=True)
    report = json.loads(done[done.index("{"):])["jobs"]
    moved = sum(job[d]["io_bytes"] for job in report for d in ("read", "write")) / 2
    seconds = max(job["job_runtime"] for job in report) / 1000
    return moved / 1e9 / seconds


def network_limit(transport: str, name: str, addr: str) -> float:
    """GB/s the network alone carries between the two ends: iperf3 with 4
    streams (zero copy) over TCP; over RDMA ib_write_bw at rftp's block size,
    the better of 1 and 4 queue pairs (in the one-CPU guest four cost siw more
    than half its rate, bench-rdma). Median of three."""
    if transport == "rdma":
        from rdma_bench import ib_write_bw
        return max(sorted(ib_write_bw(name, addr, 18700 + 3 * q + i, BLOCK, 1000, q) or 0.0 for i in range(3))[1]
                   for q in (1, 4))
    runs = []
    for _ in range(3):
        srv = subprocess.Popen(["iperf3", "-s", "-1", "-p", "5301"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        out = subprocess.run(["iperf3", "-c", addr, "-p", "5301", "-P", "4", "-Z", "-t", "5", "-J"],
                             capture_output=True, text=True).stdout
        srv.wait(timeout=30)
        try:
            runs.append(json.loads(out)["end"]["sum_received"]["bits_per_second"] / 8e9)
        except (ValueError, KeyError):
            runs.append(0.0)
    return sorted(runs)[1]


def local_copy(tool: str, src: Path, dst: Path) -> dict:
    """A peer on the same disk: the file copied by dd (O_DIRECT both ends,
    4 MiB) or by cp (buffered, then sync so the bytes are on the disk)."""
    drop_caches()
    dst.unlink(missing_ok=True)
    cmd = {"dd": ["dd", f"if={src}", f"of={dst}", f"bs={BLOCK}", "iflag=direct", "oflag=direct", "status=none"],
           "cp": ["sh", "-c", f"cp '{src}' '{dst}' && sync"]}[tool]
    t0, c0 = time.monotonic(), os.times()
    p = subprocess.run(cmd, capture_output=True, text=True)
    seconds, c1 = time.monotonic() - t0, os.times()
    ok = p.returncode == 0 and dst.stat().st_size == src.stat().st_size
    gb = src.stat().st_size / 1e9
    dst.unlink(missing_ok=True)
    return {"ok": ok, "gbps": gb / seconds if ok else 0.0, "error": p.stderr[-200:],
            "client_cpu": ((c1.children_user - c0.children_user) + (c1.children_system - c0.children_system)) / gb,
            "server_cpu": 0.0}


def median_row(runs: list) -> dict:
    """The run with the median rate, any failure instead if one failed."""
    failed = [r for r in runs if not r["ok"]]
    if failed:
        return failed[0]
    return sorted(runs, key=lambda r: r["gbps"])[len(runs) // 2]


def crc32c_cost() -> tuple[float, float]:
    """CPU seconds per GB and GB/s of the CRC32C rftp computes per block
    (ISA-L's crc32_iscsi, the function the engine calls), on 4 MiB blocks."""
    import ctypes
    lib = ctypes.CDLL("libisal.so.2")
    lib.crc32_iscsi.restype = ctypes.c_uint32
    lib.crc32_iscsi.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint32]
    block = os.urandom(BLOCK)
    start, done = time.process_time(), 0
    while done < 4 << 30:
        lib.crc32_iscsi(block, len(block), 0xFFFFFFFF)
        done += len(block)
    cpu = time.process_time() - start
    return cpu / (done / 1e9), done / 1e9 / cpu


def rftp(daemon, args, size, transport, files=0):
    """One rftp run. files: a many-file run (-r), which must move that many
    files and the bytes of all of them."""
    drop_caches()
    env = dict(os.environ, RFTP_PASSWORD=PASSWORD)
    server0 = proc_cpu(daemon.proc.pid)
    t0 = os.times()
    p = subprocess.run([str(BUILD / "rftp"), "--json", "--no-progress", *args], capture_output=True, text=True,
                       env=env, timeout=900)
    t1 = os.times()
    summary = next((json.loads(l) for l in p.stdout.splitlines() if '"summary"' in l), {})
    gb = size / 1e9
    if files:
        ok = p.returncode == 0 and summary.get("bytes") == size and summary.get("files", {}).get("ok") == files
    else:
        ok = p.returncode == 0 and summary.get("bytes") == size and summary.get("transport") == transport
    seconds = summary.get("transfer_seconds") or summary.get("seconds") or 1e9
    return {"ok": ok, "gbps": gb / seconds if ok else 0.0,
            "client_cpu": ((t1.children_user - t0.children_user) + (t1.children_system - t0.children_system)) / gb,
            "server_cpu": (proc_cpu(daemon.proc.pid) - server0) / gb,
            "error": "" if ok else (summary.get("message") or p.stderr[-200:])}


SMALL_KIB = 256


def many_files_rows(daemon, url, src, work, count, measure_row, fs, name, own_limits, rows, runs):
    """One large file and many small ones in one tree, as a dataset often is,
    copied with rftp -r: -j 4 sessions take the files largest first, so the
    small ones fill in beside the large one (docs/cli.md, "Many files"); -j 1
    moves them one after another, which is what that scheduling saves. Each
    run is held against fio copying the same tree at once (fio_tree)."""
    tree = work / "dataset"
    (tree / "small").mkdir(parents=True)
    os.link(src, tree / "large.bin")
    small = [tree / "small" / f"f{i:05d}.bin" for i in range(count)]
    for path in small:
        path.write_bytes(os.urandom(SMALL_KIB << 10))
    total = src.stat().st_size + count * (SMALL_KIB << 10)
    down = work / "down"
    label = f"1 × {src.stat().st_size >> 20} MiB + {count} × {SMALL_KIB} KiB"
    own_limits["tree"] = (lambda: fio_tree(tree / "large.bin", small, 4, work / "fio-tree"), "fio tree copy")
    rows.append({"place": fs, "test": f"fio tree copy: the same tree, 1 + 3 pairs of jobs at once ({label})",
                 "gbps": sorted(own_limits["tree"][0]() for _ in range(runs))[runs // 2], "limit": True})
    tests = [(f"many files: put -r -j 4 -P4 ({label})", ["put", "-r", "-j", "4"], "put"),
             (f"many files: put -r -j 1 -P4 ({label})", ["put", "-r", "-j", "1"], "put"),
             (f"many files: get -r -j 4 -P4 ({label})", ["get", "-r", "-j", "4"], "get")]
    for test, verb, direction in tests:
        flags = [*verb, "-P", "4", "--block-size", f"{BLOCK // MiB}M", "--transport", "tcp"]
        args = ([*flags, str(tree), f"{url}/"] if direction == "put"
                else [*flags, f"{url}/dataset", str(down)])

        def run_once():
            # Every run lands as new files: a put's tree is removed first, a get's after.
            if direction == "put":
                subprocess.run(["rm", "-rf", str(daemon.root / "dataset")], check=True)
            down.mkdir(exist_ok=True)
            row = rftp(daemon, args, total, "tcp", files=count + 1)
            subprocess.run(["rm", "-rf", str(down)], check=True)
            return row
        measure_row(f"{fs}, {name}", test, "tree", run_once)
    subprocess.run(["rm", "-rf", str(tree), str(daemon.root / "dataset")], check=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--where", choices=["host", "guest"], required=True)
    ap.add_argument("--size-mib", type=int, default=0, help="file size (default: 4096 on the host, 2048 in the guest)")
    ap.add_argument("--dir", default="", help="a directory on the disk to measure (default: /var/tmp, or $LAB_DISK)")
    ap.add_argument("--runs", type=int, default=3, help="runs per row; the median is reported")
    ap.add_argument("--small-files", type=int, default=2000,
                    help=f"host only: small files ({SMALL_KIB} KiB) beside the large one in the many-files rows; 0 skips them")
    ap.add_argument("--doc", default="yes")
    a = ap.parse_args()
    size_mib = a.size_mib or (4096 if a.where == "host" else 2048)
    size = size_mib * MiB
    base = Path(a.dir or (os.environ.get("LAB_DISK", "") if a.where == "guest" else "/var/tmp"))
    work = Path(tempfile.mkdtemp(prefix="rftp-disk-bench-", dir=base))
    fs = subprocess.run(["findmnt", "-no", "FSTYPE", "-T", str(work)], capture_output=True, text=True).stdout.strip()
    if a.where == "guest":
        places = [tuple(x.split("=", 1)) for x in os.environ["RFTP_LAB_DEVICES"].split()]
        transport = "rdma"
    else:
        places = [("loopback", "127.0.0.1")]
        transport = "tcp"
    src = work / "src.bin"
    with open(src, "wb") as f:  # distinct MiBs, cheaply
        block = os.urandom(MiB)
        for i in range(size_mib):
            f.write(i.to_bytes(8, "little") + block[8:])
    daemon = Daemon(work / "daemon", [addr for _, addr in places], port=2131)
    rows = []
    cache_dropped = drop_caches()
    try:
        probe = work / "fio.bin"
        # A first pass lays the space out (the lab's disk is a sparse image on
        # the host: first writes there cost a host allocation); the measured
        # passes write a new file each, as a copy does. Rewriting the blocks of
        # an existing file skips the allocation and runs faster: a reference row.
        fio(probe, "write", size_mib)
        overwrite = sorted(fio(probe, "write", size_mib) for _ in range(a.runs))[a.runs // 2]

        def new_file_write():
            probe.unlink(missing_ok=True)
            return fio(probe, "write", size_mib)

        w = sorted(new_file_write() for _ in range(a.runs))[a.runs // 2]
        r = sorted(fio(probe, "read", size_mib) for _ in range(a.runs))[a.runs // 2]
        copy = sorted(fio(probe, "copy", size_mib) for _ in range(a.runs))[a.runs // 2]
        limit = min(w, r)
        rows.append({"place": fs, "test": "fio write, a new file (O_DIRECT, io_uring)", "gbps": w, "limit": True})
        rows.append({"place": fs, "test": "reference: fio rewriting that file in place", "gbps": overwrite,
                     "limit": True})
        rows.append({"place": fs, "test": "fio read (O_DIRECT, io_uring)", "gbps": r, "limit": True})
        rows.append({"place": fs, "test": "fio copy limit: reading the file while writing a new one", "gbps": copy,
                     "limit": True})
        # This disk's rate moves by a third within minutes, so every run is
        # paired with a pass of its own limit just before it.
        own_limits = {"copy": (lambda: fio(probe, "copy", size_mib), "fio copy")}

        def measure_row(place, test, kind, run_once, peer=False):
            """--runs runs, each after its own limit's pass: the median run,
            set against the run-level slower fio (the goal) and, by the median
            of the pairs' ratios, against its own limit."""
            pass_of, own_name = own_limits[kind]
            runs, pairs = [], []
            for _ in range(a.runs):
                own = pass_of()
                run = run_once()
                runs.append(run)
                pairs.append(run["gbps"] / own if run["ok"] and own else 0.0)
            row = median_row(runs)
            row.update(place=place, test=test, peer=peer, ratio=row["gbps"] / limit if row["ok"] else None,
                       own_ratio=sorted(pairs)[len(pairs) // 2] if row["ok"] else None, own_limit=own_name)
            rows.append(row)
            print(json.dumps(row), flush=True)

        for tool, test in (("dd", "peer: dd copy, O_DIRECT, bs 4M"), ("cp", "peer: cp, then sync")):
            measure_row(fs, test, "copy", lambda: local_copy(tool, src, work / "copy.bin"), peer=True)
        for name, addr in places:
            url = f"rftp://alice@{addr}:2131"
            net = network_limit(transport, name, addr)
            net_name = "iperf3 -P4 -Z" if transport == "tcp" else "ib_write_bw, best of -q 1, -q 4"
            rows.append({"place": name, "test": f"network: {net_name}", "gbps": net, "limit": True})
            own_limits["source"] = (lambda: min(fio(probe, "read", size_mib), net), f"fio read (or {net_name})")
            own_limits["sink"] = (lambda: min(new_file_write(), net), f"fio write (or {net_name})")
            # Unmeasured: a machine's first transfers run slow while memory is
            # touched for the first time (in the guest, whose memory is a file
            # on the host, the first rows ran 2-4 times slower without this).
            for args in (["put", "-P", "4", str(src), f"{url}/warm.bin"],
                         ["get", "-P", "4", f"{url}/warm.bin", str(work / "down.bin")]):
                rftp(daemon, args, size, transport)
            (daemon.root / "warm.bin").unlink(missing_ok=True)
            (work / "down.bin").unlink(missing_ok=True)
            for streams, sums in ((1, True), (4, True), (4, False)):
                flags = ["-P", str(streams), "--block-size", f"{BLOCK // MiB}M"]
                if transport == "tcp":
                    flags += ["--transport", "tcp"]
                if not sums:
                    flags += ["--no-block-checksums"]
                label = f"-P{streams}" + ("" if sums else ", checksums off")
                tests = [(f"put disk->disk {label}", "copy", ["put", *flags, str(src), f"{url}/up.bin"]),
                         (f"get disk->disk {label}", "copy", ["get", *flags, f"{url}/up.bin", str(work / "down.bin")])]
                if streams > 1 and sums:
                    # One disk per side, as between two machines: the daemon's disk alone.
                    tests += [(f"source side: get disk->/dev/null {label}", "source",
                               ["get", *flags, f"{url}/up.bin", "/dev/null"]),
                              (f"sink side: put /dev/zero->disk {label}", "sink",
                               ["put", *flags, "--size", f"{size_mib}M", "/dev/zero", f"{url}/zeros.bin"])]
                for test, kind, args in tests:
                    def run_once():
                        # Each put lands as a new file, as each get does: replacing
                        # the last run's up.bin would free 4 GiB inside the timing.
                        if args[0] == "put":
                            (daemon.root / "up.bin").unlink(missing_ok=True)
                        row = rftp(daemon, args, size, transport)
                        (work / "down.bin").unlink(missing_ok=True)
                        (daemon.root / "zeros.bin").unlink(missing_ok=True)
                        return row
                    measure_row(f"{fs}, {name}", test, kind, run_once)
                (daemon.root / "up.bin").unlink(missing_ok=True)
            if a.where == "host" and a.small_files:
                many_files_rows(daemon, url, src, work, a.small_files, measure_row, fs, name, own_limits, rows,
                                a.runs)
    finally:
        daemon.stop()
        subprocess.run(["rm", "-rf", str(work)])

    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    head = ("UML guest (1 vCPU), ext4 on the lab's ubd disk, RDMA" if a.where == "guest"
            else f"{platform.node()}, {fs} on the machine's disk, TCP loopback")
    lines = [f"#### {stamp} — {head}, kernel {platform.release()}", "",
             f"{size_mib} MiB file, block {BLOCK // MiB} MiB, queue depth {DEPTH}, CRC32C on every block unless "
             f"the row says checksums off. "
             f"GB = 10^9 bytes. Each row is the median of {a.runs} runs; every run follows a pass of its own limit "
             f"and 'vs its own limit' is the median of those pairs' ratios. Page cache dropped before each run: "
             f"{'yes' if cache_dropped else 'no (not root)'}. fio's buffers: "
             f"{' and '.join(sorted(fio_pages_seen)) or 'none'} pages.", "",
             "| where | test | GB/s | vs slower fio (goal) | vs its own limit | its own limit | client CPU s/GB | "
             "server CPU s/GB | ok |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r.get("limit"):
            lines.append(f"| {r['place']} | {r['test']} | {r['gbps']:.2f} | limit | - | - | - | - | yes |")
            continue
        ratio = f"{r['ratio']:.2f} ×" if r.get("ratio") else "-"
        own_ratio = f"{r['own_ratio']:.2f} ×" if r.get("own_ratio") else "-"
        server_cpu = "-" if r.get("peer") else f"{r['server_cpu']:.3f}"
        lines.append(f"| {r['place']} | {r['test']} | {r['gbps']:.2f} | {ratio} | {own_ratio} | {r['own_limit']} | "
                     f"{r['client_cpu']:.3f} | {server_cpu} | {'yes' if r['ok'] else 'NO: ' + r['error'][:80]} |")
    runs = [r for r in rows if not r.get("limit") and not r.get("peer")]
    many = [r for r in runs if r["test"].startswith("many files")]
    copies = [r for r in runs if r["own_limit"] == "fio copy" and r not in many]
    sides = [r for r in runs if r["own_limit"] != "fio copy" and r not in many]
    met = [r for r in copies if r.get("ratio") and r["ratio"] >= 0.9]
    met_copy = [r for r in copies if r.get("own_ratio") and r["own_ratio"] >= 0.9]
    met_side = [r for r in sides if r.get("own_ratio") and r["own_ratio"] >= 0.9]
    crc_cpu, crc_rate = crc32c_cost()
    lines += ["", f"- disk->disk, goal ≥ 0.9 × the slower fio rate: met by {len(met)} of {len(copies)} rows; "
              f"≥ 0.9 × the fio copy limit: {len(met_copy)} of {len(copies)}",
              f"- one side alone, ≥ 0.9 × its own limit (fio read or write, or the network where that is "
              f"slower): met by {len(met_side)} of {len(sides)} rows",
              *([f"- many files, against fio copying the same tree: " + "; ".join(
                  f"{r['test'].split(' (')[0].removeprefix('many files: ')} {r['own_ratio']:.2f} ×"
                  for r in many if r.get("own_ratio"))] if many else []),
              f"- CRC32C itself (ISA-L `crc32_iscsi` on 4 MiB blocks, measured in this run): {crc_cpu:.3f} CPU s/GB "
              f"per side ({crc_rate:.0f} GB/s on one core); the checksums-off rows measure the whole difference."]
    table = "\n".join(lines)
    print(table)
    if a.doc == "yes":
        record_in_doc(f"bench-disk:{a.where}", table)
    return 0 if all(r.get("ok", True) for r in rows) else 1


def record_in_doc(marker: str, table: str) -> None:
    """Puts table in docs/benchmarks.md between <!-- marker:begin --> and
    <!-- marker:end -->, in place of what stood there."""
    begin, end = f"<!-- {marker}:begin -->", f"<!-- {marker}:end -->"
    doc = ROOT / "docs" / "benchmarks.md"
    text = doc.read_text()
    if begin in text:
        pre, rest = text.split(begin, 1)
        doc.write_text(pre + begin + "\n" + table + "\n" + end + rest.split(end, 1)[1])


if __name__ == "__main__":
    sys.exit(main())
