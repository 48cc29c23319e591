"""rftp against a real vsftpd: plain FTP, no rftp extensions.

Every test drives the real rftp binary and checks files by SHA-256 on disk.
"""

import hashlib
import json
import os
import pwd
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from vsftpd_server import VSFTPD, VsftpdServer, free_port  # noqa: E402

RFTP = os.path.join(os.environ.get("RFTP_BUILD", "build"), "testing", "rftp")

pytestmark = [
    pytest.mark.skipif(not os.path.exists(VSFTPD), reason="vsftpd not installed"),
    pytest.mark.skipif(os.geteuid() != 0, reason="vsftpd needs root to start"),
]


@pytest.fixture(scope="module")
def ftp_root(tmp_path_factory):
    return tmp_path_factory.mktemp("anon_root")


@pytest.fixture(scope="module")
def vsftpd(ftp_root):
    server = VsftpdServer(ftp_root).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def slow_vsftpd(ftp_root):
    """Same files, served at 1 MB/s, so a download can be interrupted mid-way."""
    server = VsftpdServer(ftp_root, max_rate=1_000_000).start()
    yield server
    server.stop()


@pytest.fixture
def client_env(tmp_path):
    # No ~/.netrc, no inherited credentials: anonymous login.
    home = tmp_path / "home"
    home.mkdir()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home)}
    return env


def rftp(env, *args, timeout=60, argv0=None):
    """Runs the binary; argv0 'rput'/'rget' checks the name-implied subcommand."""
    return subprocess.run([argv0 or RFTP, *args], executable=RFTP, env=env, capture_output=True,
                          timeout=timeout, start_new_session=True)


def sha256(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def write_random(path: Path, size: int) -> Path:
    path.write_bytes(os.urandom(size))
    return path


@pytest.mark.parametrize("size", [0, 1, 4097, 3 * 1024 * 1024 + 7])
def test_put_then_get_round_trips_exactly(vsftpd, client_env, tmp_path, size):
    src = write_random(tmp_path / f"src-{size}.bin", size)
    up = rftp(client_env, "put", str(src), vsftpd.url())
    assert up.returncode == 0, up.stderr
    assert sha256(vsftpd.pub / src.name) == sha256(src)

    dst = tmp_path / "dst.bin"
    down = rftp(client_env, "get", vsftpd.url(f"/pub/{src.name}"), str(dst))
    assert down.returncode == 0, down.stderr
    assert sha256(dst) == sha256(src)
    assert not Path(str(dst) + ".rftp-part").exists()


def test_get_into_directory_uses_remote_basename(vsftpd, client_env, tmp_path):
    (vsftpd.pub / "named.txt").write_bytes(b"by name\n")
    outdir = tmp_path / "out"
    outdir.mkdir()
    r = rftp(client_env, "get", vsftpd.url("/pub/named.txt"), str(outdir))
    assert r.returncode == 0, r.stderr
    assert (outdir / "named.txt").read_bytes() == b"by name\n"


def test_get_to_stdout_and_device(vsftpd, client_env):
    (vsftpd.pub / "out.txt").write_bytes(b"to stdout\n")
    r = rftp(client_env, "get", vsftpd.url("/pub/out.txt"), "-")
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"to stdout\n"
    r = rftp(client_env, "get", vsftpd.url("/pub/out.txt"), "/dev/null")
    assert r.returncode == 0, r.stderr
    assert not Path("/dev/null.rftp-part").exists()


def test_rput_and_rget_names_imply_the_subcommand(vsftpd, client_env, tmp_path):
    src = write_random(tmp_path / "alias.bin", 5000)
    r = rftp(client_env, str(src), vsftpd.url(), argv0="rput")
    assert r.returncode == 0, r.stderr
    dst = tmp_path / "alias-back.bin"
    r = rftp(client_env, vsftpd.url("/pub/alias.bin"), str(dst), argv0="rget")
    assert r.returncode == 0, r.stderr
    assert sha256(dst) == sha256(src)


def test_parallel_request_falls_back_to_one_stream(vsftpd, client_env, tmp_path):
    src = write_random(tmp_path / "par.bin", 20 * 1024 * 1024 + 3)
    r = rftp(client_env, "-P", "4", "--block-size", "1M", "--json", "put", str(src), vsftpd.url())
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout.splitlines()[-1])
    assert summary["streams"] == 1
    assert any("PARALLEL" in n for n in summary["notes"])
    dst = tmp_path / "par-back.bin"
    r = rftp(client_env, "get", "-P", "4", "--block-size", "1M", vsftpd.url("/pub/par.bin"), str(dst))
    assert r.returncode == 0, r.stderr
    assert sha256(dst) == sha256(src)


