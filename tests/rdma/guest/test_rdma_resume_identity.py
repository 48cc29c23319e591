"""put -c over RDMA continues rftpd's partial upload only while it was begun
from the same local file (over TCP: tests/e2e/test_resume_identity.py).
rftp names its source in SRCE before RSTR; rftpd records it on the partial
file and shows it in MLST. The daemon's root is on the lab's ext4 disk: the
guest's 6.1 tmpfs keeps no user extended attributes."""

import ftplib
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from conftest import PASSWORD, Daemon, bound, lab_devices, rftp, url, wait_for
from test_rdma_file_sizes import lab_disk
from test_rdma_transfers import MiB, digest, start_client, write_pattern

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "e2e"))
from restart import journal_prefix  # noqa: E402
from source_identity import source_token  # noqa: E402

PORT = 2133
SIZE = 128 * MiB


@pytest.fixture(scope="module")
def disk_daemon():
    workdir = lab_disk() / "rftpd-resume-identity"
    workdir.mkdir()
    d = Daemon(workdir, [a for _, a in lab_devices()], port=PORT)
    yield d
    alive = d.alive()
    assert d.stop() == 0 and alive, d.log()[-3000:]


def mlst_source(addr, name):
    f = ftplib.FTP()
    f.connect(addr, PORT, timeout=bound(20))
    f.login("alice", PASSWORD)
    try:
        reply = f.sendcmd(f"MLST {name}")
    finally:
        f.quit()
    facts = next(line for line in reply.splitlines() if line.startswith(" ")).strip().split(" ", 1)[0]
    return next((fact.split("=", 1)[1] for fact in facts.split(";") if fact.lower().startswith("x.rftp-source=")), None)


def test_a_partial_rdma_upload_of_another_version_is_sent_whole(disk_daemon, device):
    """(Continuing the same file's partial is the client's side alone, tested
    over TCP; here RSTR must record the source and -c must see the change.)"""
    name, addr = device
    remote = f"identity-{name}.bin"
    root = disk_daemon.root
    part, journal = root / f".{remote}.rftp-part", root / f".{remote}.rftp-resume"
    # On the lab disk too, and removed however the test ends: the guest's
    # /tmp (tmpfs, in its 4 GiB) holds the suite's other large files.
    src = disk_daemon.workdir / f"src-{remote}"
    try:
        write_pattern(src, SIZE, 51)
        client = start_client("put", "-P", "4", str(src), url(addr, remote, port=PORT))
        wait_for(lambda: 0 < journal_prefix(journal) < SIZE or client.poll() is not None, 120,
                 "the upload to get under way")
        client.send_signal(signal.SIGKILL)
        client.wait()
        assert not (root / remote).exists(), "the client was never caught mid-upload"
        wait_for(lambda: f"event=transfer direction=store path=/{remote} " in disk_daemon.log(), 30,
                 "rftpd to end the cut upload")
        kept = journal_prefix(journal)
        assert 0 < kept < SIZE
        assert mlst_source(addr, part.name) == source_token(src)  # recorded by RSTR

        # Same size, new content, a later modification time.
        write_pattern(src, SIZE, 52)
        later = time.time() + 60
        os.utime(src, (later, later))
        _, s = rftp("put", "-c", "-P", "4", str(src), url(addr, remote, port=PORT))
        assert s["transport"] == "rdma"
        assert s["bytes"] == SIZE, s
        assert any("another version of the local file" in n for n in s.get("notes", [])), s
        assert digest(root / remote) == digest(src)
        assert os.listxattr(root / remote) == []
    finally:
        for f in (src, root / remote, part, journal):
            f.unlink(missing_ok=True)
