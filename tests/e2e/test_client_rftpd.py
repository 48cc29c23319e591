"""rftp against rftpd: the client and daemon together, plain and framed
parallel streams, digests, resume after a killed client."""

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import PASSWORDS, TESTING

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
from source_identity import source_token  # noqa: E402

RFTP = str(TESTING / "rftp")
MiB = 1024 * 1024


@pytest.fixture
def env(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
            "RFTP_PASSWORD": PASSWORDS["alice"]}


def url(d, path=""):
    return f"rftp://alice@127.0.0.1:{d.port}/{path}"


def rftp(env, *args, timeout=300):
    return subprocess.run([RFTP, *args], env=env, capture_output=True, timeout=timeout)


def sha256(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(8 * MiB):
            h.update(chunk)
    return h.hexdigest()


def random_file(path: Path, size: int) -> Path:
    with open(path, "wb") as f:
        left = size
        while left:
            n = min(left, 16 * MiB)
            f.write(os.urandom(n))
            left -= n
    return path


def summary(result) -> dict:
    return json.loads(result.stdout.decode().splitlines()[-1])


def test_rftp_shows_a_data_token_on_every_data_connection(rftpd, env, tmp_path):
    """rftp takes the session's data token (OPTS DATATOKEN) and shows it on
    each data connection, parallel streams and listings alike: rftpd,
    which then serves no connection without it, moves the files and
    refuses none (tests/e2e/test_daemon_hostile.py has the thief)."""
    src = random_file(tmp_path / "src.bin", 9 * MiB + 3)
    assert rftp(env, "put", "-P", "4", "--block-size", "1M", str(src), url(rftpd, "dst.bin")).returncode == 0
    r = rftp(env, "ls", url(rftpd))
    assert r.returncode == 0 and b"dst.bin" in r.stdout, r.stderr
    back = tmp_path / "back.bin"
    assert rftp(env, "get", "-P", "4", "--block-size", "1M", url(rftpd, "dst.bin"), str(back)).returncode == 0
    assert sha256(back) == sha256(src)
    log = rftpd.log()
    assert log.count("command=OPTS argument=DATATOKEN") == 3, log
    assert "event=data_connection_refused" not in log, log
    # A secret like the password: rftp's protocol trace does not show it.
    r = rftp(env, "-vv", "ls", url(rftpd))
    assert r.returncode == 0, r.stderr
    assert b"DATATOKEN ****" in r.stderr, r.stderr
    assert not re.search(rb"DATATOKEN [0-9a-f]{32}", r.stderr), r.stderr


@pytest.mark.parametrize("streams", [1, 4])
@pytest.mark.parametrize("size", [0, 1, 4095, 65537, 9 * MiB + 3])
def test_put_get_round_trip(rftpd, env, tmp_path, streams, size):
    src = random_file(tmp_path / "src.bin", size)
    r = rftp(env, "--json", "put", "-P", str(streams), "--block-size", "1M", str(src), url(rftpd, "dst.bin"))
    assert r.returncode == 0, r.stderr
    stored = rftpd.roots["alice"] / "dst.bin"
    assert sha256(stored) == sha256(src)
    assert summary(r)["bytes"] == size
    back = tmp_path / "back.bin"
    r = rftp(env, "--json", "get", "-P", str(streams), "--block-size", "1M", url(rftpd, "dst.bin"), str(back))
    assert r.returncode == 0, r.stderr
    assert sha256(back) == sha256(src)
    if size > MiB:
        assert summary(r)["streams"] == streams
    assert "direction=store" in rftpd.log() and "direction=retrieve" in rftpd.log()


@pytest.mark.parametrize("streams", [1, 4])
def test_get_to_stdout_appends_to_what_the_shell_opened(rftpd, env, tmp_path, streams):
    """`rftp get URL - >> log`: stdout is O_APPEND. Written in order through
    that descriptor, the download lands after what was there; written at
    offsets (or through a second, O_DIRECT descriptor) it would overwrite it."""
    served = random_file(rftpd.roots["alice"] / "tail.bin", 3 * MiB + 5)
    out = tmp_path / "appended.bin"
    out.write_bytes(b"kept before the download\n")
    with open(out, "ab") as sink:
        r = subprocess.run([RFTP, "get", "-P", str(streams), "--block-size", "1M", url(rftpd, "tail.bin"), "-"],
                           env=env, stdout=sink, stderr=subprocess.PIPE, timeout=120)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == b"kept before the download\n" + served.read_bytes()


@pytest.mark.parametrize("streams", [1, 4])
def test_get_to_stdout_lands_at_the_shells_position(rftpd, env, tmp_path, streams):
    """`{ echo head; rftp get URL -; echo done; } > f`: stdout is a plain
    file the shell shares. The download goes after "head", and the shell's
    next write after the download; written at the file's own offsets it
    would overwrite "head", and "done" would overwrite the download."""
    served = random_file(rftpd.roots["alice"] / "middle.bin", 3 * MiB + 5)
    out = tmp_path / "shared.bin"
    with open(out, "wb", buffering=0) as shared:
        shared.write(b"head\n")
        r = subprocess.run([RFTP, "get", "-P", str(streams), "--block-size", "1M", url(rftpd, "middle.bin"), "-"],
                           env=env, stdout=shared, stderr=subprocess.PIPE, timeout=120)
        shared.write(b"done\n")
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == b"head\n" + served.read_bytes() + b"done\n"


@pytest.mark.parametrize("streams", [1, 4])
def test_get_to_a_non_blocking_pipe_waits_for_the_reader(rftpd, env, tmp_path, streams):
    """stdout may be a pipe some other program set O_NONBLOCK on (it is
    shared with the shell). When the reader is slow the pipe fills and write
    says EAGAIN: rftp waits for room instead of failing the download."""
    served = random_file(rftpd.roots["alice"] / "piped.bin", 3 * MiB + 5)
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    proc = subprocess.Popen([RFTP, "get", "-P", str(streams), "--block-size", "1M", url(rftpd, "piped.bin"), "-"],
                            env=env, stdout=write_end, stderr=subprocess.PIPE)
    os.close(write_end)
    time.sleep(1.0)  # the pipe fills long before this
    received = bytearray()
    with os.fdopen(read_end, "rb") as pipe:
        while chunk := pipe.read(65536):
            received += chunk
            time.sleep(0.001)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert hashlib.sha256(received).hexdigest() == sha256(served)


def test_one_gib_file_with_one_and_four_streams(rftpd, env, tmp_path):
    src = random_file(rftpd.roots["alice"] / "gib.bin", 1024 * MiB)
    digest = sha256(src)
    for streams in (1, 4):
        out = tmp_path / f"gib-{streams}.bin"
        r = rftp(env, "--json", "get", "-P", str(streams), url(rftpd, "gib.bin"), str(out))
        assert r.returncode == 0, r.stderr
        assert sha256(out) == digest
        out.unlink()
    for streams in (1, 4):
        r = rftp(env, "put", "-P", str(streams), str(src), url(rftpd, f"up-{streams}.bin"))
        assert r.returncode == 0, r.stderr
        assert sha256(rftpd.roots["alice"] / f"up-{streams}.bin") == digest
        (rftpd.roots["alice"] / f"up-{streams}.bin").unlink()


def test_hash_and_verify(rftpd, env, tmp_path):
    src = random_file(tmp_path / "v.bin", 3 * MiB + 5)
    r = rftp(env, "put", "--verify", str(src), url(rftpd, "v.bin"))
    assert r.returncode == 0, r.stderr
    r = rftp(env, "hash", url(rftpd, "v.bin"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().split()[0] == sha256(src)
    r = rftp(env, "get", "--verify", "-P", "4", "--block-size", "1M", url(rftpd, "v.bin"), str(tmp_path / "w.bin"))
    assert r.returncode == 0, r.stderr


def test_verify_of_a_file_put_c_skipped_leaves_it_and_says_to_send_it_whole(rftpd, env, tmp_path):
    """put -c skips a remote file of the local size; --verify then compares
    digests. A mismatch is exit 7, but that file was not written by this run:
    it stays as it is (a wrong upload of this run's own is removed), and the
    message says how to replace it, since -c would skip it again."""
    src = random_file(tmp_path / "same-size.bin", 2 * MiB)
    there = rftpd.roots["alice"] / "same-size.bin"
    other = random_file(there, 2 * MiB)
    before = sha256(other)
    r = rftp(env, "put", "-c", "--verify", str(src), url(rftpd, "same-size.bin"))
    assert r.returncode == 7, r.stderr
    assert b"already there and is left as it is: send it again without -c" in r.stderr, r.stderr
    assert sha256(there) == before
    r = rftp(env, "put", "--verify", str(src), url(rftpd, "same-size.bin"))
    assert r.returncode == 0, r.stderr
    assert sha256(there) == sha256(src)


def test_mv_of_a_directory_url_renames_it_beside_itself(rftpd, env, tmp_path):
    """rftp mv URL/dir/ new: a relative NEWPATH is beside dir, not inside it."""
    (rftpd.roots["alice"] / "a" / "b").mkdir(parents=True)
    r = rftp(env, "mv", url(rftpd, "a/b/"), "c")
    assert r.returncode == 0, r.stderr
    assert (rftpd.roots["alice"] / "a" / "c").is_dir() and not (rftpd.roots["alice"] / "a" / "b").exists()


def test_a_password_with_a_line_break_is_never_shown(rftpd, env, tmp_path):
    """A password FTP cannot send is an authentication failure (4), and the
    message never repeats it."""
    r = rftp(dict(env, RFTP_PASSWORD="hunter2\nx"), "--json", "ls", url(rftpd, ""))
    assert r.returncode == 4, r.stderr
    assert b"hunter2" not in r.stderr and b"hunter2" not in r.stdout, r.stderr


def test_put_from_a_fifo_or_verify_from_a_device_is_refused_at_once(rftpd, env, tmp_path):
    """A FIFO is not waited on (opening it would block until a writer came);
    --verify with a device source cannot read it back for a digest."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    r = rftp(env, "put", str(fifo), url(rftpd, "f.bin"), timeout=20)
    assert r.returncode == 6 and b"not a regular file" in r.stderr, r.stderr
    r = rftp(env, "put", "--verify", "--size", "1M", "/dev/zero", url(rftpd, "z.bin"))
    assert r.returncode == 2 and b"rftp hash" in r.stderr, r.stderr
    assert not (rftpd.roots["alice"] / "z.bin").exists()


def test_verify_to_stdout_or_a_device_is_refused_up_front(rftpd, env, tmp_path):
    """--verify reads the downloaded file back; stdout cannot give it, so
    rftp says so (exit 2) rather than exiting 0 unverified."""
    random_file(rftpd.roots["alice"] / "v.bin", MiB)
    for target in ("-", "/dev/null"):
        r = rftp(env, "get", "--verify", url(rftpd, "v.bin"), target)
        assert r.returncode == 2, (target, r.stderr)
        assert b"rftp hash" in r.stderr and r.stdout == b"", r.stderr


def test_verify_of_a_file_get_c_skipped_leaves_it_and_says_to_fetch_it_whole(rftpd, env, tmp_path):
    """The download side of the same rule: a local file of the remote size
    that get -c skips but whose digest differs is not this run's; it stays,
    and the message says to fetch it again without -c."""
    random_file(rftpd.roots["alice"] / "same-size.bin", 2 * MiB)
    local = random_file(tmp_path / "same-size.bin", 2 * MiB)
    before = sha256(local)
    r = rftp(env, "get", "-c", "--verify", url(rftpd, "same-size.bin"), str(local))
    assert r.returncode == 7, r.stderr
    assert b"already there and is left as it is: get it again without -c" in r.stderr, r.stderr
    assert sha256(local) == before


def test_verify_of_an_upload_to_dev_null_is_refused_up_front(rftpd, env, tmp_path):
    """rftpd drops an upload to /dev/null and keeps nothing to compare (its
    HASH would look for a file of that name beneath the user's root, which
    a mismatch would then remove): exit 2 before anything moves, and a file
    there stays."""
    src = random_file(tmp_path / "m.bin", MiB)
    (rftpd.roots["alice"] / "dev").mkdir()
    kept = random_file(rftpd.roots["alice"] / "dev" / "null", 1000)
    before = sha256(kept)
    r = rftp(env, "put", "--verify", str(src), url(rftpd, "dev/null"))
    assert r.returncode == 2, r.stderr
    assert b"leave out --verify" in r.stderr, r.stderr
    assert sha256(kept) == before
    assert "event=transfer" not in rftpd.log()


@pytest.mark.parametrize("planted", ["fifo", "directory"])
def test_something_else_at_the_partial_name_stops_the_download_and_says_so(rftpd, env, tmp_path, planted):
    """A FIFO at rftp's partial file name (a shared directory) must not hang
    the download in its open, waiting for a reader; a directory there gets
    more than "Is a directory". Either way: exit 6, what is there and what to
    do, and nothing touched."""
    random_file(rftpd.roots["alice"] / "v.bin", 1 * MiB)
    part = tmp_path / "out.bin.rftp-part"
    if planted == "fifo":
        os.mkfifo(part)
    else:
        part.mkdir()
    r = rftp(env, "get", url(rftpd, "v.bin"), str(tmp_path / "out.bin"), timeout=30)
    assert r.returncode == 6, r.stderr
    assert f"out.bin.rftp-part is a {'FIFO' if planted == 'fifo' else 'directory'}; ".encode() in r.stderr, r.stderr
    assert b"remove it" in r.stderr, r.stderr
    assert not (tmp_path / "out.bin").exists()
    assert part.is_fifo() if planted == "fifo" else part.is_dir()


def test_a_fifo_at_the_journal_name_is_replaced(rftpd, env, tmp_path):
    """A FIFO at rftp's journal name must not hang the resume reading it, nor
    the download making its journal there: it vouches for nothing (the
    partial beside it is not trusted: its bytes here are wrong), and it is
    replaced by the journal."""
    random_file(rftpd.roots["alice"] / "v.bin", 3 * MiB)
    (tmp_path / "out.bin.rftp-part").write_bytes(b"not the file's first bytes")
    os.mkfifo(tmp_path / "out.bin.rftp-resume")
    r = rftp(env, "get", "-c", "-P", "4", "--block-size", "1M", url(rftpd, "v.bin"), str(tmp_path / "out.bin"),
             timeout=30)
    assert r.returncode == 0, r.stderr
    assert sha256(tmp_path / "out.bin") == sha256(rftpd.roots["alice"] / "v.bin")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("out.bin")) == ["out.bin"]


def test_a_symlink_at_the_partial_names_is_not_written_through(rftpd, env, tmp_path):
    """Someone else's symlink at rftp's partial file or journal (a shared
    directory) must not redirect the download onto the file it points at.
    At the partial file: the download stops (exit 6) and says why. At the
    journal: the link is removed and the journal made in its place, so the
    download goes on."""
    random_file(rftpd.roots["alice"] / "v.bin", 3 * MiB)
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    (tmp_path / "out.bin.rftp-part").symlink_to(victim)
    r = rftp(env, "get", "-P", "4", "--block-size", "1M", url(rftpd, "v.bin"), str(tmp_path / "out.bin"))
    assert r.returncode == 6 and b"is a symlink" in r.stderr, r.stderr
    assert victim.read_bytes() == b"precious"
    assert not (tmp_path / "out.bin").exists()

    (tmp_path / "out.bin.rftp-part").unlink()
    (tmp_path / "out.bin.rftp-resume").symlink_to(victim)
    r = rftp(env, "get", "-P", "4", "--block-size", "1M", url(rftpd, "v.bin"), str(tmp_path / "out.bin"))
    assert r.returncode == 0, r.stderr
    assert victim.read_bytes() == b"precious"
    assert sha256(tmp_path / "out.bin") == sha256(rftpd.roots["alice"] / "v.bin")
    assert not os.path.lexists(tmp_path / "out.bin.rftp-resume")


def journal_prefix(journal: Path) -> int:
    """The complete prefix a resume journal vouches for (0 while it has none)."""
    try:
        return int(journal.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


def kill_when(proc, condition, sig=signal.SIGKILL, limit=60):
    """Stops the client as soon as condition() holds (no timing assertion)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and proc.poll() is None:
        if condition():
            proc.send_signal(signal.SIGSTOP)
            proc.send_signal(sig)
            break
        time.sleep(0.001)
    proc.wait(timeout=30)


@pytest.mark.parametrize("streams", [1, 4])
def test_killed_upload_leaves_partial_and_resumes(rftpd, env, tmp_path, streams):
    src = random_file(tmp_path / "k.bin", 256 * MiB)
    final = rftpd.roots["alice"] / "k.bin"
    part = rftpd.roots["alice"] / ".k.bin.rftp-part"
    journal = rftpd.roots["alice"] / ".k.bin.rftp-resume"
    for _attempt in range(3):
        proc = subprocess.Popen([RFTP, "put", "-P", str(streams), "--block-size", "1M", str(src), url(rftpd, "k.bin")],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # The partial may take its whole size up front; the journal says what arrived.
        kill_when(proc, lambda: journal_prefix(journal) > 0)
        if not final.exists():
            break
        final.unlink()
    assert not final.exists(), "the client was never caught mid-upload"
    # The daemon notices the dead connections, keeps only a whole prefix.
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and "event=transfer direction=store" not in rftpd.log():
        time.sleep(0.05)
    assert "result=failed" in rftpd.log() or "result=aborted" in rftpd.log()
    kept = part.stat().st_size
    assert kept < src.stat().st_size
    assert src.read_bytes()[:kept] == part.read_bytes()

    r = rftp(env, "--json", "put", "-c", "-P", str(streams), "--block-size", "1M", str(src), url(rftpd, "k.bin"))
    assert r.returncode == 0, r.stderr
    assert summary(r)["bytes"] == src.stat().st_size - kept
    assert sha256(final) == sha256(src)
    assert not part.exists()


@pytest.mark.parametrize("streams", [1, 4])
def test_killed_download_resumes(rftpd, env, tmp_path, streams):
    src = random_file(rftpd.roots["alice"] / "d.bin", 256 * MiB)
    dst = tmp_path / "d.bin"
    journal = Path(str(dst) + ".rftp-resume")
    for _attempt in range(3):
        proc = subprocess.Popen([RFTP, "get", "-P", str(streams), "--block-size", "1M", url(rftpd, "d.bin"), str(dst)],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        kill_when(proc, lambda: journal_prefix(journal) > 0)
        if not dst.exists():
            break
        dst.unlink()
    assert not dst.exists(), "the client was never caught mid-download"
    r = rftp(env, "--json", "get", "-c", "-P", str(streams), "--block-size", "1M", url(rftpd, "d.bin"), str(dst))
    assert r.returncode == 0, r.stderr
    assert sha256(dst) == sha256(src)
    # The daemon is healthy: another session works.
    r = rftp(env, "ls", url(rftpd))
    assert r.returncode == 0 and "d.bin" in r.stdout.decode()


def test_missing_file_and_read_only_user_exit_codes(rftpd, env, tmp_path):
    r = rftp(env, "get", url(rftpd, "nope.bin"), str(tmp_path / "nope.bin"))
    assert r.returncode == 5
    assert not (tmp_path / "nope.bin").exists() and not (tmp_path / "nope.bin.rftp-part").exists()
    bob = dict(env, RFTP_PASSWORD=PASSWORDS["bob"])
    src = random_file(tmp_path / "b.bin", 10)
    r = rftp(bob, "put", str(src), f"rftp://bob@127.0.0.1:{rftpd.port}/b.bin")
    assert r.returncode == 5, r.stderr
    r = rftp(dict(env, RFTP_PASSWORD="wrong"), "ls", url(rftpd))
    assert r.returncode == 4


def test_ls_mkdir_mv_rm(rftpd, env, tmp_path):
    assert rftp(env, "mkdir", url(rftpd, "dir")).returncode == 0
    src = random_file(tmp_path / "f", 100)
    assert rftp(env, "put", str(src), url(rftpd, "dir/")).returncode == 0
    assert (rftpd.roots["alice"] / "dir" / "f").read_bytes() == src.read_bytes()
    assert rftp(env, "mv", url(rftpd, "dir/f"), "/dir/g").returncode == 0
    listing = rftp(env, "--json", "ls", url(rftpd, "dir"))
    assert listing.returncode == 0
    names = [json.loads(l).get("name") for l in listing.stdout.decode().splitlines() if l.strip()]
    assert "g" in names and "f" not in names
    assert rftp(env, "rm", url(rftpd, "dir/g")).returncode == 0
    assert rftp(env, "rm", "-d", url(rftpd, "dir")).returncode == 0
    assert not (rftpd.roots["alice"] / "dir").exists()


def test_a_listing_or_digest_that_cannot_be_written_out_is_exit_6(rftpd, env):
    """`rftp ls URL > listing.txt` on a full disk left a cut listing and
    exit 0. A reader that stops reading (`| head`) is no failure."""
    (rftpd.roots["alice"] / "a.bin").write_bytes(b"a")
    with open("/dev/full", "wb") as full:  # every write: No space left on device
        for args in (["ls", url(rftpd)], ["--json", "ls", url(rftpd)], ["hash", url(rftpd, "a.bin")]):
            r = subprocess.run([RFTP, *args], env=env, stdout=full, stderr=subprocess.PIPE, timeout=60)
            assert r.returncode == 6, (args, r.stderr)
            assert b"writing to standard output failed: No space left on device" in r.stderr, r.stderr
    for i in range(3000):  # a listing far larger than a pipe holds
        (rftpd.roots["alice"] / f"file-with-a-long-name-{i:05d}.bin").write_bytes(b"")
    r = subprocess.run(["bash", "-c", f"'{RFTP}' ls '{url(rftpd)}' | head -c 1 > /dev/null; echo ${{PIPESTATUS[0]}}"],
                       env=env, capture_output=True, timeout=60)
    assert r.stdout.strip() == b"0", r


def test_resume_trusts_the_journal_over_the_partial_size(rftpd, env, tmp_path):
    """A parallel download killed mid-way leaves blocks beyond holes; its
    journal says how much of the beginning is good, and -c starts there."""
    src = random_file(rftpd.roots["alice"] / "j.bin", 5 * MiB)
    data = src.read_bytes()
    dst = tmp_path / "j.bin"
    part = Path(str(dst) + ".rftp-part")
    journal = Path(str(dst) + ".rftp-resume")
    good = 2 * MiB
    part.write_bytes(data[:good] + b"\0" * MiB + data[3 * MiB:4 * MiB])  # a hole, then a later block
    journal.write_text(f"{good}\n")
    r = rftp(env, "--json", "get", "-c", "-P", "4", "--block-size", "1M", url(rftpd, "j.bin"), str(dst))
    assert r.returncode == 0, r.stderr
    assert summary(r)["bytes"] == len(data) - good
    assert dst.read_bytes() == data
    assert not journal.exists() and not part.exists()


def test_upload_resume_after_a_daemon_crash_trusts_the_journal(rftpd, env, tmp_path):
    """If rftpd itself died mid-way through a parallel upload, the partial
    file may hold blocks beyond holes; SIZE of it (what rftp put -c asks)
    first cuts it back to the prefix the journal vouches for. (12 MiB: a
    partial upload under 8 MiB is sent again whole, test_resume_identity.py.)"""
    src = random_file(tmp_path / "c.bin", 12 * MiB)
    data = src.read_bytes()
    root = rftpd.roots["alice"]
    good = 2 * MiB
    (root / ".c.bin.rftp-part").write_bytes(data[:good] + b"\0" * MiB + data[3 * MiB:4 * MiB])
    (root / ".c.bin.rftp-resume").write_text(f"{good}\n")
    # What that upload's SRCE recorded (docs/protocol.md "Uploads"): the partial is this file's.
    os.setxattr(root / ".c.bin.rftp-part", "user.rftp.source", source_token(src).encode())
    r = rftp(env, "--json", "put", "-c", "-P", "4", "--block-size", "1M", str(src), url(rftpd, "c.bin"))
    assert r.returncode == 0, r.stderr
    assert summary(r)["bytes"] == len(data) - good
    assert (root / "c.bin").read_bytes() == data
    assert not (root / ".c.bin.rftp-part").exists() and not (root / ".c.bin.rftp-resume").exists()


@pytest.mark.parametrize("streams", [1, 4])
def test_a_partial_upload_longer_than_the_local_file_is_not_continued(rftpd, env, tmp_path, streams):
    """The server holds a partial upload longer than the local file (of some
    other file) and a shorter final file. rftpd continues its partial file on
    REST, so resuming at the final file's size would splice the partial's
    bytes into this file: put -c starts afresh instead."""
    root = rftpd.roots["alice"]
    src = random_file(tmp_path / "s.bin", 3 * MiB)
    (root / "s.bin").write_bytes(src.read_bytes()[:MiB])
    (root / ".s.bin.rftp-part").write_bytes(os.urandom(4 * MiB))
    r = rftp(env, "--json", "put", "-c", "-P", str(streams), "--block-size", "1M", str(src), url(rftpd, "s.bin"))
    assert r.returncode == 0, r.stderr
    assert sha256(root / "s.bin") == sha256(src)
    assert summary(r)["bytes"] == 3 * MiB
    assert not (root / ".s.bin.rftp-part").exists()


def test_parallel_upload_leaves_no_journal_behind(rftpd, env, tmp_path):
    src = random_file(tmp_path / "n.bin", 6 * MiB)
    r = rftp(env, "put", "-P", "4", "--block-size", "1M", str(src), url(rftpd, "n.bin"))
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in rftpd.roots["alice"].iterdir()) == ["n.bin"]
