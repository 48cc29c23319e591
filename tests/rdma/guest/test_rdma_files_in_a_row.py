"""Files in a row over the RDMA channel (docs/protocol.md): in a many-file
run on a channel that is up, rftp sends each next file's commands (SIZE
and RRTR, or RSTR alone) as soon as the current file's 150 is read; they
wait at rftpd behind that transfer and start on the same channel when it
ends. Files compared by digest, names with spaces and unicode, on each
device; a next file that cannot land has its RRTR sent ahead ended with
ABOR, the run goes on over a new channel, and the daemon serves on; a run
stopped by Ctrl-C leaves only whole files under final names, and -c
finishes it."""

import hashlib
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import PASSWORD, TESTING, bound, kill_bounded, rftp, url

# Mixed sizes below the 8 MiB a file must stay under for the next to go
# ahead: empty, one byte, around a page, around the block.
SIZES = (0, 1, 4095, 4096, 65537, 1 << 20, (1 << 20) + 3)


def make_dataset(root: Path, count: int) -> dict:
    """count files of mixed sizes, some in a subdirectory, some names with
    a space or beyond ASCII; returns {relative path: SHA-256}."""
    want = {}
    for i in range(count):
        name = f"f {i:03d}.bin" if i % 3 == 0 else f"données-{i:03d}.bin"
        rel = f"sub/{name}" if i % 4 == 0 else name
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        body = os.urandom(SIZES[i % len(SIZES)])
        path.write_bytes(body)
        want[rel] = hashlib.sha256(body).hexdigest()
    return want


def tree(root: Path) -> dict:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in root.rglob("*") if p.is_file()}


def sent_ahead(debug_log: str, verbs: tuple) -> int:
    """Files whose first command rftp sent right after the 150 of the file
    before it (-vv). Otherwise nothing follows a 150 until its 226."""
    lines = [line for line in debug_log.splitlines() if line.startswith("debug: ")]
    firsts = tuple(f"debug: --> {verb} " for verb in verbs)
    return sum(1 for before, line in zip(lines, lines[1:])
               if before.startswith("debug: <-- 150 ") and line.startswith(firsts))


def test_put_r_and_get_r_send_each_next_files_commands_ahead(daemon, device, tmp_path):
    name, addr = device
    src = tmp_path / "src"
    want = make_dataset(src, 40)
    remote = f"row-{name}"
    channels_before = daemon.count(r"event=rdma_channel_up")
    stores_before = daemon.count(r"direction=store .*transport=rdma .*result=ok")
    p, _ = rftp("-vv", "-j", "1", "put", "-r", str(src), url(addr, remote) + "/")
    assert tree(daemon.root / remote / "src") == want
    assert sent_ahead(p.stderr, ("RSTR",)) >= 35, p.stderr[-3000:]
    # rftpd granted each next file's blocks ahead (its RADR said AHEAD), so
    # only the first file waited for a grant (docs/protocol.md, "Grants ahead").
    assert "--> RADR " in p.stderr and " AHEAD" in p.stderr.split("--> RADR ", 1)[1].splitlines()[0]
    assert p.stderr.count("event=rdma_control_received type=grant_ahead ") >= len(want) - 1, p.stderr[-3000:]
    assert p.stderr.count("event=rdma_control_received type=grant ") <= 1, p.stderr[-3000:]
    assert "ABOR" not in p.stderr
    # One channel carried every file.
    assert daemon.count(r"event=rdma_channel_up") == channels_before + 1
    assert daemon.count(r"direction=store .*transport=rdma .*result=ok") == stores_before + len(want)

    down = tmp_path / "down"
    down.mkdir()
    retrieves_before = daemon.count(r"direction=retrieve .*transport=rdma .*result=ok")
    grants_ahead, grants = r"event=rdma_control_received type=grant_ahead ", r"event=rdma_control_received type=grant "
    grants_ahead_before, grants_before = daemon.count(grants_ahead), daemon.count(grants)
    p, _ = rftp("-vv", "-j", "1", "get", "-r", url(addr, remote) + "/src/", str(down))
    assert tree(down / "src") == want
    assert sent_ahead(p.stderr, ("SIZE",)) >= 35, p.stderr[-3000:]
    assert "--> RRTR " in p.stderr and "ABOR" not in p.stderr
    assert daemon.count(r"event=rdma_channel_up") == channels_before + 2
    assert daemon.count(r"direction=retrieve .*transport=rdma .*result=ok") == retrieves_before + len(want)
    # rftp granted each next file's blocks as the file before it ended
    # (docs/protocol.md, "Grants ahead"): files of at most two blocks then
    # need no grant of their own. Only the first file waited for one.
    assert daemon.count(grants_ahead) - grants_ahead_before >= len(want) - 1
    assert daemon.count(grants) - grants_before <= 1
    assert [p for p in down.rglob("*") if ".rftp-" in p.name] == []


