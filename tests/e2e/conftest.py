"""Shared fixtures for the end-to-end tests: the build directory, and a real
rftpd started on a free loopback port with users whose roots are temporary
directories. Every test that starts a daemon also checks, at teardown, that
the daemon is still alive: nothing a client does may bring it down."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
from passed_test_files import note_the_tests_files, remove_if_passed  # noqa: E402,F401 (an autouse fixture)
from cheap_password_hash import cheap_password_hash  # noqa: E402

BUILD = Path(os.environ.get("RFTP_BUILD", Path(__file__).resolve().parents[2] / "build"))
# rftpd and rftp as the tests run them: built with their test-only switches
# (middleware/test_switches.h); BUILD holds the ones that ship.
TESTING = BUILD / "testing"
PASSWORDS = {"alice": "alice-secret", "bob": "bob-secret"}
_hash_cache = {}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def password_hash(password: str) -> str:
    """rftpd's own hash of password, at its default cost (`--hash-password`)."""
    if password not in _hash_cache:
        out = subprocess.run([str(TESTING / "rftpd"), "--hash-password"], input=password + "\n",
                             capture_output=True, text=True, check=True)
        _hash_cache[password] = out.stdout.strip()
    return _hash_cache[password]


def default_cost_hashes() -> dict:
    """Every test user's password hashed by rftpd at its default cost."""
    return {name: password_hash(pw) for name, pw in PASSWORDS.items()}


@pytest.fixture(params=["disk", "tmpfs"])
def place(request, tmp_path):
    """A scratch directory on the machine's disk (pytest's tmp) or on tmpfs."""
    if request.param == "disk":
        yield tmp_path
        return
    d = Path(tempfile.mkdtemp(prefix="rftp-place-", dir="/dev/shm"))
    yield d
    shutil.rmtree(d, ignore_errors=True)


def on_tmpfs(directory: Path) -> bool:
    return str(directory.resolve()).startswith("/dev/shm/")


class Rftpd:
    """A running rftpd. alice is read-write in root/alice, bob read-only in root/bob."""

    def __init__(self, workdir: Path, extra_config: str = "", anonymous: bool = False, wrapper=(), env_extra=None,
                 program: Path = TESTING / "rftpd", hashes=None, more_listeners: str = "", port: int = 0):
        self.workdir = workdir
        self.port = port or free_port()  # a port: a restart on the one its predecessor had
        self.roots = {"alice": workdir / "alice", "bob": workdir / "bob", "anonymous": workdir / "anon"}
        for r in self.roots.values():
            r.mkdir(parents=True, exist_ok=True)
        users = "".join(
            f"  - {{name: {name}, password_hash: \"{(hashes or {}).get(name) or cheap_password_hash(pw)}\", "
            f"root: \"{self.roots[name]}\", "
            f"access: {'read-write' if name == 'alice' else 'read-only'}}}\n"
            for name, pw in PASSWORDS.items())
        anon = f"anonymous: {{enabled: true, root: \"{self.roots['anonymous']}\"}}\n" if anonymous else ""
        self.config = workdir / "rftpd.yaml"
        self.config.write_text(
            f"listen: [{{address: 127.0.0.1, port: {self.port}}}{more_listeners}]\n"
            f"users:\n{users}{anon}log: {{level: debug}}\n{extra_config}")
        self.log_path = workdir / "rftpd.log"
        self._log = open(self.log_path, "w")
        # wrapper: a command to run the daemon under (strace, for the durability test).
        # env_extra: the test-only fault switch, for one. program: another
        # build of rftpd (an installed one). hashes: a user's password hash
        # in place of the cheap one (cheap_password_hash): rftpd's own at its
        # default cost, or one made elsewhere (mkpasswd, openssl passwd).
        # more_listeners: further list entries (", {address: ..., port: ...}").
        self.proc = subprocess.Popen([*wrapper, str(program), "--config", str(self.config)],
                                     stdout=self._log, stderr=subprocess.STDOUT,
                                     env=dict(os.environ, **(env_extra or {})))
        self._wait_listening()

    def _wait_listening(self):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"rftpd exited with {self.proc.returncode}:\n{self.log()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("rftpd did not start listening:\n" + self.log())

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError("rftpd did not stop on SIGTERM:\n" + self.log())
        self._log.close()
        return self.proc.returncode


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    remove_if_passed(item, outcome.get_result())


def on_a_file_system_with_user_xattrs(directory: Path):
    """Skips the test where directory keeps no user extended attributes
    (rftp and rftpd record a partial file's source in one)."""
    probe = directory / ".xattr-probe"
    probe.write_bytes(b"")
    try:
        os.setxattr(probe, "user.rftp.probe", b"1")
    except OSError:
        pytest.skip("SKIPPED: this file system keeps no user extended attributes")
    finally:
        probe.unlink()


@pytest.fixture
def rftpd_factory(tmp_path):
    started = []

    def start(extra_config: str = "", anonymous: bool = False, name: str = "d", hashes=None) -> Rftpd:
        d = Rftpd(tmp_path / f"{name}{len(started)}", extra_config, anonymous, hashes=hashes)
        started.append(d)
        return d

    yield start
    # Every daemon is stopped before any verdict: one that died must not
    # leave the others running.
    verdicts = [(d, d.alive(), d.stop()) for d in started]
    for d, alive, code in verdicts:
        assert alive, f"rftpd died during the test (exit {d.proc.returncode}):\n{d.log()}"
        assert code == 0, f"rftpd exited {code} on SIGTERM:\n{d.log()}"


@pytest.fixture
def rftpd(rftpd_factory) -> Rftpd:
    return rftpd_factory()


def rounds(debug_log: str) -> list:
    """The commands rftp sent between replies it read (its -vv log): one
    list a round, each a round trip on a long path."""
    out, current = [], []
    for line in debug_log.splitlines():
        if line.startswith("debug: --> "):
            current.append(line.split()[2])
        elif line.startswith("debug: <-- ") and current:
            out.append(current)
            current = []
    return out + ([current] if current else [])