def test_json_events_parse_and_summary_counts_bytes(vsftpd, client_env, tmp_path):
    src = write_random(tmp_path / "json.bin", 123457)
    r = rftp(client_env, "--json", "put", str(src), vsftpd.url())
    assert r.returncode == 0, r.stderr
    events = [json.loads(line) for line in r.stdout.splitlines()]
    assert events[0]["event"] == "start"
    summary = events[-1]
    assert summary["event"] == "summary"
    assert summary["result"] == "ok" and summary["exit_code"] == 0
    assert summary["bytes"] == 123457
    r = rftp(client_env, "--json", "get", vsftpd.url("/pub/json.bin"), str(tmp_path / "j2"))
    summary = json.loads(r.stdout.splitlines()[-1])
    assert summary["bytes"] == 123457 and summary["result"] == "ok"


@pytest.mark.parametrize("args, command, message", [
    (["get", "--block-size", "1K", "ftp://127.0.0.1/x", "y"], "get", "--block-size: must be between 64K and 1G"),
    (["get", "ftp://127.0.0.1/x"], "get", "expected get URL... LOCAL"),
    (["--bogus", "ls", "ftp://127.0.0.1/"], "ls", "--bogus"),
    (["ls", "bad://x"], "ls", "unknown scheme"),
    # Accepted and ignored, it would mislead: a get of that many bytes, a tree of devices.
    (["get", "--size", "5", "ftp://127.0.0.1/x", "y"], "get", "--size is for put from one device"),
    (["put", "-r", "--size", "1M", "/dev/zero", "ftp://127.0.0.1/d/"], "put", "not with several sources or -r"),
])
def test_a_usage_error_under_json_still_ends_with_a_summary(client_env, args, command, message):
    """docs/cli.md: the summary is always last, a usage error's too, with
    the fields every summary has (a script reads exit_code and message)."""
    r = rftp(client_env, "--json", *args)
    assert r.returncode == 2, r.stderr
    [summary] = [json.loads(line) for line in r.stdout.splitlines()]
    assert summary["event"] == "summary" and summary["result"] == "error" and summary["exit_code"] == 2, summary
    assert message in summary["message"] and summary["command"] == command, summary
    assert summary["bytes"] == 0 and "seconds" in summary, summary


def test_ls_mkdir_mv_rm(vsftpd, client_env, tmp_path):
    assert rftp(client_env, "mkdir", vsftpd.url("/pub/newdir")).returncode == 0
    assert (vsftpd.pub / "newdir").is_dir()
    src = write_random(tmp_path / "f.bin", 10)
    assert rftp(client_env, "put", str(src), vsftpd.url("/pub/newdir/")).returncode == 0

    listing = rftp(client_env, "ls", vsftpd.url("/pub/newdir"))
    assert listing.returncode == 0, listing.stderr
    assert b"f.bin" in listing.stdout

    r = rftp(client_env, "mv", vsftpd.url("/pub/newdir/f.bin"), "g.bin")
    assert r.returncode == 0, r.stderr
    assert (vsftpd.pub / "newdir" / "g.bin").exists() and not (vsftpd.pub / "newdir" / "f.bin").exists()

    # A non-empty directory cannot be removed; the file can, then the directory.
    assert rftp(client_env, "rm", "-d", vsftpd.url("/pub/newdir")).returncode == 5
    assert rftp(client_env, "rm", vsftpd.url("/pub/newdir/g.bin")).returncode == 0
    assert rftp(client_env, "rm", "--dir", vsftpd.url("/pub/newdir")).returncode == 0
    assert not (vsftpd.pub / "newdir").exists()


def test_remote_errors_exit_5_and_leave_nothing(vsftpd, client_env, tmp_path):
    dst = tmp_path / "missing.bin"
    r = rftp(client_env, "get", vsftpd.url("/pub/no-such-file"), str(dst))
    assert r.returncode == 5
    assert b"550" in r.stderr
    assert not dst.exists() and not Path(str(dst) + ".rftp-part").exists()
    assert rftp(client_env, "rm", vsftpd.url("/pub/no-such-file")).returncode == 5
    assert rftp(client_env, "mv", vsftpd.url("/pub/no-such-file"), "x").returncode == 5


