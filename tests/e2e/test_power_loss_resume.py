"""A resume point that survives a power loss. The resume journal's written
prefix is only as good as the page cache: if the machine goes down, writes
not yet synced are lost and the file may hold zeros there. So every few
seconds a checkpoint syncs the partial file and records a durable prefix, and
the journal names the boot it was written in. Read in another boot, only the
durable prefix counts.

A power loss is played here as what it leaves behind: the process killed,
the journal naming another boot, and the bytes past the durable prefix
zeroed (the writes the disk never got; power_loss.py). The resume must still
end with the file whole. The RDMA lab runs the same over both soft devices."""

import ftplib
import signal
import subprocess
import time
from pathlib import Path

from conftest import PASSWORDS, Rftpd
from power_loss import FAST_CHECKPOINTS, lose_power, synced_part_way
from test_client_rftpd import RFTP, env, random_file, rftp, sha256, summary, url  # noqa: F401 (env is a fixture)
from test_whole_reservation import SIZE, kill_client_mid_download, kill_daemon_mid_upload, on_a_file_system_that_preallocates


def test_daemon_resumes_an_upload_from_its_durable_prefix_after_a_power_loss(tmp_path, env):
    work = tmp_path / "daemon"
    d = Rftpd(work, env_extra=FAST_CHECKPOINTS)
    root = d.roots["alice"]
    on_a_file_system_that_preallocates(root)
    src = random_file(tmp_path / "w.bin", SIZE)
    part, journal = root / ".w.bin.rftp-part", root / ".w.bin.rftp-resume"
    command = [RFTP, "put", "-P", "4", "--block-size", "1M", str(src), url(d, "w.bin")]
    kill_daemon_mid_upload(d, "w.bin", command, env, ready=synced_part_way(SIZE))
    durable = lose_power(part, journal)

    again = Rftpd(work)  # the same root, as after the machine came back
    try:
        ftp = ftplib.FTP()
        ftp.connect("127.0.0.1", again.port, timeout=60)
        ftp.login("alice", PASSWORDS["alice"])
        ftp.voidcmd("TYPE I")
        assert ftp.size(".w.bin.rftp-part") == durable  # cut back to what was synced
        ftp.quit()
        r = rftp(env, "--json", "put", "-c", "-P", "4", "--block-size", "1M", str(src), url(again, "w.bin"))
        assert r.returncode == 0, r.stderr
        assert summary(r)["bytes"] == SIZE - durable
        assert sha256(root / "w.bin") == sha256(src)
        assert sorted(p.name for p in root.iterdir()) == ["w.bin"]
    finally:
        again.stop()


def resume_download_from(durable, rftpd, env, name, src, dst):
    """get -c moves exactly the bytes past the durable prefix, and the file ends whole, its bookkeeping gone."""
    r = rftp(env, "--json", "get", "-c", "-P", "4", "--block-size", "1M", url(rftpd, name), str(dst))
    assert r.returncode == 0, r.stderr
    assert summary(r)["bytes"] == SIZE - durable
    assert sha256(dst) == sha256(src)
    assert not Path(f"{dst}.rftp-part").exists() and not Path(f"{dst}.rftp-resume").exists()


def test_client_resumes_a_download_from_its_durable_prefix_after_a_power_loss(rftpd, env, tmp_path):
    on_a_file_system_that_preallocates(tmp_path)
    src = random_file(rftpd.roots["alice"] / "r.bin", SIZE)
    dst = tmp_path / "r.bin"
    part, journal = Path(str(dst) + ".rftp-part"), Path(str(dst) + ".rftp-resume")
    kill_client_mid_download(["-P", 4, "--block-size", "1M", url(rftpd, "r.bin")], dict(env, **FAST_CHECKPOINTS),
                             dst, ready=synced_part_way(SIZE))
    durable = lose_power(part, journal)

    resume_download_from(durable, rftpd, env, "r.bin", src, dst)


def test_an_interrupted_download_keeps_its_journal_for_a_power_loss(rftpd, env, tmp_path):
    """A download that fails (here: Ctrl-C) cuts its file to the complete
    prefix but keeps the journal: the bytes past its durable prefix may still
    be only in the page cache, and without the journal the file's size would
    be trusted after a power loss."""
    on_a_file_system_that_preallocates(tmp_path)
    src = random_file(rftpd.roots["alice"] / "i.bin", SIZE)
    dst = tmp_path / "i.bin"
    part, journal = Path(str(dst) + ".rftp-part"), Path(str(dst) + ".rftp-resume")
    ready = synced_part_way(SIZE)
    for _attempt in range(3):
        proc = subprocess.Popen([RFTP, "get", "-P", "4", "--block-size", "1M", url(rftpd, "i.bin"), str(dst)],
                                env=dict(env, **FAST_CHECKPOINTS), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline and not ready(journal):
            time.sleep(0.001)
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        if proc.returncode == -signal.SIGINT:
            break
        dst.unlink(missing_ok=True)
    assert proc.returncode == -signal.SIGINT, err  # died of it, as shells expect
    assert journal.exists() and part.exists()
    durable = lose_power(part, journal)

    resume_download_from(durable, rftpd, env, "i.bin", src, dst)
