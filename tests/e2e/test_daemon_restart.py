"""`systemctl restart rftpd` in the middle of a transfer: SIGTERM, then a new
rftpd on the same roots. The daemon ends every session with 421 at once and
exits 0; its log still has the cut transfer's line (result=aborted); rftp
exits 3 with the server's 421 and prints the -c command; the partial file
and its journal stay; and that command, against the new daemon, moves only
the rest and ends with the file whole."""

import re
import subprocess

import pytest

from conftest import Rftpd
from restart import cut_by_a_restart, journal_prefix, stop_mid_transfer
from test_client_rftpd import RFTP, MiB, env, random_file, rftp, summary, url  # noqa: F401

SIZE = 256 * MiB


@pytest.mark.parametrize("direction,streams", [("put", 1), ("put", 4), ("get", 1), ("get", 4)])
def test_a_restart_mid_transfer_ends_it_with_421_and_c_finishes_it(tmp_path, env, direction, streams):
    src = random_file(tmp_path / "src.bin", SIZE)
    work = tmp_path / "d"
    d = Rftpd(work)
    root = d.roots["alice"]
    if direction == "put":
        final, part, journal = root / "up.bin", root / ".up.bin.rftp-part", root / ".up.bin.rftp-resume"
        args = lambda daemon: ["put", str(src), url(daemon, "up.bin")]  # noqa: E731
    else:
        (root / "there.bin").write_bytes(src.read_bytes())
        final = tmp_path / "down.bin"
        part, journal = tmp_path / "down.bin.rftp-part", tmp_path / "down.bin.rftp-resume"
        args = lambda daemon: ["get", url(daemon, "there.bin"), str(final)]  # noqa: E731
    d2 = None
    try:
        d, code, err = cut_by_a_restart(
            d, lambda daemon: subprocess.Popen([RFTP, "-P", str(streams), *args(daemon)], env=env, text=True,
                                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE),
            lambda: Rftpd(work), journal, final, SIZE)
        assert d.proc.wait(timeout=10) == 0, d.log()[-3000:]
        assert code == 3, err
        assert "421 Service shutting down." in err, err
        assert f"resume with: rftp {direction} -c" in err, err
        log = d.log()
        verb = "store" if direction == "put" else "retrieve"
        assert re.search(rf"event=transfer direction={verb} \S+ streams={streams} .*result=aborted", log), log[-3000:]
        assert part.exists() and journal.exists() and not final.exists()
        # The stop can land while the last blocks are in flight: rftpd checkpoints
        # what arrived before it exits, which may be the whole file, still not
        # committed. Then -c moves nothing and commits.
        kept = journal_prefix(journal)
        assert 0 < kept <= SIZE

        d2 = Rftpd(work)  # the restart: same roots, a new process
        r = rftp(env, "--json", *args(d2)[:1], "-c", "-P", str(streams), *args(d2)[1:])
        assert r.returncode == 0, r.stderr.decode()
        # Only what the journal did not vouch for moved again.
        assert summary(r)["bytes"] <= SIZE - kept, summary(r)
        assert final.read_bytes() == src.read_bytes()
        assert not part.exists() and not journal.exists()
    finally:
        for daemon in (d, d2):
            if daemon and daemon.alive():
                daemon.stop()


def test_a_device_upload_cut_by_a_restart_gets_no_resume_command(tmp_path, env):
    """rftp put --size N /dev/zero (or /dev/urandom, which would not give the
    same bytes again) is not resumed: rftp says what happened and no more."""
    d = Rftpd(tmp_path / "d")
    journal = d.roots["alice"] / ".zeros.bin.rftp-resume"
    try:
        proc = subprocess.Popen([RFTP, "put", "-P", "4", "--size", str(2048 * MiB), "/dev/zero",
                                 url(d, "zeros.bin")], env=env, text=True, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        cut = stop_mid_transfer(d, proc, journal, 2048 * MiB)
        assert cut, "rftpd was never stopped mid-transfer"
        code, err = cut
        assert code == 3 and "421 Service shutting down." in err, err
        assert "resume with" not in err, err
    finally:
        if d.alive():
            d.stop()
