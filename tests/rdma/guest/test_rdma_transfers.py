"""rput/rget over real kernel RDMA, on each lab device (soft-RoCE rxe0 and
soft-iWARP siw0): files of 0 B, 1 B, around block boundaries and 1 GiB with
1 and 4 queue pairs, compared by digest; many files over one channel;
memory-to-memory; resume after a killed client, with the daemon's own
accounting showing everything released."""

import hashlib
import os
import signal
import subprocess
from pathlib import Path

import pytest

from conftest import PASSWORD, TESTING, Daemon, bound, expected_notice, rftp, url, wait_for

MiB = 1 << 20
BLOCK = 4 * MiB  # the client's default RDMA block
ODD_SIZES = [0, 1, 4095, 4097, BLOCK - 1, BLOCK + 1, 3 * BLOCK + 12345]


def digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(8 * MiB):
            h.update(chunk)
    return h.hexdigest()


def write_pattern(path: Path, size: int, seed: int):
    """Content where every MiB differs (a block written at the wrong offset
    is caught), made cheaply: the guest's CPU is slow."""
    base = hashlib.sha256(str(seed).encode()).digest() * (MiB // 32)
    with open(path, "wb") as f:
        for i in range(0, size, MiB):
            n = min(MiB, size - i)
            f.write((i.to_bytes(8, "little") + base[8:])[:n])


@pytest.fixture(scope="module")
def big_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("big") / "big.bin"
    write_pattern(path, 1 << 30, 7)
    return path


@pytest.fixture(scope="module")
def odd_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("odd")
    paths = []
    for i, size in enumerate(ODD_SIZES):
        p = d / f"f{size}.bin"
        p.write_bytes(os.urandom(size))
        paths.append(p)
    return paths


@pytest.mark.parametrize("qps", [1, 4])
def test_odd_sizes_up_and_down_over_one_channel(daemon, device, qps, odd_files, tmp_path):
    name, addr = device
    remote_dir = f"odd-{name}-{qps}"
    (daemon.root / remote_dir).mkdir()
    channels_before = daemon.count(r"event=rdma_channel_up")
    stores_before = daemon.count(r"direction=store path=\S+ transport=rdma .* result=ok")
    rftp("put", "-j", "1", "-P", str(qps), *map(str, odd_files), url(addr, remote_dir) + "/")
    # One session, one channel, every file over it.
    assert daemon.count(r"event=rdma_channel_up") == channels_before + 1
    # workers: auto. The guest has one CPU, so the dispatcher runs the handlers.
    auto_workers = 0 if os.cpu_count() == 1 else 2
    assert daemon.count(rf"event=rdma_channel_up .* workers={auto_workers}\b") >= 1
    assert daemon.count(r"direction=store path=\S+ transport=rdma .* result=ok") == stores_before + len(odd_files)
    for p in odd_files:
        assert digest(daemon.root / remote_dir / p.name) == digest(p), p.name

    down = tmp_path / "down"
    down.mkdir()
    rftp("get", "-r", "-j", "1", "-P", str(qps), url(addr, remote_dir) + "/", str(down))
    got = down / remote_dir if (down / remote_dir).is_dir() else down
    for p in odd_files:
        assert digest(got / p.name) == digest(p), p.name
    assert daemon.count(r"direction=retrieve path=\S+ transport=rdma .* result=ok") >= len(odd_files)


def test_odd_sizes_up_and_down_with_completion_workers(tmp_path_factory, device, odd_files, tmp_path):
    """The same files through a daemon with two completion workers, chosen
    explicitly: the one-CPU guest would otherwise run every handler on the
    dispatcher, and the worker path (the default on real hosts) must move
    real blocks both ways, as sink (uploads) and as source (downloads)."""
    name, addr = device
    d = Daemon(tmp_path_factory.mktemp(f"workers-{name}"), [addr], port=2125, extra_config="rdma: {workers: 2}\n")
    try:
        (d.root / "w").mkdir()
        rftp("put", "-j", "1", "-P", "4", *map(str, odd_files), url(addr, "w", port=2125) + "/")
        assert d.count(r"event=rdma_channel_up .* workers=2\b") >= 1, d.log()[-2000:]
        assert d.count(r"direction=store path=\S+ transport=rdma .* result=ok") == len(odd_files), d.log()[-3000:]
        for p in odd_files:
            assert digest(d.root / "w" / p.name) == digest(p), p.name
        down = tmp_path / "down"
        down.mkdir()
        rftp("get", "-r", "-j", "1", "-P", "4", url(addr, "w", port=2125) + "/", str(down))
        assert d.count(r"direction=retrieve path=\S+ transport=rdma .* result=ok") == len(odd_files), d.log()[-3000:]
        got = down / "w" if (down / "w").is_dir() else down
        for p in odd_files:
            assert digest(got / p.name) == digest(p), p.name
    finally:
        alive = d.alive()
        assert d.stop() == 0 and alive, d.log()[-3000:]


@pytest.fixture(scope="module")
def big_digest(big_file) -> str:
    return digest(big_file)


@pytest.fixture
def served_big_file(daemon, big_file, tmp_path):
    """The big file in the daemon's root: a hard link (guest memory is tight)."""
    path = daemon.root / f"served-{tmp_path.name}.bin"
    os.link(big_file, path)
    yield path.name
    path.unlink(missing_ok=True)


@pytest.fixture
def cleanup(daemon):
    """Names in the daemon's root to remove afterwards, partial files included."""
    names = []
    yield names
    for n in names:
        for p in (daemon.root / n, daemon.root / f".{n}.rftp-part", daemon.root / f".{n}.rftp-resume"):
            p.unlink(missing_ok=True)


@pytest.mark.parametrize("qps", [1, 4])
def test_one_gib_up(daemon, device, qps, big_file, big_digest, cleanup):
    name, addr = device
    remote = f"big-{name}-{qps}.bin"
    cleanup.append(remote)
    _, up = rftp("put", "-P", str(qps), str(big_file), url(addr, remote))
    assert up["transport"] == "rdma" and up["bytes"] == 1 << 30 and up["streams"] == qps
    assert up["rdma_notice"] == expected_notice(name)
    assert digest(daemon.root / remote) == big_digest


@pytest.mark.parametrize("qps", [1, 4])
def test_one_gib_down(daemon, device, qps, served_big_file, big_digest, tmp_path):
    name, addr = device
    local = tmp_path / "big.bin"
    _, down = rftp("get", "-P", str(qps), url(addr, served_big_file), str(local))
    assert down["transport"] == "rdma" and down["bytes"] == 1 << 30 and down["streams"] == qps
    assert down["rdma_notice"] == expected_notice(name)
    assert digest(local) == big_digest
    local.unlink()


def test_memory_to_memory(daemon, device):
    """/dev/zero as the source and /dev/null as the sink: no disk at all."""
    name, addr = device
    _, up = rftp("put", "-P", "2", "--size", "256M", "/dev/zero", url(addr, "/dev/null"))
    assert up["transport"] == "rdma" and up["bytes"] == 256 * MiB
    # Zero blocks are filled once, not read again: what lands must still be zeros, tail included.
    zeros = f"zeros-{name}.bin"
    size = 2 * BLOCK + 4097
    _, up = rftp("put", "-P", "2", "--size", str(size), "/dev/zero", url(addr, zeros))
    assert up["transport"] == "rdma" and up["bytes"] == size
    assert digest(daemon.root / zeros) == hashlib.sha256(bytes(size)).hexdigest()
    (daemon.root / zeros).unlink()
    src = daemon.root / f"m2m-{name}.bin"
    write_pattern(src, 64 * MiB, 3)
    try:
        _, down = rftp("get", "-P", "2", url(addr, src.name), "/dev/null")
        assert down["transport"] == "rdma" and down["bytes"] == 64 * MiB
    finally:
        src.unlink()


def start_client(*args):
    env = dict(os.environ, RFTP_PASSWORD=PASSWORD)
    return subprocess.Popen([str(TESTING / "rftp"), "--no-progress", *args], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def assert_released(daemon, addr):
    """A dead client's session must give back every queue pair and pinned byte."""
    wait_for(lambda: daemon.rdma_totals(addr)["channels"] == 0, 20, "the dead client's channel to be released")
    assert daemon.rdma_totals(addr) == {"channels": 0, "queue_pairs": 0, "pinned_bytes": 0}


def test_killed_upload_resumes_and_releases_everything(daemon, device, big_file, big_digest, cleanup):
    name, addr = device
    remote = f"resume-up-{name}.bin"
    cleanup.append(remote)
    partial = daemon.root / f".{remote}.rftp-part"
    client = start_client("put", "-P", "4", str(big_file), url(addr, remote))
    wait_for(lambda: partial.exists() and partial.stat().st_size > 64 * MiB or client.poll() is not None, 120,
             "the upload to get under way")
    client.send_signal(signal.SIGKILL)
    client.wait()
    assert not (daemon.root / remote).exists(), "a killed upload must never appear under its final name"
    assert_released(daemon, addr)
    _, s = rftp("put", "-c", "-P", "4", str(big_file), url(addr, remote))
    assert s["transport"] == "rdma"
    assert s["bytes"] < 1 << 30, "the second run should have resumed, not started over"
    assert digest(daemon.root / remote) == big_digest


def test_killed_download_resumes(daemon, device, served_big_file, big_digest, tmp_path):
    name, addr = device
    remote = served_big_file
    local = tmp_path / "got.bin"
    part = tmp_path / "got.bin.rftp-part"
    client = start_client("get", "-P", "4", url(addr, remote), str(local))
    wait_for(lambda: part.exists() and part.stat().st_size > 64 * MiB or client.poll() is not None, 120,
             "the download to get under way")
    client.send_signal(signal.SIGKILL)
    client.wait()
    assert not local.exists()
    assert_released(daemon, addr)
    _, s = rftp("get", "-c", "-P", "4", url(addr, remote), str(local))
    assert s["transport"] == "rdma" and s["bytes"] < 1 << 30
    assert digest(local) == big_digest
    local.unlink()  # guest memory is tight


def test_interrupted_upload_stops_and_resumes(daemon, device, big_file, big_digest, cleanup):
    name, addr = device
    remote = f"interrupt-{name}.bin"
    cleanup.append(remote)
    partial = daemon.root / f".{remote}.rftp-part"
    client = start_client("put", "-P", "2", str(big_file), url(addr, remote))
    wait_for(lambda: partial.exists() and partial.stat().st_size > 32 * MiB or client.poll() is not None, 120,
             "the upload to get under way")
    client.send_signal(signal.SIGINT)
    _, err = client.communicate(timeout=bound(60))
    assert client.returncode == -signal.SIGINT, err  # died of it, as shells expect
    assert "resume with" in err.decode()
    rftp("put", "-c", "-P", "2", str(big_file), url(addr, remote))
    assert digest(daemon.root / remote) == big_digest


def test_sequential_writes_to_a_pipe(daemon, device, served_big_file, big_digest):
    """With --sequential-writes blocks reach the destination in file order
    even with 4 queue pairs delivering them in any order: a pipe (which has
    no offsets) receives exactly the file."""
    name, addr = device
    env = dict(os.environ, RFTP_PASSWORD=PASSWORD)
    rftp_cmd = [str(TESTING / "rftp"), "--no-progress", "-v", "--sequential-writes", "-P", "4", "get",
                url(addr, served_big_file), "-"]
    p = subprocess.Popen(rftp_cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    h = hashlib.sha256()
    while chunk := p.stdout.read(8 * MiB):
        h.update(chunk)
    err = p.stderr.read().decode()
    assert p.wait(timeout=bound(120)) == 0, err
    assert "RDMA channel on" in err, "the download should have gone over RDMA:\n" + err
    assert h.hexdigest() == big_digest


def test_get_to_stdout_lands_at_the_shells_position(daemon, device, odd_files, tmp_path):
    """`{ echo head; rftp get URL -; echo done; } > f` over RDMA: stdout is a
    plain file the shell shares, so blocks (four, over four queue pairs, in
    any order) are written in order through its own offset: after "head",
    and before the shell's next write."""
    name, addr = device
    env = dict(os.environ, RFTP_PASSWORD=PASSWORD)
    source = odd_files[-1]
    served = daemon.root / f"stdout-{name}.bin"
    os.link(source, served)
    out = tmp_path / "shared.bin"
    try:
        with open(out, "wb", buffering=0) as shared:
            shared.write(b"head\n")
            p = subprocess.run([str(TESTING / "rftp"), "--no-progress", "-v", "-P", "4", "get",
                                url(addr, served.name), "-"], stdout=shared, stderr=subprocess.PIPE, env=env,
                               timeout=bound(120))
            shared.write(b"done\n")
        err = p.stderr.decode()
        assert p.returncode == 0, err
        assert "RDMA channel on" in err, "the download should have gone over RDMA:\n" + err
        assert out.read_bytes() == b"head\n" + source.read_bytes() + b"done\n"
    finally:
        out.unlink(missing_ok=True)
        served.unlink(missing_ok=True)


def test_sequential_writes_upload(tmp_path_factory, device, odd_files):
    """rdma.sequential_writes on the daemon: uploads still arrive whole."""
    from conftest import Daemon
    name, addr = device
    d = Daemon(tmp_path_factory.mktemp(f"seq-{name}"), [addr], port=2123,
               extra_config="rdma: {sequential_writes: true}\n")
    try:
        big = odd_files[-1]
        _, s = rftp("put", "-P", "4", str(big), url(addr, big.name, port=2123))
        assert s["transport"] == "rdma"
        assert digest(d.root / big.name) == digest(big)
    finally:
        alive = d.alive()
        assert d.stop() == 0 and alive, d.log()[-3000:]
