"""Every block on parallel TCP streams carries a CRC32C that the receiver
checks before writing. The test-only fault switch (RFTP_TEST_FLIP_BLOCKS=N in
the sending process) flips a bit in N blocks after their checksum was taken:
each is caught, nothing damaged reaches the file, and the receiver asks for
the block again on the connection it came by, so the file arrives whole in
the same transfer (docs/protocol.md, "A damaged block"). A block damaged
four times fails the transfer. With --no-block-checksums (OPTS BLOCKSUM NONE)
nothing checks blocks, which the same switch shows: only --verify's SHA-256
then catches the damage."""

import collections
import json
import re
import signal
import subprocess

import pytest

from conftest import Rftpd, on_tmpfs
from test_client_rftpd import RFTP, MiB, env, random_file, rftp, sha256, url  # noqa: F401 (env is a fixture)

FLIP = "RFTP_TEST_FLIP_BLOCKS"
MISMATCH = re.compile(r"event=block_checksum_mismatch transport=tcp stream=\S+ offset=(\d+) .* attempt=(\d+)")


def summary(result) -> dict:
    return json.loads(result.stdout.decode().splitlines()[-1])


def resent_note(result) -> str:
    return " ".join(n for n in summary(result).get("notes", []) if "sent again" in n)


def mismatches(text: str) -> list:
    """(offset, attempt) of every damaged block the receiver logged."""
    return [(int(m[1]), int(m[2])) for m in MISMATCH.finditer(text)]


def transfer_lines(log: str) -> list:
    return [line for line in log.splitlines() if "event=transfer" in line]


def test_a_damaged_upload_block_is_sent_again_in_the_same_transfer(rftpd, env, tmp_path):
    src = random_file(tmp_path / "up.bin", 8 * MiB + 4097)
    r = rftp(dict(env, **{FLIP: "2"}), "--json", "--no-progress", "put", "-P", "2", "--block-size", "1M", str(src),
             url(rftpd, "up.bin"))
    assert r.returncode == 0, r.stderr
    assert resent_note(r).startswith("2 blocks failed the CRC32C check"), summary(r)
    # The daemon caught both, asked for each once, and the one transfer it logged went through.
    assert sorted(a for _, a in mismatches(rftpd.log())) == [1, 1], rftpd.log()[-3000:]
    [line] = transfer_lines(rftpd.log())
    assert "result=ok" in line and "blocks_resent=2" in line, line
    assert sha256(rftpd.roots["alice"] / "up.bin") == sha256(src)


@pytest.mark.parametrize("streams", [1, 2])
def test_a_damaged_download_block_is_sent_again_in_the_same_transfer(tmp_path, place, env, streams):
    """Also on one stream, rftp's default: a download from rftpd is framed.
    From tmpfs rftpd sends blocks from the page cache, where the switch
    damages the block's trailer instead of its bytes."""
    d = Rftpd(place / "flipping", env_extra={FLIP: "1"})
    try:
        served = random_file(d.roots["alice"] / "down.bin", 8 * MiB + 1)
        local = tmp_path / "down.bin"
        r = rftp(env, "--json", "--no-progress", "get", "-P", str(streams), "--block-size", "1M", url(d, "down.bin"),
                 str(local))
        assert r.returncode == 0, r.stderr
        assert resent_note(r).startswith("1 block failed the CRC32C check"), summary(r)
        assert summary(r)["streams"] == streams
        assert [a for _, a in mismatches(r.stderr.decode())] == [1], r.stderr  # rftp, the receiver, says so
        [line] = transfer_lines(d.log())  # one RETR: no resume, no second transfer
        assert "result=ok" in line and "blocks_resent=1" in line, line
        # The file and the one block sent again (the switch damages a first block: 1 MiB).
        assert (f" sendfile_bytes={9 * MiB + 1}" in line) == on_tmpfs(place), line
        assert sha256(local) == sha256(served)
    finally:
        alive = d.alive()
        assert d.stop() == 0 and alive, d.log()[-3000:]


def test_a_block_damaged_now_and_then_does_not_end_a_long_transfer(rftpd, env, tmp_path):
    """The bound is per block, as over RDMA: five damaged blocks spread
    through the file, each caught and sent again, in one transfer. (A block
    sent again may be the next one the switch damages: the sender runs a few
    blocks ahead of the receiver's checks.)"""
    src = random_file(tmp_path / "long.bin", 40 * MiB)
    r = rftp(dict(env, **{FLIP: "5/8"}), "--json", "--no-progress", "put", "-P", "1", "--block-size", "1M", str(src),
             url(rftpd, "long.bin"))
    assert r.returncode == 0, r.stderr
    caught = mismatches(rftpd.log())
    assert len(caught) == 5 and max(a for _, a in caught) < 4, caught  # five flips, each caught
    assert resent_note(r).startswith("5 blocks"), summary(r)
    assert len(transfer_lines(rftpd.log())) == 1
    assert sha256(rftpd.roots["alice"] / "long.bin") == sha256(src)