def test_a_next_file_that_cannot_land_has_its_rrtr_sent_ahead_aborted(daemon, device, tmp_path):
    name, addr = device
    remote = f"row-abor-{name}"
    want = {f"f{i:03d}.bin": os.urandom(1000 + i) for i in range(30)}
    for file, body in want.items():
        (daemon.root / remote).mkdir(exist_ok=True)
        (daemon.root / remote / file).write_bytes(body)
    down = tmp_path / "down"
    # Where f015.bin's partial file would go, a directory: its SIZE and
    # RRTR went ahead, but it cannot be opened.
    (down / remote / "f015.bin.rftp-part").mkdir(parents=True)
    channels_before = daemon.count(r"event=rdma_channel_up")
    p, _ = rftp("-vv", "-j", "1", "--continue-on-error", "get", "-r", url(addr, remote) + "/", str(down),
                check=False)
    assert p.returncode == 6, p.stderr[-3000:]
    assert "f015.bin.rftp-part is a directory" in p.stderr
    # The RRTR sent ahead for it was answered 150 and ended with ABOR, which
    # closes the channel: the files after it went over a new one.
    assert "--> ABOR" in p.stderr and "<-- 426" in p.stderr
    assert daemon.count(r"event=rdma_channel_up") == channels_before + 2
    got = {k: (down / remote / k).read_bytes() for k in want if (down / remote / k).exists()}
    assert got == {k: v for k, v in want.items() if k != "f015.bin"}
    assert sent_ahead(p.stderr, ("SIZE",)) >= 25
    assert daemon.alive()
    # And serves the next session as before.
    again = tmp_path / "again"
    again.mkdir()
    rftp("get", url(addr, f"{remote}/f015.bin"), str(again / "f015.bin"))
    assert (again / "f015.bin").read_bytes() == want["f015.bin"]


def landed(root: Path) -> dict:
    """Files under their final names: no partial file, no resume journal."""
    out = {}
    for dirpath, _, names in os.walk(root):
        for n in names:
            if ".rftp-" in n:
                continue
            path = Path(dirpath) / n
            try:
                out[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
            except FileNotFoundError:  # renamed or removed since the listing
                pass
    return out


def interrupt_once_landed(args: list, root: Path, count: int) -> subprocess.CompletedProcess:
    """Runs rftp and sends it SIGINT, as Ctrl-C does, once count files are
    under their final names in root (no time asserted)."""
    env = dict(os.environ, RFTP_PASSWORD=PASSWORD)
    proc = subprocess.Popen([str(TESTING / "rftp"), "--no-progress", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + bound(120)
    while time.monotonic() < deadline and proc.poll() is None and len(landed(root)) < count:
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=bound(60))
    except subprocess.TimeoutExpired:
        kill_bounded(proc, "rftp, interrupted,")
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


@pytest.mark.parametrize("direction", ["get", "put"])
def test_a_row_cut_short_by_ctrl_c_is_finished_by_c(daemon, device, tmp_path, direction):
    """A many-file run on one channel, its next file's commands sent ahead,
    stopped by Ctrl-C: what stands under a final name is whole, and -c
    brings the rest over a new channel. The interrupted channel's memory
    and queue pairs go back."""
    name, addr = device
    remote = f"row-int-{direction}-{name}"
    local = tmp_path / "local"
    local.mkdir()
    if direction == "get":
        want = make_dataset(daemon.root / remote, 150)
        source_url, landing = url(addr, remote) + "/", local / remote
        args = ["-j", "1", "get", "-r", source_url, str(local)]
    else:
        want = make_dataset(local / "src", 150)
        landing = daemon.root / remote / "src"
        args = ["-j", "1", "put", "-r", str(local / "src"), url(addr, remote) + "/"]
    channels_before = daemon.count(r"event=rdma_channel_up")
    p = interrupt_once_landed(args, landing, 20)
    assert p.returncode == -signal.SIGINT, p.stderr[-3000:]
    assert f"resume with: rftp {direction} -c " in p.stderr, p.stderr[-3000:]
    got = landed(landing)
    assert 0 < len(got) < len(want), (len(got), p.stderr[-3000:])
    assert all(want[k] == v for k, v in got.items()), p.stderr[-3000:]

    rftp("-c", *args)
    assert daemon.count(r"event=rdma_channel_up") == channels_before + 2  # one channel a run
    assert landed(landing) == want
    assert [f for f in landing.rglob("*") if ".rftp-" in f.name] == []
    deadline = time.monotonic() + bound(30)
    while daemon.rdma_totals(addr)["channels"] and time.monotonic() < deadline:
        time.sleep(0.2)
    assert daemon.rdma_totals(addr) == {"channels": 0, "queue_pairs": 0, "pinned_bytes": 0}
    assert daemon.alive()
