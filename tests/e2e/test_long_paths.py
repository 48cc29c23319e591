"""rftp on a long path: through the delay line (delay_line.py, a 30 ms
round trip between the client's network namespace and rftpd), the
choices rftp makes from the control connection's round trip. With Linux's
default TCP buffers, one stream's window (3 MiB) carries 0.1 GB/s at
30 ms; rftp opens as many streams as fill the path at 10 Gb/s, at most
eight (docs/config.md, "Long paths: windows"), and keeps a small download
ahead for each millisecond of it (docs/protocol.md, "Files in a row")."""

import contextlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from conftest import PASSWORDS, Rftpd, TESTING, free_port  # noqa: E402
from delay_line import CLIENT_PREFIX, SERVER_ADDR, DelayLine  # noqa: E402
from test_data_keep import tree  # noqa: E402
from test_unechoed_downloads import commands_right_after_first_150  # noqa: E402
from tls_certs import CertAuthority  # noqa: E402

RFTP = str(TESTING / "rftp")
# The delay line makes a network namespace and TUN devices.
pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists("/dev/net/tun") or not shutil.which("ip"),
                                reason="the delay line needs root, /dev/net/tun and ip (iproute2)")
RTT_MS = 30
MiB = 1 << 20


@contextlib.contextmanager
def far_rftpd(workdir: Path, env_extra=None, extra_config=""):
    """rftpd, reached from the client namespace at RTT_MS: (daemon, its URL)."""
    port = free_port()
    line = DelayLine()
    try:
        set_ceilings(6 << 20, 4 << 20)  # Linux's defaults, whatever this host's are: 3 MiB a stream
        line.set(RTT_MS)
        d = Rftpd(workdir, more_listeners=f", {{address: {SERVER_ADDR}, port: {port}, allow_plaintext: true}}",
                  env_extra=env_extra, extra_config=extra_config)
        try:
            yield d, f"rftp://alice@{SERVER_ADDR}:{port}"
            assert d.alive(), "rftpd died:\n" + d.log()[-3000:]
        finally:
            d.stop()
    finally:
        line.close()


@pytest.fixture
def far(place):
    with far_rftpd(place / "far") as d_url:
        yield d_url


def rftp(tmp_path: Path, *args: str, ca: Path | None = None) -> subprocess.CompletedProcess:
    """rftp in the client namespace; in clear, or under TLS with ca."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "RFTP_PASSWORD": PASSWORDS["alice"]}
    tls = ["--tls", "off"]
    if ca:
        env["RFTP_CA_BUNDLE"] = str(ca)
        tls = ["--tls", "require"]
    return subprocess.run([*CLIENT_PREFIX, RFTP, *tls, *args], env=env, capture_output=True, text=True,
                          timeout=300)


def event(r: subprocess.CompletedProcess, name: str) -> dict:
    assert r.returncode == 0, r.stderr[-3000:]
    return next(e for e in map(json.loads, r.stdout.splitlines()) if e["event"] == name)


def summary(r: subprocess.CompletedProcess) -> dict:
    return event(r, "summary")


def serve_files(d: Rftpd, count: int, growth: int, suffix: str = "") -> dict:
    """count files of random bytes in alice's many/, each growth bytes
    larger than the one before: name -> bytes."""
    src = d.roots["alice"] / "many"
    src.mkdir()
    want = {}
    for i in range(count):
        name = f"f {i:02d}{suffix}.bin"
        want[name] = os.urandom(100 + growth * i)
        (src / name).write_bytes(want[name])
    return want


def set_ceilings(rmem_max: int, wmem_max: int) -> None:
    """The client namespace's TCP buffer ceilings (the third fields)."""
    for key, most in (("tcp_rmem", rmem_max), ("tcp_wmem", wmem_max)):
        subprocess.run([*CLIENT_PREFIX, "sh", "-c", f"echo 4096 65536 {most} > /proc/sys/net/ipv4/{key}"], check=True)


def test_rftp_keeps_a_download_ahead_for_each_millisecond(far, tmp_path):
    """At the first 150 the SIZE and RETR of about thirty files go out (one
    per millisecond of the round trip: more than the sixteen a server lets
    have without FEAT's PIPELINE), and every file of the tree arrives whole."""
    d, url = far
    want = serve_files(d, 60, 997, " é")
    down = tmp_path / "down"
    down.mkdir()
    r = rftp(tmp_path, "-vv", "-j", "1", "get", "-r", f"{url}/many/", str(down))
    assert r.returncode == 0, r.stderr[-3000:]
    assert tree(down / "many") == want
    ahead = commands_right_after_first_150(r.stderr)
    files_ahead = len(ahead) // 2
    assert ahead == ["SIZE", "RETR"] * files_ahead, r.stderr[-5000:]
    assert 29 <= files_ahead <= 34, (files_ahead, r.stderr[-5000:])
    assert d.log().count("command=RETR") == 60


