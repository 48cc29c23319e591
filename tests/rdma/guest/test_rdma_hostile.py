"""What a hostile or broken RDMA peer cannot do to rftpd, on each lab device:
connect with a wrong token, send a malformed control message or a grant
ahead that is not a whole block, flood the daemon with grants, replay a
block notice, or take more pinned memory than the daemon allows. Each ends
with the daemon serving others as before."""

import ftplib
import os
import re
import socket
import subprocess

import pytest

from conftest import BUILD, Daemon, bound, lab_devices, low_memlock, rftp, url, wait_for

PEER = BUILD / "rdma_peer"


def radr(ftp, streams=1, block=1 << 20, depth=4):
    reply = ftp.sendcmd(f"RADR {streams} {block} {depth}")
    fields = dict(w.split("=", 1) for w in reply.split() if "=" in w)
    assert reply.startswith("200"), reply
    return fields


def transfer_still_works(daemon, addr, tmp_path, name):
    src = tmp_path / f"{name}.bin"
    src.write_bytes(b"still serving\n" * 1000)
    _, s = rftp("put", str(src), url(addr, src.name))
    assert s["transport"] == "rdma"
    assert (daemon.root / src.name).read_bytes() == src.read_bytes()


def test_wrong_token_is_refused(daemon, device, tmp_path):
    name, addr = device
    ftp = daemon.ftp(addr)
    fields = radr(ftp)
    rejected_before = daemon.count(r"event=rdma_connection_rejected reason=\"wrong token")
    p = subprocess.run([str(PEER), "wrong-token", addr, fields["port"], fields["streams"]],
                       capture_output=True, text=True, timeout=bound(60))
    assert p.returncode == 0, p.stdout + p.stderr
    assert "refused" in p.stdout
    assert daemon.count(r"event=rdma_connection_rejected reason=\"wrong token") == rejected_before + 1
    # The rightful client gives up on the channel; the session goes on.
    assert ftp.sendcmd("ABOR").startswith("225")
    assert ftp.sendcmd("NOOP").startswith("200")
    ftp.quit()
    transfer_still_works(daemon, addr, tmp_path, f"after-wrong-token-{name}")


def test_malformed_control_message_aborts_only_that_channel(daemon, device, tmp_path):
    name, addr = device
    ftp = daemon.ftp(addr)
    fields = radr(ftp)
    p = subprocess.run([str(PEER), "malformed", addr, fields["port"], fields["streams"], fields["block"],
                        fields["depth"], fields["token"]], capture_output=True, text=True, timeout=bound(60))
    assert p.returncode == 0, p.stdout + p.stderr
    assert "malformed RDMA control message" in p.stdout
    # rftpd sends the peer its abort before it logs the channel's close.
    wait_for(lambda: re.search(r"event=rdma_channel_closed reason=\".*malformed RDMA control message: wrong magic",
                               daemon.log()), 20, "the channel's close to be logged")
    # That session's channel is gone, its resources are given back at once,
    # and the session itself still answers: RSTR asks for a new RADR.
    wait_for(lambda: daemon.rdma_totals(addr)["channels"] == 0, 20, "the failed channel's resources to be released")
    assert daemon.rdma_totals(addr) == {"channels": 0, "queue_pairs": 0, "pinned_bytes": 0}
    with pytest.raises(Exception) as refused:
        ftp.sendcmd("RSTR x.bin")
    assert re.match(r"(425|503) .*RADR", str(refused.value)), refused.value
    ftp.quit()
    transfer_still_works(daemon, addr, tmp_path, f"after-malformed-{name}")


def test_a_grant_ahead_of_half_a_block_aborts_only_that_channel(daemon, device, tmp_path):
    """Grants ahead lend whole blocks (docs/protocol.md, "Grants ahead"):
    one of half a block is out of line, well formed as it is."""
    name, addr = device
    ftp = daemon.ftp(addr)
    assert re.search(r" RDMA \d+ AHEAD", ftp.sendcmd("FEAT"))  # rftpd takes grants ahead, and says so
    fields = radr(ftp)
    p = subprocess.run([str(PEER), "half-block-ahead", addr, fields["port"], fields["streams"], fields["block"],
                        fields["depth"], fields["token"]], capture_output=True, text=True, timeout=bound(60))
    assert p.returncode == 0, p.stdout + p.stderr
    assert "not the next whole one" in p.stdout
    wait_for(lambda: daemon.rdma_totals(addr)["channels"] == 0, 20, "the failed channel's resources to be released")
    ftp.quit()
    transfer_still_works(daemon, addr, tmp_path, f"after-half-block-ahead-{name}")