def test_a_path_that_keeps_damaging_blocks_fails_cleanly(rftpd, env, tmp_path):
    src = random_file(tmp_path / "bad.bin", 4 * MiB)
    r = rftp(dict(env, **{FLIP: "1000"}), "--json", "--no-progress", "put", "-P", "2", "--block-size", "1M", str(src),
             url(rftpd, "bad.bin"))
    assert r.returncode == 8, r.stderr  # a transfer failure (docs/cli.md, exit codes)
    assert "failed its CRC32C check 4 times; giving up" in r.stderr.decode(), r.stderr
    # Bounded per block, as over RDMA: asked for again three times, the
    # fourth failure of one block ends the file, and no block goes further.
    attempts = collections.defaultdict(int)
    for offset, attempt in mismatches(rftpd.log()):
        attempts[offset] = max(attempts[offset], attempt)
    assert max(attempts.values()) == 4, attempts
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
    assert resent_note(r) == "" and mismatches(rftpd.log()) == []
    assert "blocksum=none" in rftpd.log()
    # rftpd held the damaged file aside until the digests were compared
    # (HOLD), and rftp removed it there: it never went under its final name.
    assert b"rftp removed /.flip.bin.rftp-part from the server" in r.stderr, r.stderr
    assert not (rftpd.roots["alice"] / "flip.bin").exists()
    assert not (rftpd.roots["alice"] / ".flip.bin.rftp-part").exists()


TAKEN = b"was taken during the transfer"
READ_AGAIN = b"for its SHA-256"


@pytest.mark.parametrize("streams", [1, 4])
def test_verify_takes_both_digests_during_the_transfer(rftpd, env, tmp_path, streams):
    """--verify over framed TCP needs no second pass over the file on
    either side: rftp takes its SHA-256 from the blocks it sends or
    receives, rftpd from the same blocks (OPTS HASH SHA-256), and HASH
    answers from that (event=hash from=transfer)."""
    src = random_file(tmp_path / "d.bin", 9 * MiB + 4097)
    r = rftp(env, "-vv", "--no-progress", "put", "--verify", "-P", str(streams), "--block-size", "1M", str(src),
             url(rftpd, "d.bin"))
    assert r.returncode == 0, r.stderr
    assert TAKEN in r.stderr and READ_AGAIN not in r.stderr, r.stderr[-2000:]
    assert rftpd.log().count("event=hash") == rftpd.log().count("from=transfer") == 1, rftpd.log()[-3000:]
    local = tmp_path / "back.bin"
    r = rftp(env, "-vv", "--no-progress", "get", "--verify", "-P", str(streams), "--block-size", "1M",
             url(rftpd, "d.bin"), str(local))
    assert r.returncode == 0, r.stderr
    assert TAKEN in r.stderr and READ_AGAIN not in r.stderr, r.stderr[-2000:]
    assert rftpd.log().count("event=hash") == rftpd.log().count("from=transfer") == 2, rftpd.log()[-3000:]
    assert sha256(local) == sha256(src)


def test_a_block_sent_again_counts_once_in_the_digest_taken_on_the_way(rftpd, env, tmp_path):
    """Damaged on the wire (after its CRC32C) and sent again: both digests
    are of the file's bytes, each block once, so --verify agrees."""
    src = random_file(tmp_path / "again.bin", 8 * MiB + 1)
    r = rftp(dict(env, **{FLIP: "3"}), "-vv", "--json", "--no-progress", "put", "--verify", "-P", "2",
             "--block-size", "1M", str(src), url(rftpd, "again.bin"))
    assert r.returncode == 0, r.stderr
    assert resent_note(r).startswith("3 blocks failed the CRC32C check"), summary(r)
    assert TAKEN in r.stderr and "from=transfer" in rftpd.log(), rftpd.log()[-3000:]
    assert sha256(rftpd.roots["alice"] / "again.bin") == sha256(src)


def test_a_resumed_transfer_reads_the_file_for_its_digest(rftpd, env, tmp_path):
    """From a restart offset neither side saw the whole file go by."""
    src = random_file(tmp_path / "half.bin", 6 * MiB)
    (rftpd.roots["alice"] / "half.bin").write_bytes(src.read_bytes()[:2 * MiB])
    r = rftp(env, "-vv", "--no-progress", "put", "-c", "--verify", "-P", "2", "--block-size", "1M", str(src),
             url(rftpd, "half.bin"))
    assert r.returncode == 0, r.stderr
    assert READ_AGAIN in r.stderr and TAKEN not in r.stderr, r.stderr[-2000:]
    assert "from=file" in rftpd.log() and "from=transfer" not in rftpd.log(), rftpd.log()[-3000:]
    assert sha256(rftpd.roots["alice"] / "half.bin") == sha256(src)


def test_ctrl_c_stops_the_local_read_for_verify(rftpd, env, tmp_path):
    """A file -c found complete is read again for --verify: minutes for a
    terabyte. Ctrl-C stops that read (exit 130) instead of waiting for it.
    2 GiB of holes on both sides: over a second of SHA-256 each here."""
    size = 2 << 30
    for path in (rftpd.roots["alice"] / "big.bin", tmp_path / "big.bin"):
        with open(path, "wb") as f:
            f.truncate(size)
    proc = subprocess.Popen([RFTP, "-vv", "--no-progress", "get", "-c", "--verify", url(rftpd, "big.bin"),
                             str(tmp_path / "big.bin")], env=env, stderr=subprocess.PIPE, start_new_session=True)
    seen = b""
    while READ_AGAIN not in seen:  # the server's HASH came, rftp reads its own file now
        line = proc.stderr.readline()
        assert line, seen[-2000:]
        seen += line
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGINT, seen + err  # died of it, as shells expect
    assert b"--verify: interrupted while reading" in err, seen + err
    assert (tmp_path / "big.bin").stat().st_size == size  # left as it was
