"""A disk that loses writes, met where rftp and rftpd meet it: in the answer
to their own fsync/fdatasync (a real FUSE file system whose syncs fail,
failing_disk_fs.py). The resume journal's first checkpoint finds it, and the
transfer stops there instead of moving the rest of a file none of which can
be trusted any more; the partial and its journal go, nothing lands under the
final name, and the daemon goes on serving."""

import re
import shutil
import signal
import subprocess
import time

import pytest

from conftest import PASSWORDS, Rftpd
from daemon_log import transfer_line
from failing_disk_fs import failing_sync_mount, fuse_missing, sync_began_marker
from power_loss import FAST_CHECKPOINTS, journal_fields
from test_client_rftpd import RFTP, MiB, env, random_file, rftp, summary, url  # noqa: F401 (env: a fixture)
from test_daemon_hostile import wait_for
from test_stream_journal import login

SIZE = 256 * MiB

pytestmark = pytest.mark.skipif(bool(fuse_missing()), reason=f"SKIPPED: {fuse_missing()}")


@pytest.fixture(scope="module", autouse=True)
def fuse_mounts(tmp_path_factory):
    """Skips where this machine lets nobody mount FUSE (a container without
    the right), found by trying once."""
    probe = tmp_path_factory.mktemp("fuse-probe")
    try:
        with failing_sync_mount(probe / "disk", probe / "mnt"):
            pass
    except RuntimeError as e:
        pytest.skip(f"SKIPPED: {e}")


@pytest.mark.parametrize("client", ["rftp -P4", "curl"])
def test_a_failed_sync_stops_an_upload_and_discards_it(tmp_path, env, client):
    """rftp's framed streams, and curl's plain one (each stops on its own path)."""
    curl = shutil.which("curl")
    if client == "curl" and not curl:
        pytest.skip("SKIPPED: curl is not installed")
    work, disk = tmp_path / "daemon", tmp_path / "disk"
    src = random_file(tmp_path / "big.bin", SIZE)
    with failing_sync_mount(disk, work / "alice"):
        d = Rftpd(work, env_extra=FAST_CHECKPOINTS)
        try:
            if client == "curl":
                r = subprocess.run([curl, "-sS", "-T", str(src), f"ftp://alice:{PASSWORDS['alice']}@127.0.0.1:{d.port}/big.bin"],
                                   capture_output=True, timeout=300)
                assert r.returncode != 0, r.stderr
            else:
                r = rftp(env, "--json", "put", "-P", "4", "--block-size", "1M", str(src), url(d, "big.bin"))
                assert r.returncode == 8, r.stderr
            # The daemon's reply as it logged it: rftp may have given up
            # waiting for it and said only that the connection closed.
            line = transfer_line(d, "store")
            assert re.search(r"result=failed reason=\"451 Could not flush the upload to disk: .*"
                             r"the partial file was discarded", line), line
            # Stopped at the failed checkpoint, not at the end of the file.
            assert int(re.search(r" bytes=(\d+)", line)[1]) < SIZE // 2, line
            assert list(disk.iterdir()) == []
            ftp = login(d)  # still serving
            assert ftp.nlst() == []
            ftp.quit()
            assert d.proc.poll() is None
        finally:
            d.stop()


def test_a_failed_sync_stops_a_download_and_discards_it(rftpd, tmp_path, env):
    random_file(rftpd.roots["alice"] / "big.bin", SIZE)
    disk = tmp_path / "disk"
    with failing_sync_mount(disk, tmp_path / "mnt") as mnt:
        r = rftp(dict(env, **FAST_CHECKPOINTS), "--json", "get", "-P", "4", "--block-size", "1M",
                 url(rftpd, "big.bin"), str(mnt / "big.bin"))
        assert r.returncode == 6, r.stderr
        assert re.search(rb"fsync .*big\.bin\.rftp-part: .*the partial file was discarded: fetch the file again",
                         r.stderr), r.stderr
        # Stopped at the failed checkpoint, not at the end of the file.
        assert summary(r)["bytes"] < SIZE // 2, r.stdout
        assert list(disk.iterdir()) == []
    assert "result=ok" not in transfer_line(rftpd, "retrieve")  # the daemon saw it stop
    assert login(rftpd).nlst() == ["big.bin"]  # and serves the next session


def test_an_abor_while_a_checkpoint_fails_is_answered_as_an_abort_and_discards_the_partial(tmp_path):
    """The ABOR arrives while the checkpoint's sync is failing: the client
    asked to stop, so the reply is 426, not 451; but the bytes on disk were
    not vouched for by that sync, so the partial and its journal go all the
    same, and no REST could pick them up."""
    work, disk = tmp_path / "daemon", tmp_path / "disk"
    with failing_sync_mount(disk, work / "alice", sync_delay=1.5):
        d = Rftpd(work, env_extra=FAST_CHECKPOINTS)
        try:
            ftp = login(d)
            ftp.voidcmd("TYPE I")
            data = ftp.transfercmd("STOR big.bin")  # a plain stream, as curl's
            # Until the first checkpoint's sync has begun (and will fail). The
            # data connection stays open, so the upload is not over; once the
            # file system stalls in the sync, sends stall too.
            data.settimeout(0.1)
            deadline = time.monotonic() + 30
            while not sync_began_marker(disk).exists():
                assert time.monotonic() < deadline, "no checkpoint began"
                try:
                    data.sendall(b"x" * MiB)
                except TimeoutError:
                    pass
            ftp.putcmd("ABOR")
            assert ftp.getline().startswith("426"), "the upload's own reply"
            assert ftp.getline()[:3] in ("226", "225"), "ABOR's reply"
            data.close()
            line = transfer_line(d, "store")
            assert "result=aborted" in line, line
            assert list(disk.iterdir()) == [], "neither the partial nor its journal stays"
            assert ftp.sendcmd("NOOP").startswith("200")
            ftp.quit()
        finally:
            d.stop()


def test_a_download_interrupted_while_a_checkpoint_fails_keeps_a_partial_that_vouches_for_nothing(
        rftpd, tmp_path, env):
    """Ctrl-C while the checkpoint's sync is failing: rftp exits 130 and keeps
    the partial, as any interrupted download does, but its journal vouches for
    none of it, so -c fetches the whole file again."""
    src = random_file(rftpd.roots["alice"] / "big.bin", SIZE)
    disk = tmp_path / "disk"
    with failing_sync_mount(disk, tmp_path / "mnt", sync_delay=1.5) as mnt:
        p = subprocess.Popen([RFTP, "--json", "get", "-P", "4", "--block-size", "1M", url(rftpd, "big.bin"),
                              str(mnt / "big.bin")], env=dict(env, **FAST_CHECKPOINTS),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        wait_for(sync_began_marker(disk).exists, "the checkpoint's sync to begin", 30)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
        assert p.returncode == -signal.SIGINT, err  # died of it, as shells expect
        assert b"rftp get -c" in err, err
        assert journal_fields(disk / "big.bin.rftp-resume")[:2] == (0, 0)
    assert (disk / "big.bin.rftp-part").exists()
    # Continued where no sync fails: from the start, and whole.
    again = rftp(env, "--json", "get", "-c", "-P", "4", "--block-size", "1M", url(rftpd, "big.bin"),
                 str(disk / "big.bin"))
    assert again.returncode == 0, again.stderr
    assert summary(again)["bytes"] == SIZE
    assert (disk / "big.bin").read_bytes() == src.read_bytes()
    assert sorted(p.name for p in disk.iterdir()) == ["big.bin"]
