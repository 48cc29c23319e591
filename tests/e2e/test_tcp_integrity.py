"""Every block on parallel TCP streams carries a CRC32C that the receiver
checks before writing. The test-only fault switch (RFTP_TEST_FLIP_BLOCKS=N in
the sending process) flips a bit in N blocks after their checksum was taken:
each is caught, nothing damaged reaches the file, and rftp resumes from the
last good byte (a few times at most), so the file arrives whole. With
--no-block-checksums (OPTS BLOCKSUM NONE) nothing checks blocks, which the
same switch shows: only --verify's SHA-256 then catches the damage."""

import collections
import json
import re

import pytest

from conftest import Rftpd
from test_client_rftpd import MiB, env, random_file, rftp, sha256, url  # noqa: F401 (env is a fixture)

FLIP = "RFTP_TEST_FLIP_BLOCKS"


def notes(result) -> list:
    return json.loads(result.stdout.decode().splitlines()[-1]).get("notes", [])


def resumed(result) -> int:
    return sum("resuming from the last good byte" in n for n in notes(result))


def test_damaged_upload_blocks_are_caught_and_resumed(rftpd, env, tmp_path):
    src = random_file(tmp_path / "up.bin", 8 * MiB + 4097)
    # One damaged block (two could be damaged at once on two streams, and be one resume).
    r = rftp(dict(env, **{FLIP: "1"}), "--json", "--no-progress", "put", "-P", "2", "--block-size", "1M", str(src),
             url(rftpd, "up.bin"))
    assert r.returncode == 0, r.stderr
    assert resumed(r) == 1, notes(r)
    assert rftpd.log().count("failed its CRC32C check") == 1  # the daemon's reason for refusing the upload
    assert sha256(rftpd.roots["alice"] / "up.bin") == sha256(src)


@pytest.mark.parametrize("streams", [1, 2])
def test_damaged_download_blocks_are_caught_and_resumed(tmp_path, env, streams):
    """Also on one stream, rftp's default: a download from rftpd is framed."""
    d = Rftpd(tmp_path / "flipping", env_extra={FLIP: "1"})
    try:
        served = random_file(d.roots["alice"] / "down.bin", 8 * MiB + 1)
        local = tmp_path / "down.bin"
        # An older file of the same size under the name: the retry continues
        # this run's own partial file and never takes that one for complete.
        local.write_bytes(b"\0" * served.stat().st_size)
        r = rftp(env, "--json", "--no-progress", "get", "-P", str(streams), "--block-size", "1M", url(d, "down.bin"),
                 str(local))
        assert r.returncode == 0, r.stderr
        assert resumed(r) == 1, notes(r)
        assert json.loads(r.stdout.decode().splitlines()[-1])["streams"] == streams
        assert sha256(local) == sha256(served)
    finally:
        alive = d.alive()
        assert d.stop() == 0 and alive, d.log()[-3000:]


def test_a_block_damaged_now_and_then_does_not_end_a_long_transfer(rftpd, env, tmp_path):
    """The bound is per block, as over RDMA: five damaged blocks, each
    further into the file than the last, and the file arrives whole after
    more resumes than any one block may take. (One of the five may be a
    block still on the wire when the transfer stopped, never checked.)"""
    src = random_file(tmp_path / "long.bin", 40 * MiB)
    r = rftp(dict(env, **{FLIP: "5/8"}), "--json", "--no-progress", "put", "-P", "1", "--block-size", "1M", str(src),
             url(rftpd, "long.bin"))
    assert r.returncode == 0, r.stderr
    assert 4 <= resumed(r) <= 5, notes(r)
    assert sha256(rftpd.roots["alice"] / "long.bin") == sha256(src)


def test_a_path_that_keeps_damaging_blocks_fails_cleanly(rftpd, env, tmp_path):
    src = random_file(tmp_path / "bad.bin", 4 * MiB)
    r = rftp(dict(env, **{FLIP: "1000"}), "--json", "--no-progress", "put", "-P", "2", "--block-size", "1M", str(src),
             url(rftpd, "bad.bin"))
    assert r.returncode == 8, r.stderr  # a transfer failure (docs/cli.md, exit codes)
    assert "failed its CRC32C check" in r.stderr.decode(), r.stderr
    # Bounded per block, as over RDMA: three resumes for a block, the fourth
    # failure of one ends the file. Which block fails first in an attempt
    # depends on which stream claimed what, so count resumes per block.
    per_block = collections.Counter(re.search(r"the block at byte (\d+)", n)[1]
                                    for n in notes(r) if "resuming from the last good byte" in n)
    assert max(per_block.values()) == 3, notes(r)
    assert resumed(r) == sum(per_block.values())
    assert not (rftpd.roots["alice"] / "bad.bin").exists()
    # The daemon goes on serving: the same upload, undamaged, lands whole.
    assert rftp(env, "put", "-P", "2", "--block-size", "1M", str(src), url(rftpd, "bad.bin")).returncode == 0
    assert sha256(rftpd.roots["alice"] / "bad.bin") == sha256(src)


def test_without_block_checksums_files_move_unchecked(rftpd, env, tmp_path):
    src = random_file(tmp_path / "plain.bin", 8 * MiB + 4097)
    up = rftp(env, "--no-progress", "put", "--no-block-checksums", "-P", "2", "--block-size", "1M", str(src),
              url(rftpd, "plain.bin"))
    assert up.returncode == 0, up.stderr
    local = tmp_path / "back.bin"
    down = rftp(env, "--no-progress", "get", "--no-block-checksums", "-P", "2", "--block-size", "1M",
                url(rftpd, "plain.bin"), str(local))
    assert down.returncode == 0, down.stderr
    assert sha256(local) == sha256(src)
    assert rftpd.log().count("blocksum=none") == 2


def test_without_block_checksums_only_verify_catches_damage(rftpd, env, tmp_path):
    src = random_file(tmp_path / "flip.bin", 8 * MiB)
    r = rftp(dict(env, **{FLIP: "1"}), "--json", "--no-progress", "put", "--no-block-checksums", "--verify", "-P", "2",
             "--block-size", "1M", str(src), url(rftpd, "flip.bin"))
    assert r.returncode == 7, r.stderr  # the digests differ
    assert resumed(r) == 0 and "failed its CRC32C check" not in rftpd.log()
    assert "blocksum=none" in rftpd.log()
