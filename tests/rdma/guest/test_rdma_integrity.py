"""Every RDMA block carries a CRC32C that the sink checks before writing.
The engine's test-only fault switch (RFTP_TEST_FLIP_BLOCKS=N in the sending
process) flips a bit in N blocks after their checksum was taken: each one
must be caught and sent again, and a block that never arrives whole must
fail the transfer with nothing under the final name, on both devices. With
--no-block-checksums (OPTS BLOCKSUM NONE) no block is checked, which the same
switch shows: only --verify's SHA-256 then catches the damage."""

import os
import re
import subprocess
import time

from conftest import PASSWORD, TESTING, Daemon, bound, rftp, url, wait_for
from test_rdma_transfers import BLOCK, digest, write_pattern

FLIP = "RFTP_TEST_FLIP_BLOCKS"


def mismatches(log: str) -> int:
    return len(re.findall(r"event=block_checksum_mismatch ", log))


def test_damaged_upload_blocks_are_caught_and_sent_again(daemon, device, tmp_path):
    name, addr = device
    src = tmp_path / "up.bin"
    write_pattern(src, 5 * BLOCK + 4097, 11)
    before = mismatches(daemon.log())
    _, up = rftp("put", "-P", "2", str(src), url(addr, f"flipped-up-{name}.bin"), env_extra={FLIP: "3"})
    assert up["transport"] == "rdma" and up["bytes"] == src.stat().st_size
    assert mismatches(daemon.log()) == before + 3  # every damaged block seen by the daemon's writer
    assert digest(daemon.root / f"flipped-up-{name}.bin") == digest(src)
    (daemon.root / f"flipped-up-{name}.bin").unlink()


def test_damaged_download_blocks_are_caught_and_sent_again(tmp_path_factory, device, tmp_path):
    name, addr = device
    # Two completion workers, chosen explicitly: the one-CPU guest would
    # otherwise run every handler on the dispatcher, and the worker path
    # (the default on real hosts) must be driven by real RDMA too.
    d = Daemon(tmp_path_factory.mktemp(f"flip-{name}"), [addr], port=2124, env_extra={FLIP: "2"},
               extra_config="rdma: {workers: 2}\n")
    try:
        served = d.root / "down.bin"
        write_pattern(served, 3 * BLOCK + 1, 12)
        local = tmp_path / "down.bin"
        p, down = rftp("-v", "get", str(url(addr, "down.bin", port=2124)), str(local))
        assert down["transport"] == "rdma"
        assert len(re.findall(r"block_checksum_mismatch", p.stderr)) == 2, p.stderr[-2000:]
        assert digest(local) == digest(served)
        assert d.count(r"event=rdma_channel_up .* workers=2\b") >= 1, d.log()[-2000:]
    finally:
        alive = d.alive()
        assert d.stop() == 0 and alive, d.log()[-3000:]


def test_a_block_that_never_arrives_whole_fails_the_file(daemon, device, tmp_path):
    name, addr = device
    src = tmp_path / "bad.bin"
    write_pattern(src, BLOCK + 1, 13)
    final = daemon.root / f"never-whole-{name}.bin"
    p, summary = rftp("put", str(src), url(addr, final.name), check=False, env_extra={FLIP: "1000"})
    assert p.returncode == 8, p.stderr  # a transfer failure (docs/cli.md, exit codes)
    assert "CRC32C" in p.stderr + p.stdout, p.stderr
    assert not final.exists()
    # The daemon goes on serving: the same upload, undamaged, lands whole.
    rftp("put", str(src), url(addr, final.name))
    assert digest(final) == digest(src)
    final.unlink()


def test_verify_takes_both_digests_while_the_blocks_pass(daemon, device, tmp_path):
    """--verify over RDMA: rftp says OPTS HASH SHA-256, so both sides take the
    file's SHA-256 from the blocks as they pass (out of order, four queue
    pairs) and HASH answers from it: no second read of the file on either
    side. Had either digest been wrong, the comparison would fail."""
    name, addr = device
    src = tmp_path / "verified.bin"
    write_pattern(src, 9 * BLOCK + 4097, 21)
    remote = f"verified-{name}.bin"
    before = daemon.count(r"event=hash .* from=transfer")
    p, up = rftp("-vv", "put", "--verify", "-P", "4", str(src), url(addr, remote))
    assert up["transport"] == "rdma"
    assert "was taken during the transfer" in p.stderr, p.stderr[-2000:]
    assert daemon.count(r"event=hash .* from=transfer") == before + 1, daemon.log()[-2000:]
    assert digest(daemon.root / remote) == digest(src)

    back = tmp_path / "verified-back.bin"
    p, down = rftp("-vv", "get", "--verify", "-P", "4", url(addr, remote), str(back))
    assert down["transport"] == "rdma"
    assert "was taken during the transfer" in p.stderr, p.stderr[-2000:]
    assert daemon.count(r"event=hash .* from=transfer") == before + 2
    assert digest(back) == digest(src)
    (daemon.root / remote).unlink()


