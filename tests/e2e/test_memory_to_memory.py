"""Memory-to-memory mode over parallel TCP streams: /dev/zero as the source
and /dev/null as the sink skip the disk, as over RDMA, so `get -P4 URL
/dev/null` measures the server's disk and the network alone and `put -P4
--size S /dev/zero URL` the server's writes. Both still use every stream,
and every block is still checked."""

from test_client_rftpd import MiB, env, random_file, rftp, summary, url  # noqa: F401 (env is a fixture)
from test_tcp_integrity import FLIP, notes, resumed

from conftest import Rftpd


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
        # A damaged block is a transfer failure (exit 8), not a local one;
        # /dev/null has no partial file to resume.
        assert r.returncode == 8, r.stderr
        assert "failed its CRC32C check" in r.stderr.decode()
    finally:
        alive = d.alive()
        assert d.stop() == 0 and alive, d.log()[-3000:]


def test_a_damaged_zero_block_is_caught_and_resent(rftpd, env):
    """Under the fault switch /dev/zero is read block by block (a shared zero
    buffer would carry one flip into every later block)."""
    r = rftp(dict(env, **{FLIP: "1"}), "--json", "--no-progress", "put", "-P", "2", "--block-size", "1M", "--size",
             str(8 * MiB), "/dev/zero", url(rftpd, "z.bin"))
    assert r.returncode == 0, r.stderr
    assert resumed(r) == 1, notes(r)
    stored = (rftpd.roots["alice"] / "z.bin").read_bytes()
    assert len(stored) == 8 * MiB and stored.count(0) == len(stored)
