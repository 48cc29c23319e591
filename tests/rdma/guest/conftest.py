"""Fixtures for the RDMA end-to-end tests, which run INSIDE the lab guest
(tests/rdma/run.sh boots it): the real rftpd listening on both soft RDMA
devices' addresses, the real rftp client, and the devices themselves.

The guest has one CPU and slow process starts, so the daemon is started once
per module and tests reuse it; every test checks at the end that it is still
alive."""

import ftplib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))
from passed_test_files import note_the_tests_files, remove_if_passed  # noqa: E402,F401 (an autouse fixture)
from cheap_password_hash import cheap_password_hash  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
BUILD = Path(os.environ.get("RFTP_BUILD", ROOT / "build"))
# rftpd and rftp as the tests run them: built with their test-only switches
# (middleware/test_switches.h); BUILD holds the ones that ship.
TESTING = BUILD / "testing"
PASSWORD = "alice-secret"
CONTROL_PORT = 2121
# How many times slower this guest is than the reference guest the bounds
# below were written for (measured at boot: tests/rdma/lab/guest-speed.sh).
SLOWNESS = float(os.environ.get("LAB_SLOWNESS", "1"))
# rftp takes TLS where the lab's rftpd offers it (it offers none) instead of
# requiring it for these non-loopback addresses; every rftp the tests run
# inherits this.
os.environ.setdefault("RFTP_TLS", "auto")


def bound(seconds: float) -> float:
    """A bound against a hang, scaled to this guest's measured speed."""
    return seconds * SLOWNESS


def lab_devices():
    """[(name, address)] from RFTP_LAB_DEVICES, set by the guest's init."""
    spec = os.environ.get("RFTP_LAB_DEVICES", "")
    devices = [tuple(item.split("=", 1)) for item in spec.split()]
    if not devices:
        pytest.fail("RFTP_LAB_DEVICES is not set: these tests run inside the RDMA lab (tests/rdma/run.sh)")
    return devices


class Daemon:
    """rftpd listening on every lab device's address; alice is read-write."""

    def __init__(self, workdir: Path, addresses, extra_config="", port=CONTROL_PORT, preexec_fn=None, env_extra=None,
                 program: Path = TESTING / "rftpd", log_level="debug", tls=None):
        self.workdir = workdir
        self.root = workdir / "alice"
        self.root.mkdir(parents=True, exist_ok=True)
        self.port = port
        hashed = cheap_password_hash(PASSWORD)
        # The lab's network is the guest's own: clear text is chosen in
        # words, unless tls (certificate, key) makes these listeners require TLS.
        plain = "" if tls else ", allow_plaintext: true"
        listen = ", ".join(f"{{address: {a}, port: {port}{plain}}}" for a in addresses)
        if tls:
            extra_config += f"tls: {{certificate: \"{tls[0]}\", key: \"{tls[1]}\"}}\n"
        self.config = workdir / "rftpd.yaml"
        self.config.write_text(
            f"listen: [{listen}]\n"
            f"users:\n  - {{name: alice, password_hash: \"{hashed}\", root: \"{self.root}\", access: read-write}}\n"
            f"timeouts: {{data: 20}}\n"
            f"log: {{level: {log_level}}}\n{extra_config}")
        self.log_path = workdir / "rftpd.log"
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen([str(program), "--config", str(self.config)],
                                     stdout=self._log, stderr=subprocess.STDOUT, preexec_fn=preexec_fn,
                                     env=dict(os.environ, **(env_extra or {})))
        self.addresses = addresses
        self._wait_listening()

    def _wait_listening(self):
        deadline = time.monotonic() + bound(20)
        while time.monotonic() < deadline:
            if "event=listening" in self.log() and self.log().count("event=listening") == len(self.addresses):
                return
            if self.proc.poll() is not None:
                raise RuntimeError(f"rftpd exited with {self.proc.returncode}:\n{self.log()}")
            time.sleep(0.05)
        raise RuntimeError("rftpd did not start listening:\n" + self.log())

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")

    def count(self, pattern: str) -> int:
        return len(re.findall(pattern, self.log()))

    def alive(self) -> bool:
        return self.proc.poll() is None

    def ftp(self, address) -> ftplib.FTP:
        f = ftplib.FTP()
        f.connect(address, self.port, timeout=bound(30))
        f.login("alice", PASSWORD)
        return f

    def rdma_totals(self, address) -> dict:
        """The daemon's own accounting of RDMA resources, from STAT."""
        f = self.ftp(address)
        try:
            text = f.sendcmd("STAT")
        finally:
            f.quit()
        m = re.search(r"RDMA totals: channels=(\d+) queue_pairs=(\d+) pinned_bytes=(\d+)", text)
        assert m, text
        return {"channels": int(m[1]), "queue_pairs": int(m[2]), "pinned_bytes": int(m[3])}

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=bound(20))
            except subprocess.TimeoutExpired:
                kill_bounded(self.proc, "rftpd, stopped with SIGTERM,", self.log()[-3000:])
        self._log.close()
        return self.proc.returncode


@pytest.fixture(scope="module")
def daemon(tmp_path_factory):
    d = Daemon(tmp_path_factory.mktemp("rftpd"), [a for _, a in lab_devices()])
    yield d
    alive = d.alive()
    code = d.stop()
    assert alive, f"rftpd died during the tests:\n{d.log()[-5000:]}"
    assert code == 0, f"rftpd exited {code} on SIGTERM:\n{d.log()[-5000:]}"