def test_verify_after_a_resume_reads_the_file(daemon, device, tmp_path):
    """A resumed transfer moves only the tail, so its digest cannot come from
    the blocks: both sides read the whole file instead, and say so."""
    name, addr = device
    src = tmp_path / "resumed.bin"
    write_pattern(src, 2 * BLOCK + 5, 22)
    remote = daemon.root / f"resumed-{name}.bin"
    remote.write_bytes(src.read_bytes()[:BLOCK])  # a first part already there
    p, up = rftp("-vv", "put", "-c", "--verify", str(src), url(addr, remote.name))
    assert up["transport"] == "rdma" and up["bytes"] == BLOCK + 5
    assert f"reading {src} for its SHA-256" in p.stderr, p.stderr[-2000:]
    assert digest(remote) == digest(src)
    remote.unlink()


def test_without_block_checksums_blocks_move_unchecked(daemon, device, tmp_path):
    name, addr = device
    src = tmp_path / "unchecked.bin"
    write_pattern(src, 3 * BLOCK + 4097, 23)
    remote = daemon.root / f"unchecked-{name}.bin"
    before = daemon.count(r"transport=rdma .*blocksum=none")
    _, up = rftp("put", "--no-block-checksums", "-P", "2", str(src), url(addr, remote.name))
    back = tmp_path / "unchecked-back.bin"
    _, down = rftp("get", "--no-block-checksums", "-P", "2", url(addr, remote.name), str(back))
    assert up["transport"] == down["transport"] == "rdma", (up.get("notes"), down.get("notes"), daemon.log()[-3000:])
    assert digest(remote) == digest(back) == digest(src)
    assert daemon.count(r"transport=rdma .*blocksum=none") == before + 2, daemon.log()[-2000:]

    # Damage that the CRC32C would have caught now reaches the file; the
    # in-transfer SHA-256 of --verify still tells. rftpd held the upload
    # aside (HOLD) until the digests were compared, so the damaged file never
    # replaced the one already there, and rftp removed it where it was held.
    mismatched = mismatches(daemon.log())
    p, _ = rftp("put", "--no-block-checksums", "--verify", str(src), url(addr, remote.name), check=False,
                env_extra={FLIP: "1"})
    assert p.returncode == 7, p.stderr
    assert mismatches(daemon.log()) == mismatched
    assert f"never in place of /{remote.name}" in p.stderr, p.stderr
    assert digest(remote) == digest(src)  # the earlier upload, whole
    assert not (daemon.root / f".{remote.name}.rftp-part").exists(), p.stderr


def test_a_file_changed_during_a_download_is_hashed_again(daemon, device, tmp_path):
    """HASH answers from the digest taken during an RRTR only while the file
    is as it was from the transfer's start to its end. One touched while it
    was being sent is read again (event=hash from=file); its bytes did not
    change here, so --verify still agrees."""
    name, addr = device
    served = daemon.root / f"touched-{name}.bin"
    write_pattern(served, 64 * BLOCK // 4, 24)  # 64 MiB
    local = tmp_path / "touched.bin"
    from_file = daemon.count(r"event=hash .* from=file")
    rrtrs = daemon.count(r"command=RRTR")
    # Small blocks, one in flight: the transfer lasts long enough to touch the file during it.
    p = subprocess.Popen([str(TESTING / "rftp"), "--json", "--no-progress", "get", "--verify", "-P", "1",
                          "--block-size", "64K", "--iodepth", "1", url(addr, served.name), str(local)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ, RFTP_PASSWORD=PASSWORD))
    wait_for(lambda: daemon.count(r"command=RRTR") > rrtrs, 60, "the RRTR")
    time.sleep(0.05)
    os.utime(served)  # a new modification time, while the blocks are on their way
    out, err = p.communicate(timeout=bound(300))
    assert p.returncode == 0, err
    assert '"result":"ok"' in out.splitlines()[-1], out[-500:]
    assert daemon.count(r"event=hash .* from=file") == from_file + 1, daemon.log()[-2000:]
    assert digest(local) == digest(served)
    served.unlink()
