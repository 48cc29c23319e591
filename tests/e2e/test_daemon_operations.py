"""What an operator meets running rftpd: signals, config mistakes caught
before they bite, and `make install` (cmake --install) over a live config."""

import ftplib
import os
import shutil
import signal
import socket
import stat
import subprocess
import time
from pathlib import Path

import pytest

from conftest import BUILD, PASSWORDS, TESTING, Rftpd, free_port, password_hash

RFTPD = str(TESTING / "rftpd")


def test_sighup_is_logged_and_ignored(tmp_path):
    """SIGHUP (logrotate, systemctl kill -s HUP) must not end the daemon and
    every transfer with it: rftpd says it does not reload, and serves on."""
    d = Rftpd(tmp_path / "d")
    try:
        os.kill(d.proc.pid, signal.SIGHUP)
        deadline = time.monotonic() + 10
        while "event=sighup_ignored" not in d.log() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "event=sighup_ignored" in d.log()
        assert d.alive()
        ftp = ftplib.FTP()
        ftp.connect("127.0.0.1", d.port, timeout=30)
        ftp.login("alice", PASSWORDS["alice"])
        assert ftp.sendcmd("NOOP").startswith("200")
        ftp.quit()
    finally:
        d.stop()


def test_a_missing_config_file_is_a_config_error(tmp_path):
    """docs/config.md: config errors exit 3 and say why. An empty path (an
    unset variable in a unit file) is no request for the built-in defaults."""
    r = subprocess.run([RFTPD, "--config", str(tmp_path / "nowhere.yaml"), "--check-config"], capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 3, r.stderr
    assert "nowhere.yaml: No such file or directory" in r.stderr
    r = subprocess.run([RFTPD, "--config", "", "--check-config"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 3, r.stderr


def test_a_pinned_memory_budget_that_holds_no_channel_is_refused(tmp_path):
    """rdma.max_pinned equal to rdma.pool_size passed the old check, but a
    channel also pins a trailer page per block and its message area, in
    whole 2 MiB pages: every RADR would get 450 while the log said RDMA is
    on. --check-config refuses it and names the size needed."""
    config = tmp_path / "tight.yaml"
    config.write_text("rdma: {pool_size: 64M, max_pinned: 64M}\n")
    r = subprocess.run([RFTPD, "--config", str(config), "--check-config"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 3, r.stderr
    assert "rdma.max_pinned (67108864 bytes) cannot hold one channel" in r.stderr
    assert "raise rdma.max_pinned to at least" in r.stderr
    config.write_text("rdma: {pool_size: 64M, max_pinned: 80M}\n")
    r = subprocess.run([RFTPD, "--config", str(config), "--check-config"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr


@pytest.mark.skipif(not shutil.which("cmake") or not (BUILD / "cmake_install.cmake").exists(),
                    reason="needs cmake and a cmake build directory")
def test_install_never_overwrites_the_live_config(tmp_path):
    """An upgrade (make install) refreshes the example and leaves the
    operator's config alone; a first install creates it readable by owner
    and group only, as it holds password hashes."""
    dest = tmp_path / "root"
    env = dict(os.environ, DESTDIR=str(dest))

    def install():
        r = subprocess.run(["cmake", "--install", str(BUILD), "--prefix", "/usr"], env=env, capture_output=True,
                           text=True, timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
        return r.stdout

    out = install()
    live, example = dest / "etc/rftpd/rftpd.yaml", dest / "etc/rftpd/rftpd.yaml.example"
    assert "Created: " in out
    assert stat.S_IMODE(live.stat().st_mode) == 0o640
    assert example.read_text() == live.read_text()
    unit = (dest / "usr/lib/systemd/system/rftpd.service").read_text()
    assert "ExecStart=/usr/sbin/rftpd " in unit and "/usr/local/sbin" not in unit
    sync_unit = (dest / "usr/lib/systemd/system/rftp-sync@.service").read_text()
    assert "ExecStart=/usr/bin/rftp --no-progress sync --job /etc/rftp/sync/%i.yaml" in sync_unit
    assert "OnCalendar=" in (dest / "usr/lib/systemd/system/rftp-sync@.timer").read_text()
    assert (dest / "etc/rftp/sync/example.yaml.example").read_text() == \
        (Path(__file__).parents[2] / "conf/rftp-sync-example.yaml").read_text()

    live.write_text("# the operator's own\n")
    out = install()
    assert "Keeping: " in out
    assert live.read_text() == "# the operator's own\n"


def test_journal_priorities_only_when_stderr_is_the_journal(tmp_path):
    """Under systemd each line starts with its priority ("<3>" for errors), so
    journalctl -p err finds a rejected config. A process that merely
    inherited JOURNAL_STREAM but writes to a file writes plain lines."""
    config = tmp_path / "bad.yaml"
    config.write_text("listen: nonsense\n")
    out = tmp_path / "stderr.txt"
    for journal, expected in ((False, "error: rftpd: "), (True, "<3>rftpd: ")):
        with open(out, "w") as f:
            st = os.fstat(f.fileno())
            stream = f"{st.st_dev}:{st.st_ino}" if journal else "1:2"
            r = subprocess.run([RFTPD, "--config", str(config), "--check-config"], stderr=f,
                               env=dict(os.environ, JOURNAL_STREAM=stream), timeout=30)
        assert r.returncode == 3
        assert out.read_text().startswith(expected), out.read_text()


def _notify_socket(tmp_path):
    """A datagram socket standing in for systemd's NOTIFY_SOCKET."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    path = tmp_path / "notify"
    sock.bind(str(path))
    return sock, path


def _config_for_port(tmp_path, port):
    root = tmp_path / "root"
    root.mkdir(exist_ok=True)
    config = tmp_path / "rftpd.yaml"
    config.write_text(f"listen: [{{address: 127.0.0.1, port: {port}}}]\n"
                      f"users:\n  - {{name: alice, password_hash: \"{password_hash(PASSWORDS['alice'])}\", "
                      f"root: \"{root}\"}}\n")
    return config


def test_systemd_is_told_ready_once_clients_can_connect_and_told_when_it_stops(tmp_path):
    """Type=notify: READY=1 comes only once the port is bound, so a deploy
    script whose `systemctl restart` returned can connect at once; STOPPING=1
    comes when SIGTERM begins the stop. STATUS= says where it listens."""
    sock, path = _notify_socket(tmp_path)
    port = free_port()
    proc = subprocess.Popen([RFTPD, "--config", str(_config_for_port(tmp_path, port))], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ, NOTIFY_SOCKET=str(path)))
    try:
        sock.settimeout(10)
        ready = sock.recv(4096).decode()
        assert "READY=1" in ready.split("\n"), ready
        assert f"STATUS=Listening on 127.0.0.1 port {port}" in ready.split("\n"), ready
        # No retry: told ready, it must already accept.
        with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
            assert c.recv(100).startswith(b"220")
        proc.send_signal(signal.SIGTERM)
        stopping = sock.recv(4096).decode()
        assert "STOPPING=1" in stopping.split("\n"), stopping
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        sock.close()


def test_systemd_is_never_told_ready_when_the_port_is_taken(tmp_path):
    """With Type=notify a daemon that cannot listen fails `systemctl start`
    itself: it exits 4 without ever saying READY=1."""
    sock, path = _notify_socket(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = subprocess.run([RFTPD, "--config", str(_config_for_port(tmp_path, port))], capture_output=True, text=True,
                           env=dict(os.environ, NOTIFY_SOCKET=str(path)), timeout=30)
    assert r.returncode == 4, r.stderr
    assert "event=startup_failed" in r.stderr
    sock.setblocking(False)
    messages = []
    while True:
        try:
            messages.append(sock.recv(4096).decode())
        except BlockingIOError:
            break
    sock.close()
    assert not any("READY=1" in m.split("\n") for m in messages), messages


def test_a_root_whose_parent_others_may_change_is_served_with_a_warning(tmp_path):
    """Someone who may write a user root's parent can rename the root away
    and put a directory of their own in its place. rftpd says so at start
    (naming the directory and the fix) and serves on: roots kept in users'
    homes may be the operator's choice. A safe layout says nothing."""
    safe = Rftpd(tmp_path / "safe")
    try:
        assert "event=root_unsafe" not in safe.log()
    finally:
        safe.stop()
    work = tmp_path / "shared"
    work.mkdir()
    work.chmod(0o777)  # without the sticky bit
    d = Rftpd(work)
    try:
        log = d.log()
        assert f'event=root_unsafe user=alice root={work / "alice"} reason="{work} is writable by anyone (mode 0777), ' \
               f'who could put another directory in place of the root; move the root, or chmod go-w {work}"' in log, log
        ftp = ftplib.FTP()
        ftp.connect("127.0.0.1", d.port, timeout=30)
        ftp.login("alice", PASSWORDS["alice"])
        ftp.quit()
    finally:
        d.stop()
