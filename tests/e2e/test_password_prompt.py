"""The password prompt on a real terminal (a pseudo-terminal that is rftp's
controlling tty): what is typed before Ctrl-C or Ctrl-D is never sent."""

import os
import pty
import select
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from conftest import TESTING  # noqa: E402
from test_client_hostile_server import PLAIN_SERVER, ScriptedServer  # noqa: E402

RFTP = str(TESTING / "rftp")


def read_until(fd, marker: bytes, seconds=20) -> bytes:
    seen = b""
    deadline = time.monotonic() + seconds
    while marker not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    return seen


def prompt_then_type(tmp_path, keys: bytes):
    """rftp ls on a pseudo-terminal, no RFTP_PASSWORD; types keys at the
    prompt. Returns (exit status, everything the terminal showed, commands
    the server received)."""
    server = ScriptedServer(dict(PLAIN_SERVER, USER="331 password please"))
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)}
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(RFTP, [RFTP, "ls", f"rftp://u@127.0.0.1:{server.port}/"], env)
    shown = read_until(fd, b"Password for u@127.0.0.1: ")
    assert b"Password for u@127.0.0.1: " in shown, shown
    os.write(fd, keys)
    shown += read_until(fd, b"\x00never", seconds=10)
    status = wait_bounded(pid, seconds=30)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), shown, server.seen


def wait_bounded(pid: int, seconds: float) -> int:
    """waitpid, but a client still waiting at its prompt fails the test
    instead of holding up the run."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.05)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    raise AssertionError(f"rftp still waited at its prompt after {seconds} s")


def test_ctrl_c_at_the_prompt_stops_rftp_without_sending_the_password(tmp_path):
    code, shown, seen = prompt_then_type(tmp_path, b"half-typed\x03")
    assert code == -signal.SIGINT, shown  # died of it, as shells expect
    assert b"interrupted at the password prompt" in shown
    assert not any(c.startswith("PASS") for c in seen), seen


def test_ctrl_d_at_the_prompt_exits_4_without_sending_the_password(tmp_path):
    # The first Ctrl-D hands over what was typed without a newline, the second
    # is the end of input.
    code, shown, seen = prompt_then_type(tmp_path, b"half-typed\x04\x04")
    assert code == 4, shown
    assert b"ended without a password" in shown
    assert not any(c.startswith("PASS") for c in seen), seen