@pytest.fixture(params=lab_devices(), ids=lambda d: d[0])
def device(request):
    """(name, address) of one soft RDMA device: every test runs on each."""
    return request.param


def where_it_waits(pid: int) -> str:
    """What each thread of a stuck process waits on in the kernel: a process
    stuck inside the soft RDMA driver cannot be killed, and this says where."""
    lines = []
    for task in sorted(Path(f"/proc/{pid}/task").glob("*")):
        def read(name):
            try:
                return (task / name).read_text().strip()
            except OSError:
                return "?"
        state = next((l for l in read("status").splitlines() if l.startswith("State:")), "State: ?")
        lines.append(f"thread {task.name}: {state}, wchan {read('wchan')}\n{read('stack')}")
    if shutil.which("gdb"):  # the user-space side of the same threads, where the machine has gdb
        try:
            bt = subprocess.run(["gdb", "-p", str(pid), "-batch", "-nx", "-ex", "thread apply all bt"],
                                capture_output=True, text=True, timeout=60).stdout
            lines.append(bt[-12000:])
        except subprocess.TimeoutExpired:
            lines.append("gdb did not attach within 60 s")
    return "\n".join(lines)


def kill_bounded(proc, what: str, detail: str = "") -> None:
    """SIGKILL, then a bounded wait: a hang becomes this test's failure, with
    where it hung, instead of the whole guest's until the watchdog."""
    waits = where_it_waits(proc.pid)
    proc.kill()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{what} survived SIGKILL for 30 s; it waits in the kernel:\n{waits}\n{detail}")
    raise AssertionError(f"{what} timed out; it was waiting here:\n{waits}\n{detail}")


def rftp(*args, timeout=300, check=True, env_extra=None, preexec_fn=None):
    """Runs the real client; returns (CompletedProcess, JSON summary or None)."""
    import json
    env = dict(os.environ, RFTP_PASSWORD=PASSWORD)
    env.update(env_extra or {})
    argv = [str(TESTING / "rftp"), "--json", "--no-progress", *args]
    # Not Popen's context manager: its exit waits for the process without bound.
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=preexec_fn)
    try:
        out, err = proc.communicate(timeout=bound(timeout))
    except subprocess.TimeoutExpired:
        kill_bounded(proc, f"rftp {' '.join(args)}")
    p = subprocess.CompletedProcess(argv, proc.returncode, out, err)
    summary = None
    for line in p.stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("event") == "summary":
            summary = event
    if summary and summary.get("notes"):
        print(f"rftp {' '.join(args)}: notes: {summary['notes']}")  # shown with a failing test: why TCP, say
    if check and p.returncode != 0:
        raise AssertionError(f"rftp {' '.join(args)} exited {p.returncode}:\n{p.stderr}\n{p.stdout}")
    return p, summary


def low_memlock():
    """preexec_fn: a locked-memory limit of 1 MiB, far below any block pool."""
    import resource
    resource.setrlimit(resource.RLIMIT_MEMLOCK, (1 << 20, 1 << 20))


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + bound(timeout)
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


def url(address, path, port=CONTROL_PORT):
    return f"rftp://alice@{address}:{port}/{path.lstrip('/')}"


def expected_notice(device_name):
    """InfiniBand and RoCE deliver RDMA WRITE WITH IMMEDIATE; iWARP (an
    "RNIC" node) has none, so the engine must have found that out by trying
    and used WRITE then SEND. Judged by the transport, not the driver name."""
    node_type = Path(f"/sys/class/infiniband/{device_name}/node_type").read_text()
    return "write_then_send" if "RNIC" in node_type else "write_with_imm"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed test shows the daemon's side too: the last lines of its log
    (progress lines left out), which is what a rare failure in CI leaves to
    go on. A passed test's tmp_path goes (tests/common/passed_test_files.py)."""
    outcome = yield
    report = outcome.get_result()
    remove_if_passed(item, report)
    d = item.funcargs.get("daemon") if report.when == "call" and report.failed else None
    if isinstance(d, Daemon):
        lines = [line for line in d.log().splitlines() if "event=rdma_progress" not in line]
        report.sections.append(("rftpd log, last 80 lines", "\n".join(lines[-80:])))


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "first_guest: a long test without a device parameter, run in the guest "
        "started with LAB_DEVICE_AGNOSTIC_TESTS=first; the others run in the second")


def pytest_collection_modifyitems(config, items):
    """tests/rdma/run.sh runs one guest per device; a test without a device
    parameter (it takes whichever device there is) runs in one of them only.
    LAB_DEVICE_AGNOSTIC_TESTS says which: "first" (those marked
    first_guest), "second" (the others), "none", or "all" (the default, for
    a single guest). The long ones go to one guest, the short ones to the
    other, whose own tests take longer."""
    share = os.environ.get("LAB_DEVICE_AGNOSTIC_TESTS", "all")
    if share not in ("all", "first", "second", "none"):
        raise pytest.UsageError(f"LAB_DEVICE_AGNOSTIC_TESTS={share!r}: say all, first, second or none")
    if share == "all":
        return

    def runs_here(item):
        if "device" in getattr(item, "fixturenames", ()):
            return True
        first = item.get_closest_marker("first_guest") is not None
        return share == ("first" if first else "second")

    keep = [item for item in items if runs_here(item)]
    config.hook.pytest_deselected(items=[item for item in items if item not in keep])
    items[:] = keep