def test_many_files_under_tls_on_one_session(place, tmp_path):
    """Under PROT P each data connection resumes the login's TLS session
    (rftpd requires it). On a long path a download's connection is freed
    before its TLS has ended; that must not keep the next one from
    resuming. One session (-j 1) lists the tree and fetches every file."""
    ca = CertAuthority(place / "ca")
    cert, key = ca.server("far", f"IP:{SERVER_ADDR}")
    with far_rftpd(place / "far-tls", extra_config=f"tls: {{certificate: \"{cert}\", key: \"{key}\"}}\n") as (d, url):
        want = serve_files(d, 6, 30011)
        down = tmp_path / "down"
        down.mkdir()
        r = rftp(tmp_path, "-j", "1", "get", "-r", f"{url}/many/", str(down), ca=ca.ca)
        assert r.returncode == 0, r.stderr[-3000:]
        assert tree(down / "many") == want
        assert "data_connection_refused" not in d.log() and d.log().count("data=tls") == 7


def test_damaged_files_in_a_long_window_fail_alone_and_c_fetches_them(place, tmp_path):
    """rftpd damages two blocks 25 apart (the test-only switch). A file of
    one block is not sent again, so the file it belonged to fails while
    about thirty are ahead of it: the kept connections close, the files
    ahead end unsent, and the run goes on with them on new connections.
    Only the damaged files are missing, nothing partial is under a final
    name, and -c fetches them."""
    with far_rftpd(place / "flipping", env_extra={"RFTP_TEST_FLIP_BLOCKS": "2/25"}) as (d, url):
        want = serve_files(d, 90, 501)
        down = tmp_path / "down"
        down.mkdir()
        r = rftp(tmp_path, "-j", "1", "--retries", "0", "--continue-on-error", "get", "-r", f"{url}/many/",
                 str(down))
        assert r.returncode == 8, r.stderr[-3000:]
        got = tree(down / "many")
        missing = [k for k in want if k not in got]
        assert 1 <= len(missing) <= 2, (missing, r.stderr[-3000:])
        assert all(got[k] == want[k] for k in got if ".rftp-" not in k)
        r = rftp(tmp_path, "-j", "1", "get", "-c", "-r", f"{url}/many/", str(down))
        assert r.returncode == 0, r.stderr[-3000:]
        assert tree(down / "many") == want


def test_without_p_a_large_file_takes_the_streams_the_path_needs(far, tmp_path):
    """20 MiB in blocks of 1 MiB: twelve streams each way without -P (they
    fill 30 ms at 10 Gb/s; thirteen when the line adds a little), one with
    -P 1; in blocks of 8 MiB, three. The bytes arrive whole every time."""
    d, url = far
    body = os.urandom(20 * MiB)
    (d.roots["alice"] / "big.bin").write_bytes(body)
    src = tmp_path / "src.bin"
    src.write_bytes(body)
    # On one CPU rftp takes one stream by itself (path_streams.h).
    several = len(os.sched_getaffinity(0)) > 1
    for args, streams in ((("--block-size", "1M"), (12, 13) if several else (1,)),
                          (("--block-size", "1M", "-P", "1"), (1,))):
        got = tmp_path / "big.down"
        assert summary(rftp(tmp_path, "--json", *args, "get", f"{url}/big.bin", str(got)))["streams"] in streams
        assert got.read_bytes() == body
        got.unlink()
        assert summary(rftp(tmp_path, "--json", *args, "put", str(src), f"{url}/up.bin"))["streams"] in streams
        assert (d.roots["alice"] / "up.bin").read_bytes() == body
        (d.roots["alice"] / "up.bin").unlink()
    # In blocks of 8 MiB (the default) the file has three: a stream each.
    got = tmp_path / "big.down"
    assert summary(rftp(tmp_path, "--json", "get", f"{url}/big.bin", str(got)))["streams"] == (3 if several else 1)
    assert got.read_bytes() == body


def test_the_send_ceiling_bounds_a_streams_window_too(far, tmp_path):
    """A 32 MiB receive ceiling alone would make a stream's window 16 MiB
    and three streams enough at 30 ms; the 4 MiB send ceiling keeps it at
    3 MiB, so twelve (or thirteen). The JSON start event names no -P of
    its own."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("on one CPU rftp takes one stream whatever the path")
    d, url = far
    body = os.urandom(20 * MiB)
    (d.roots["alice"] / "big.bin").write_bytes(body)
    set_ceilings(32 << 20, 4 << 20)
    got = tmp_path / "big.down"
    r = rftp(tmp_path, "--json", "--block-size", "1M", "get", f"{url}/big.bin", str(got))
    assert summary(r)["streams"] in (12, 13)
    assert event(r, "start")["parallel"] is None
    assert got.read_bytes() == body
    got.unlink()
    r = rftp(tmp_path, "--json", "--block-size", "1M", "-P", "1", "get", f"{url}/big.bin", str(got))
    assert event(r, "start")["parallel"] == 1 and summary(r)["streams"] == 1