def test_hash_and_verify_need_server_support(vsftpd, client_env, tmp_path):
    (vsftpd.pub / "h.txt").write_bytes(b"x")
    r = rftp(client_env, "hash", vsftpd.url("/pub/h.txt"))
    assert r.returncode == 5
    assert b"HASH" in r.stderr
    dst = tmp_path / "v.txt"
    r = rftp(client_env, "--verify", "get", vsftpd.url("/pub/h.txt"), str(dst))
    assert r.returncode == 7
    assert not dst.exists()


def test_closed_port_exits_3(client_env, tmp_path):
    port = free_port()
    r = rftp(client_env, "ls", f"ftp://127.0.0.1:{port}/")
    assert r.returncode == 3
    assert b"connect" in r.stderr


def test_wrong_password_exits_4(vsftpd, client_env):
    env = dict(client_env, RFTP_PASSWORD="wrong")
    r = rftp(env, "ls", vsftpd.url("/pub/").replace("ftp://", "ftp://nosuchuser@"))
    assert r.returncode == 4, r.stderr
    assert b"530" in r.stderr


def test_missing_password_without_terminal_says_how_to_supply_one(vsftpd, client_env):
    # start_new_session leaves rftp without a controlling terminal to prompt on.
    r = rftp(client_env, "ls", vsftpd.url("/pub/").replace("ftp://", "ftp://bob@"))
    assert r.returncode == 4
    assert b"RFTP_PASSWORD" in r.stderr and b".netrc" in r.stderr


def test_netrc_supplies_user_and_password(vsftpd, client_env, tmp_path):
    netrc = tmp_path / "netrc"
    # vsftpd knows only anonymous; a netrc login of someone else must be what is sent.
    netrc.write_text("machine 127.0.0.1 login nosuchuser password secret\n")
    env = dict(client_env, NETRC=str(netrc))
    r = rftp(env, "-vv", "ls", vsftpd.url("/pub/"))
    assert r.returncode == 4
    assert b"USER nosuchuser" in r.stderr
    assert b"secret" not in r.stderr


def test_usage_errors_exit_2(client_env):
    assert rftp(client_env, "get", "http://x/y", "z").returncode == 2
    assert rftp(client_env, "frobnicate").returncode == 2
    assert rftp(client_env, "--block-size", "12Q", "ls", "ftp://h/").returncode == 2
    v = rftp(client_env, "--version")
    assert v.returncode == 0 and b"rftp" in v.stdout


def test_interrupted_download_keeps_partial_and_resumes(vsftpd, slow_vsftpd, client_env, tmp_path):
    src = write_random(vsftpd.pub / "big.bin", 6 * 1024 * 1024)
    dst = tmp_path / "big.bin"
    part = Path(str(dst) + ".rftp-part")
    proc = subprocess.Popen([RFTP, "get", slow_vsftpd.url("/pub/big.bin"), str(dst)], env=client_env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    # Wait (without a time assertion) until some bytes landed, then interrupt.
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not (part.exists() and part.stat().st_size > 0):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGINT, err  # died of it, as shells expect
    assert b"-c" in err
    assert part.exists() and not dst.exists()
    kept = part.stat().st_size
    assert 0 < kept < src.stat().st_size
    # The space reserved for the whole file up front was given back: the
    # partial holds what arrived, not 6 MiB of reservation.
    assert part.stat().st_blocks * 512 < kept + 1024 * 1024, (part.stat().st_blocks, kept)

    r = rftp(client_env, "--json", "get", "-c", vsftpd.url("/pub/big.bin"), str(dst))
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout.splitlines()[-1])
    assert summary["bytes"] == src.stat().st_size - kept
    assert sha256(dst) == sha256(src)
    assert not part.exists()


def test_resumed_upload_completes_remote_file(vsftpd, client_env, tmp_path):
    src = write_random(tmp_path / "up.bin", 2 * 1024 * 1024 + 11)
    # The remote holds a prefix, as an interrupted plain STOR leaves it.
    prefix = vsftpd.pub / "up.bin"
    prefix.write_bytes(src.read_bytes()[:700_000])
    ftp_user = pwd.getpwnam("ftp")
    os.chown(prefix, ftp_user.pw_uid, ftp_user.pw_gid)
    r = rftp(client_env, "--json", "put", "-c", str(src), vsftpd.url())
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout.splitlines()[-1])
    assert summary["bytes"] == src.stat().st_size - 700_000
    assert sha256(vsftpd.pub / "up.bin") == sha256(src)
    # Already complete: nothing is sent.
    r = rftp(client_env, "--json", "put", "-c", str(src), vsftpd.url())
    assert r.returncode == 0
    assert json.loads(r.stdout.splitlines()[-1])["bytes"] == 0
