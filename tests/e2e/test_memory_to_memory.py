"""Memory-to-memory mode over parallel TCP streams: /dev/zero as the source
and /dev/null as the sink skip the disk, as over RDMA, so `get -P4 URL
/dev/null` measures the server's disk and the network alone and `put -P4
--size S /dev/zero URL` the server's writes. Both still use every stream,
and every block is still checked. rftpd drops an upload to /dev/null, so
/dev/zero to /dev/null touches no disk at all."""

import ftplib

import pytest
from test_client_rftpd import MiB, env, random_file, rftp, summary, url  # noqa: F401 (env is a fixture)
from test_tcp_integrity import FLIP, mismatches, resent_note

from conftest import PASSWORDS, Rftpd


def test_download_into_dev_null_uses_every_stream(rftpd, env):
    random_file(rftpd.roots["alice"] / "src.bin", 24 * MiB + 5)
    r = rftp(env, "--json", "--no-progress", "get", "-P", "4", "--block-size", "1M", url(rftpd, "src.bin"), "/dev/null")
    assert r.returncode == 0, r.stderr
    s = summary(r)
    assert (s["streams"], s["bytes"]) == (4, 24 * MiB + 5), s
    assert "streams=4" in rftpd.log()


def test_upload_from_dev_zero_uses_every_stream_and_stores_zeros(rftpd, env):
    r = rftp(env, "--json", "--no-progress", "put", "-P", "4", "--block-size", "1M", "--size", str(20 * MiB + 3),
             "/dev/zero", url(rftpd, "z.bin"))
    assert r.returncode == 0, r.stderr
    assert summary(r)["streams"] == 4
    stored = (rftpd.roots["alice"] / "z.bin").read_bytes()
    assert len(stored) == 20 * MiB + 3 and stored.count(0) == len(stored)


def test_blocks_for_dev_null_are_still_checked(tmp_path, env):
    d = Rftpd(tmp_path / "flipping", env_extra={FLIP: "1000"})
    try:
        random_file(d.roots["alice"] / "src.bin", 8 * MiB)
        r = rftp(env, "--no-progress", "get", "-P", "2", "--block-size", "1M", url(d, "src.bin"), "/dev/null")
        # A block damaged every time is a transfer failure (exit 8), not a local one.
        assert r.returncode == 8, r.stderr
        assert "failed its CRC32C check 4 times" in r.stderr.decode()
    finally:
        alive = d.alive()
        assert d.stop() == 0 and alive, d.log()[-3000:]


def test_a_damaged_zero_block_is_caught_and_resent(rftpd, env):
    """Under the fault switch /dev/zero is read block by block (a shared zero
    buffer would carry one flip into every later block)."""
    r = rftp(dict(env, **{FLIP: "1"}), "--json", "--no-progress", "put", "-P", "2", "--block-size", "1M", "--size",
             str(8 * MiB), "/dev/zero", url(rftpd, "z.bin"))
    assert r.returncode == 0, r.stderr
    assert resent_note(r).startswith("1 block failed"), summary(r)
    stored = (rftpd.roots["alice"] / "z.bin").read_bytes()
    assert len(stored) == 8 * MiB and stored.count(0) == len(stored)


@pytest.mark.parametrize("streams", [1, 4])
def test_upload_to_dev_null_is_received_and_dropped(rftpd, env, streams):
    """STOR /dev/null discards, as RSTR /dev/null does over RDMA: with
    /dev/zero as the source nothing touches a disk on either side."""
    size = 20 * MiB + 3
    r = rftp(env, "--json", "--no-progress", "put", "-P", str(streams), "--block-size", "1M", "--size", str(size),
             "/dev/zero", url(rftpd, "dev/null"))
    assert r.returncode == 0, r.stderr
    s = summary(r)
    assert (s["streams"], s["bytes"]) == (streams, size), s
    line = next(l for l in rftpd.log().splitlines() if "event=transfer direction=store" in l)
    assert 'path="/dev/null"' in line or "path=/dev/null " in line, line
    assert f"streams={streams} " in line and f"bytes={size}" in line, line
    assert list(rftpd.roots["alice"].iterdir()) == []  # nothing stored, not even a partial file


def test_a_damaged_block_for_dev_null_is_caught_and_sent_again(rftpd, env):
    r = rftp(dict(env, **{FLIP: "1"}), "--json", "--no-progress", "put", "-P", "1", "--block-size", "1M", "--size",
             str(6 * MiB), "/dev/zero", url(rftpd, "dev/null"))
    assert r.returncode == 0, r.stderr
    assert resent_note(r).startswith("1 block failed"), summary(r)
    assert [a for _, a in mismatches(rftpd.log())] == [1]


def test_plain_clients_can_upload_to_dev_null_but_not_resume_it(rftpd, tmp_path):
    src = random_file(tmp_path / "src.bin", 3 * MiB)
    ftp = ftplib.FTP()
    ftp.connect("127.0.0.1", rftpd.port)
    ftp.login("alice", PASSWORDS["alice"])
    with open(src, "rb") as f:
        assert ftp.storbinary("STOR /dev/null", f).startswith("226")
    ftp.sendcmd("REST 5")
    with pytest.raises(ftplib.error_perm, match="^554"):
        ftp.voidcmd("STOR /dev/null")
    ftp.quit()
    assert list(rftpd.roots["alice"].iterdir()) == []