def test_a_flood_of_grants_ends_only_that_channel(daemon, device, tmp_path):
    """An authenticated client that, as the sink of an RRTR, grants every
    block of the file and then every block again (each grant valid on its
    own) would have the daemon queue and remember grants without end. The
    daemon aborts that channel (more than a sink's pool outstanding, or more
    resent blocks than a file may have), fails the RRTR, frees the channel
    and goes on serving."""
    name, addr = device
    block = 64 << 10
    served = daemon.root / f"flood-{name}.bin"
    with open(served, "wb") as f:
        f.truncate(1100 * block)  # more blocks than a file may have resent
    ftp = daemon.ftp(addr)
    fields = radr(ftp, block=block)
    assert int(fields["block"]) == block
    peer = subprocess.Popen([str(PEER), "grant-flood", addr, fields["port"], fields["streams"], fields["block"],
                             fields["depth"], fields["token"]], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    try:
        assert "connected" in peer.stdout.readline()
        assert ftp.sendcmd(f"RRTR {served.name}").startswith("150")
        out, _ = peer.communicate(timeout=bound(120))
    finally:
        peer.kill()
    assert peer.returncode == 0, out
    assert re.search(r"aborted by the server after \d+ grants: .*(resent blocks|blocks not yet filled)", out), out
    with pytest.raises(Exception) as failed:
        ftp.getresp()
    assert re.match(r"4\d\d ", str(failed.value)), failed.value
    wait_for(lambda: re.search(r"event=rdma_channel_closed reason=\".*(resent blocks|blocks not yet filled)",
                               daemon.log()), 20, "the channel's close to be logged")
    wait_for(lambda: daemon.rdma_totals(addr)["channels"] == 0, 20, "the flooded channel's resources to be released")
    ftp.quit()
    transfer_still_works(daemon, addr, tmp_path, f"after-flood-{name}")


def test_pinned_memory_cap_sends_clients_to_tcp(tmp_path):
    """With room for one channel only, a second session's RADR is refused
    with 450 and its client falls back to TCP, saying so in one line."""
    devices = lab_devices()
    d = Daemon(tmp_path / "capped", [a for _, a in devices], port=2122,
               # One channel pins its two 4 MiB blocks (each with a trailer
               # page) in whole 2 MiB pages, 10 MiB, and its message area;
               # blocks of at most 4 MiB keep every channel within 12 MiB,
               # which rftpd requires of its config.
               extra_config="rdma: {pool_size: 8M, max_pinned: 12M, max_block_size: 4M}\n")
    try:
        addr = devices[0][1]
        holder = d.ftp(addr)
        radr(holder)  # holds its reservation while it waits for queue pairs
        assert d.rdma_totals(addr)["channels"] == 1
        src = tmp_path / "capped.bin"
        src.write_bytes(b"x" * 100000)
        p, s = rftp("put", str(src), url(addr, src.name, port=2122))
        assert s["transport"] == "tcp"
        assert "server refused RDMA (450 RDMA memory limit reached" in p.stderr
        assert p.stderr.count("using TCP") == 1
        assert (d.root / src.name).read_bytes() == src.read_bytes()
        p, s = rftp("put", "--transport", "rdma", str(src), url(addr, "again.bin", port=2122), check=False)
        assert p.returncode == 3, p.stderr
        holder.sendcmd("ABOR")
        holder.quit()
        wait_for(lambda: d.rdma_totals(addr)["channels"] == 0, 20, "the reservation to be given back")
    finally:
        alive = d.alive()
        assert d.stop() == 0 and alive, d.log()[-3000:]


def test_transport_tcp_is_honoured(daemon, device, tmp_path):
    name, addr = device
    src = tmp_path / "tcp.bin"
    src.write_bytes(b"tcp" * 10000)
    _, s = rftp("put", "--transport", "tcp", str(src), url(addr, f"tcp-{name}.bin"))
    assert s["transport"] == "tcp"
    assert (daemon.root / f"tcp-{name}.bin").read_bytes() == src.read_bytes()


def test_low_memlock_limit_is_explained(tmp_path, daemon):
    """A locked-memory limit too low for a block pool: the daemon says at
    start what to change and does not offer RDMA; a client under such a
    limit says the same and uses TCP. Nothing fails."""
    devices = lab_devices()
    addr = devices[0][1]
    d = Daemon(tmp_path / "lowmem", [addr], port=2124, preexec_fn=low_memlock)
    try:
        log = d.log()
        assert "event=rdma state=off" in log and "ulimit -l unlimited" in log and "LimitMEMLOCK=infinity" in log, log
        f = d.ftp(addr)
        assert "RDMA" not in f.sendcmd("FEAT")
        with pytest.raises(Exception) as refused:
            f.sendcmd("RADR 1 1048576 4")
        assert str(refused.value).startswith("502"), refused.value
        f.quit()
        src = tmp_path / "lowmem.bin"
        src.write_bytes(b"m" * 50000)
        p, s = rftp("put", str(src), url(addr, src.name, port=2124))
        assert s["transport"] == "tcp" and "server does not offer RDMA; using TCP" in p.stderr
    finally:
        alive = d.alive()
        assert d.stop() == 0 and alive, d.log()[-3000:]
    # The client's own limit, against the module's daemon that does offer RDMA.
    src = tmp_path / "lowmem-client.bin"
    src.write_bytes(b"c" * 50000)
    p, s = rftp("put", str(src), url(addr, src.name), preexec_fn=low_memlock)
    assert s["transport"] == "tcp", p.stderr
    assert "locked-memory limit" in p.stderr and "ulimit -l unlimited" in p.stderr, p.stderr
    assert (daemon.root / src.name).read_bytes() == src.read_bytes()


def _a_held_port_with_a_free_one_after_it(addr):
    """A listening socket on a port the kernel chose, whose next port is free
    too (no socket, none in TIME_WAIT from an earlier test's connection):
    the test's range is those two, and the next must be rftpd's to take."""
    for _ in range(50):
        holder = socket.socket()
        holder.bind((addr, 0))
        holder.listen()
        taken = holder.getsockname()[1]
        with socket.socket() as probe:
            try:
                probe.bind((addr, taken + 1))
                return holder, taken
            except OSError:
                holder.close()
    raise AssertionError("no two free ports in a row")


def test_a_taken_port_in_the_rdma_range_is_skipped(tmp_path_factory, device, tmp_path):
    """iWARP listens on a real TCP port, which the RDMA CM's port allocation
    does not know about: a port some TCP socket holds is skipped at
    rdma_listen (seen as a flaky 'rdma_listen: Address already in use'
    when the CM picked a port in use). On RoCE the same range just works."""
    name, addr = device
    holder, taken = _a_held_port_with_a_free_one_after_it(addr)
    d = Daemon(tmp_path_factory.mktemp(f"ports-{name}"), [addr], port=2128,
               extra_config=f"rdma: {{ports: {{min: {taken}, max: {taken + 1}}}}}\n")
    try:
        ftp = d.ftp(addr)
        got = int(radr(ftp)["port"])
        ftp.quit()
        assert got in (taken, taken + 1)
        if name.startswith("siw"):
            assert got == taken + 1
        # The quit session's channel gives its port back as it closes, not
        # by the time QUIT is answered: until then the range has none free.
        wait_for(lambda: d.rdma_totals(addr)["channels"] == 0, 20, "the first session's channel to be released")
        src = tmp_path / "ported.bin"
        src.write_bytes(b"through the next port\n" * 1000)
        _, s = rftp("put", str(src), url(addr, src.name, port=2128))
        assert s["transport"] == "rdma"
        assert (d.root / src.name).read_bytes() == src.read_bytes()
    finally:
        holder.close()
        alive = d.alive()
        assert d.stop() == 0 and alive, d.log()[-3000:]


def test_a_replayed_notice_cannot_pass_a_slots_old_block_off_as_new(tmp_path_factory, device, tmp_path):
    """A source that notifies a slot again without writing it (a replayed or
    duplicated notice, a WRITE aimed at another slot) leaves in that slot the
    block it last held, under a trailer that matched it. rftpd spoils a
    slot's trailer whenever it lends it again, so that notice fails its
    check and the range is granted again; the file ends whole, not with the
    old block in the new block's place. (rftpd's pool here is two blocks, so
    the third range of the file reuses the first slot.)"""
    name, addr = device
    block = 512 << 10
    d = Daemon(tmp_path_factory.mktemp(f"replay-{name}"), [addr], port=2134, extra_config="rdma: {pool_size: 1M}\n")
    try:
        ftp = d.ftp(addr)
        fields = radr(ftp, block=block, depth=1)
        assert int(fields["block"]) == block
        peer = subprocess.Popen([str(PEER), "replayed-notice", addr, fields["port"], fields["streams"],
                                 fields["block"], fields["depth"], fields["token"], str(3 * block)],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            assert "connected" in peer.stdout.readline()
            assert ftp.sendcmd("TYPE I").startswith("200")
            assert ftp.sendcmd("RSTR replayed.bin").startswith("150")
            out, _ = peer.communicate(timeout=bound(120))
        finally:
            peer.kill()
        assert peer.returncode == 0, out
        assert "replaying its last notice" in out, out
        assert ftp.getresp().startswith("226")
        ftp.quit()
        assert (d.root / "replayed.bin").read_bytes() == b"".join(bytes([k + 1]) * block for k in range(3))
        assert re.search(rf"event=block_checksum_mismatch offset={2 * block} length={block} .*attempt=1", d.log())
        src = tmp_path / "after-replay.bin"
        src.write_bytes(os.urandom(3 * block + 1))
        _, s = rftp("put", str(src), url(addr, src.name, port=2134))
        assert s["transport"] == "rdma"
        assert (d.root / src.name).read_bytes() == src.read_bytes()
    finally:
        d.stop()


def test_radr_takes_three_numbers_above_zero(daemon, device):
    name, addr = device
    ftp = daemon.ftp(addr)
    for bad in ("4 0 8", "0 65536 4", "4 65536 0", "4 65536", "4 65536 4 4", "4 -1 4", "4 64k 4",
                "4 65536 4 BEHIND", "4 65536 4 AHEAD 1"):
        with pytest.raises(ftplib.error_perm, match="^501"):
            ftp.sendcmd(f"RADR {bad}")
    assert radr(ftp, block=1)["block"] == str(64 << 10)  # clamped up, as documented
    ftp.quit()
