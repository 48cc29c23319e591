"""storage.sync_before_rename: rftpd makes an upload durable (fdatasync)
before renaming it into place, and does not when the switch is off. Seen
from outside, with strace following the daemon's threads."""

import re
import shutil
import subprocess

import pytest

from conftest import Rftpd
from test_client_rftpd import env, random_file, rftp, url  # noqa: F401 (env is a fixture)


def stop_traced(d):
    """Stops the daemon itself (strace's child); strace then exits with it."""
    for pid in subprocess.run(["pgrep", "-P", str(d.proc.pid)], capture_output=True, text=True).stdout.split():
        subprocess.run(["kill", "-TERM", pid])
    d.proc.wait(timeout=20)


def traced_upload(tmp_path, env, extra_config, streams):
    trace = tmp_path / "trace.txt"
    d = Rftpd(tmp_path / "d", extra_config,
              wrapper=("strace", "-f", "-qq", "-e", "trace=fdatasync,renameat", "-o", str(trace)))
    try:
        src = random_file(tmp_path / "f.bin", 3 * 1024 * 1024 + 5)
        assert rftp(env, "put", "-P", str(streams), str(src), url(d, "f.bin")).returncode == 0
    finally:
        stop_traced(d)
    return [l for l in trace.read_text().splitlines() if "fdatasync(" in l or "renameat(" in l]


@pytest.mark.skipif(shutil.which("strace") is None, reason="SKIPPED: strace is not installed")
@pytest.mark.parametrize("streams", [1, 4])
def test_upload_is_synced_before_it_is_renamed(tmp_path, env, streams):
    calls = traced_upload(tmp_path, env, "", streams)
    rename = next(i for i, l in enumerate(calls) if re.search(r'renameat\(.*"f\.bin"', l))
    assert any("fdatasync(" in l and "= 0" in l for l in calls[:rename]), calls


@pytest.mark.skipif(shutil.which("strace") is None, reason="SKIPPED: strace is not installed")
def test_sync_can_be_switched_off(tmp_path, env):
    calls = traced_upload(tmp_path, env, "storage: {sync_before_rename: false}\n", 1)
    assert any(re.search(r'renameat\(.*"f\.bin"', l) for l in calls), calls
    assert not any("fdatasync(" in l for l in calls), calls
