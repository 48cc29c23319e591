"""rftp moving many files per invocation: LOCAL... URL/dir/, URL... DIR, -r,
-j sessions, --continue-on-error, -c skipping complete files, JSON events.

Against the real rftpd fixture (user alice, read-write) and, where vsftpd can
be started, against a server without rftp's extensions. Every file is
compared by SHA-256 on disk.
"""

import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from conftest import PASSWORDS, TESTING  # noqa: E402
from vsftpd_server import VSFTPD, VsftpdServer  # noqa: E402

RFTP = str(TESTING / "rftp")


def rftp(env, *args, timeout=300):
    return subprocess.run([RFTP, *map(str, args)], env=env, capture_output=True, timeout=timeout,
                          start_new_session=True)


def sha256(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def tree_digests(root: Path) -> dict:
    """Relative path -> SHA-256 of every regular file under root."""
    return {p.relative_to(root).as_posix(): sha256(p) for p in sorted(root.rglob("*")) if p.is_file()}


def events(result) -> list:
    return [json.loads(line) for line in result.stdout.decode().splitlines()]


def make_tree(root: Path, small: int = 200, large_sizes=(3 * 2**20 + 5, 5 * 2**20, 2**20 + 1)) -> Path:
    """~200 small files (0 B..8 KiB) spread over nested directories, plus a few MiB-sized ones."""
    rng = random.Random(1234)
    dirs = [root, root / "a", root / "a" / "b", root / "a" / "b" / "c", root / "d", root / "d" / "e f"]
    for d in dirs:
        d.mkdir(parents=True, exist_ok=True)
    for i in range(small):
        (dirs[i % len(dirs)] / f"small-{i:03d}.dat").write_bytes(rng.randbytes(rng.randrange(0, 8193)))
    for i, size in enumerate(large_sizes):
        (dirs[(i * 2 + 1) % len(dirs)] / f"large-{i}.bin").write_bytes(os.urandom(size))
    return root


@pytest.fixture
def alice_env(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "RFTP_PASSWORD": PASSWORDS["alice"]}


def alice_url(d, path="/"):
    return f"rftp://alice@127.0.0.1:{d.port}{path}"


def no_partials(root: Path):
    return [p for p in root.rglob("*") if p.name.endswith(".rftp-part")]


def test_tree_put_and_get_with_four_sessions(rftpd, alice_env, tmp_path):
    src = make_tree(tmp_path / "src")
    want = tree_digests(src)
    assert len(want) == 203

    up = rftp(alice_env, "-j", "4", "-P", "2", "--block-size", "1M", "--json", "put", "-r", src, alice_url(rftpd, "/up/"))
    assert up.returncode == 0, up.stderr
    remote = rftpd.roots["alice"] / "up" / "src"
    assert tree_digests(remote) == want
    assert no_partials(rftpd.roots["alice"]) == []
    ev = events(up)
    files = [e for e in ev if e["event"] == "file"]
    assert len(files) == 203 and all(e["result"] == "ok" and e["exit_code"] == 0 for e in files)
    assert {e["path"] for e in files} == {f"/up/src/{rel}" for rel in want}
    summary = ev[-1]
    assert summary["event"] == "summary" and summary["result"] == "ok"
    assert summary["files"] == {"total": 203, "ok": 203, "failed": 0, "skipped": 0}
    assert summary["bytes"] == sum(p.stat().st_size for p in src.rglob("*") if p.is_file())

    # -P 4 makes the large files parallel and the small ones plain, on the
    # same reused sessions: framing must be switched on and off per file.
    dst = tmp_path / "dst"
    dst.mkdir()
    down = rftp(alice_env, "-j", "4", "-P", "4", "--block-size", "1M", "get", "-r", alice_url(rftpd, "/up/src"), dst)
    assert down.returncode == 0, down.stderr
    assert tree_digests(dst / "src") == want
    assert no_partials(dst) == []
    assert b"203 ok, 0 failed, 0 skipped of 203 files" in down.stderr


def test_several_files_into_a_directory_and_back(rftpd, alice_env, tmp_path):
    names = ["one.bin", "two.bin", "three.bin"]
    for i, n in enumerate(names):
        (tmp_path / n).write_bytes(os.urandom(1000 * (i + 1)))
    (rftpd.roots["alice"] / "inbox").mkdir()
    # An existing remote directory without the trailing slash is a directory too.
    r = rftp(alice_env, "put", *[tmp_path / n for n in names], alice_url(rftpd, "/inbox"))
    assert r.returncode == 0, r.stderr
    for n in names:
        assert sha256(rftpd.roots["alice"] / "inbox" / n) == sha256(tmp_path / n)

    out = tmp_path / "out"
    out.mkdir()
    r = rftp(alice_env, "-j", "2", "get", *[alice_url(rftpd, f"/inbox/{n}") for n in names], out)
    assert r.returncode == 0, r.stderr
    for n in names:
        assert sha256(out / n) == sha256(tmp_path / n)


def sized_tree(root: Path) -> Path:
    """Files whose planned (walk) order is not their size order."""
    for rel, size in (("a-small.bin", 100), ("b/c-large.bin", 3 * 2**20), ("b/d-empty.bin", 0),
                      ("e-medium.bin", 2**20 + 3)):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(os.urandom(size))
    return root


BY_SIZE = ["b/c-large.bin", "e-medium.bin", "a-small.bin", "b/d-empty.bin"]


def moved_order(result, prefix: str) -> list:
    return [e["path"].removeprefix(prefix) for e in events(result) if e["event"] == "file"]


def test_the_largest_files_start_first(rftpd, alice_env, tmp_path):
    """With one session the files finish in the order they start: largest
    first (sizes from the local tree, then from MLSD), so a large file never
    starts last and runs alone while the other sessions sit idle."""
    src = sized_tree(tmp_path / "src")
    up = rftp(alice_env, "-j", "1", "--json", "put", "-r", src, alice_url(rftpd, "/up/"))
    assert up.returncode == 0, up.stderr
    assert moved_order(up, "/up/src/") == BY_SIZE
    dst = tmp_path / "dst"
    dst.mkdir()
    down = rftp(alice_env, "-j", "1", "--json", "get", "-r", alice_url(rftpd, "/up/src"), dst)
    assert down.returncode == 0, down.stderr
    assert moved_order(down, "/up/src/") == BY_SIZE
    assert tree_digests(dst / "src") == tree_digests(src)


def test_put_to_a_remote_file_that_is_not_a_directory_is_refused(rftpd, alice_env, tmp_path):
    (rftpd.roots["alice"] / "plain").write_bytes(b"x")
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"a")
    b.write_bytes(b"b")
    r = rftp(alice_env, "put", a, b, alice_url(rftpd, "/plain"))
    assert r.returncode == 2
    assert b"not a directory" in r.stderr
    assert (rftpd.roots["alice"] / "plain").read_bytes() == b"x"


def test_missing_source_stops_or_is_skipped_with_continue_on_error(rftpd, alice_env, tmp_path):
    good = [tmp_path / "g1", tmp_path / "g2"]
    for g in good:
        g.write_bytes(os.urandom(5000))
    missing = tmp_path / "no-such-file"
    dest = rftpd.roots["alice"] / "m"

    # Default: the first failed file ends the run; a missing source is found
    # before anything is sent, so the server is untouched.
    r = rftp(alice_env, "put", good[0], missing, good[1], alice_url(rftpd, "/m/"))
    assert r.returncode == 6, r.stderr
    assert str(missing).encode() in r.stderr
    assert b"0 ok, 1 failed, 0 skipped, 2 not attempted of 3 files" in r.stderr
    assert not dest.exists()

    r = rftp(alice_env, "--continue-on-error", "--json", "put", good[0], missing, good[1], alice_url(rftpd, "/m/"))
    assert r.returncode == 6, r.stderr
    for g in good:
        assert sha256(dest / g.name) == sha256(g)
    ev = events(r)
    failed = [e for e in ev if e["event"] == "file" and e["result"] == "error"]
    assert len(failed) == 1 and failed[0]["exit_code"] == 6 and str(missing) in failed[0]["message"]
    summary = ev[-1]
    assert summary["result"] == "error" and summary["exit_code"] == 6
    assert summary["files"] == {"total": 3, "ok": 2, "failed": 1, "skipped": 0}


def test_missing_remote_file_with_and_without_continue_on_error(rftpd, alice_env, tmp_path):
    for n in ("r1", "r2"):
        (rftpd.roots["alice"] / n).write_bytes(os.urandom(3000))
    urls = [alice_url(rftpd, "/r1"), alice_url(rftpd, "/gone"), alice_url(rftpd, "/r2")]
    out = tmp_path / "out"
    out.mkdir()
    # One session: the files are taken in order, so the run stops at /gone.
    r = rftp(alice_env, "-j", "1", "get", *urls, out)
    assert r.returncode == 5, r.stderr
    assert b"550" in r.stderr and b"/gone" in r.stderr
    assert not (out / "gone").exists() and not (out / "gone.rftp-part").exists()
    assert not (out / "r2").exists()

    r = rftp(alice_env, "--continue-on-error", "get", *urls, out)
    assert r.returncode == 5, r.stderr
    assert b"2 ok, 1 failed" in r.stderr
    for n in ("r1", "r2"):
        assert sha256(out / n) == sha256(rftpd.roots["alice"] / n)


def test_continue_skips_complete_files_and_moves_nothing(rftpd, alice_env, tmp_path):
    src = make_tree(tmp_path / "src", small=30, large_sizes=(2 * 2**20,))
    url = alice_url(rftpd, "/c/")
    assert rftp(alice_env, "put", "-r", src, url).returncode == 0

    r = rftp(alice_env, "--json", "-c", "put", "-r", src, url)
    assert r.returncode == 0, r.stderr
    ev = events(r)
    files = [e for e in ev if e["event"] == "file"]
    assert len(files) == 31 and all(e["result"] == "skipped" and e["bytes"] == 0 for e in files)
    assert ev[-1]["bytes"] == 0 and ev[-1]["files"]["skipped"] == 31

    dst = tmp_path / "dst"
    dst.mkdir()
    assert rftp(alice_env, "get", "-r", alice_url(rftpd, "/c/src"), dst).returncode == 0
    # One file changed size locally: only that one is fetched again.
    victim = dst / "src" / "a" / "small-001.dat"
    victim.write_bytes(b"")
    r = rftp(alice_env, "--json", "-c", "get", "-r", alice_url(rftpd, "/c/src"), dst)
    assert r.returncode == 0, r.stderr
    files = [e for e in events(r) if e["event"] == "file"]
    assert sorted(e["result"] for e in files) == ["ok"] + ["skipped"] * 30
    assert tree_digests(dst / "src") == tree_digests(src)


def test_get_r_writes_nothing_through_a_link_planted_in_the_target(rftpd, alice_env, tmp_path):
    """In a shared target directory another user plants a link where get -r
    will make a directory (the tree's own name, or one inside it): rftp must
    not write the tree's files wherever it points, with the user's rights.
    The target the user named may itself be a link."""
    root = rftpd.roots["alice"]
    (root / "t" / "sub").mkdir(parents=True)
    (root / "t" / "top.bin").write_bytes(b"top")
    (root / "t" / "sub" / "deep.bin").write_bytes(b"deep")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "t").symlink_to(elsewhere)
    r = rftp(alice_env, "--continue-on-error", "get", "-r", alice_url(rftpd, "/t"), shared)
    assert r.returncode == 6, r.stderr
    assert b"is a symbolic link; rftp does not write a tree's files through one" in r.stderr, r.stderr
    assert list(elsewhere.iterdir()) == []
    # One level down, the same.
    (shared / "t").unlink()
    (shared / "t").mkdir()
    (shared / "t" / "sub").symlink_to(elsewhere)
    r = rftp(alice_env, "--continue-on-error", "get", "-r", alice_url(rftpd, "/t"), shared)
    assert r.returncode == 6, r.stderr
    assert list(elsewhere.iterdir()) == [] and (shared / "t" / "top.bin").read_bytes() == b"top"
    # The target named on the command line is the user's choice, link or not.
    named = tmp_path / "named"
    named.symlink_to(elsewhere)
    r = rftp(alice_env, "get", "-r", alice_url(rftpd, "/t/sub"), named)
    assert r.returncode == 0, r.stderr
    assert (elsewhere / "sub" / "deep.bin").read_bytes() == b"deep"


def test_two_files_bound_for_one_path_are_refused_before_either_moves(rftpd, alice_env, tmp_path):
    """Two downloads into one local file would interleave over one partial
    file and each rename the mix; two uploads to one name would leave
    whichever came last. Planning fails the second, and nothing moves."""
    root = rftpd.roots["alice"]
    for d in ("a", "b"):
        (root / d).mkdir()
        (root / d / "x.bin").write_bytes(os.urandom(3 * 2**20))
    out = tmp_path / "out"
    out.mkdir()
    r = rftp(alice_env, "get", alice_url(rftpd, "/a/x.bin"), alice_url(rftpd, "/b/x.bin"), out)
    assert r.returncode == 2, r.stderr
    assert b"would both be saved as" in r.stderr and b"separate directories" in r.stderr
    assert list(out.iterdir()) == []
    # With --continue-on-error the first one still comes, whole.
    r = rftp(alice_env, "--continue-on-error", "get", alice_url(rftpd, "/a/x.bin"), alice_url(rftpd, "/b/x.bin"), out)
    assert r.returncode == 2 and b"1 ok, 1 failed" in r.stderr, r.stderr
    assert sha256(out / "x.bin") == sha256(root / "a" / "x.bin")

    (tmp_path / "p").mkdir()
    (tmp_path / "q").mkdir()
    (tmp_path / "p" / "y.bin").write_bytes(b"p")
    (tmp_path / "q" / "y.bin").write_bytes(b"q")
    r = rftp(alice_env, "put", tmp_path / "p" / "y.bin", tmp_path / "q" / "y.bin", alice_url(rftpd, "/"))
    assert r.returncode == 2 and b"would both be stored as" in r.stderr, r.stderr
    assert not (root / "y.bin").exists()


def test_a_remote_file_named_like_anothers_partial_download_is_refused(rftpd, alice_env, tmp_path):
    """A remote "big.rftp-part" beside "big" would be fetched onto the very
    partial file big's download writes (and a "big.rftp-resume" onto its
    journal): planning fails the second, and big arrives whole."""
    root = rftpd.roots["alice"]
    (root / "d").mkdir()
    (root / "d" / "big").write_bytes(os.urandom(3 * 2**20))
    (root / "d" / "big.rftp-part").write_bytes(os.urandom(2**20))
    (root / "d" / "big.rftp-resume").write_bytes(b"not a journal")
    out = tmp_path / "out"
    out.mkdir()
    r = rftp(alice_env, "--continue-on-error", "get", "-r", "-j", "4", alice_url(rftpd, "/d"), out)
    assert r.returncode == 2, r.stderr
    assert r.stderr.count(b"keeps its partial download") == 2, r.stderr
    assert sha256(out / "d" / "big") == sha256(root / "d" / "big")
    assert sorted(os.listdir(out / "d")) == ["big"]


def test_a_local_directory_where_a_file_would_land_fails_that_file(rftpd, alice_env, tmp_path):
    """In a many-file get each file has its exact local path: a directory
    there is an error (exit 6), never a place to drop the file inside."""
    root = rftpd.roots["alice"]
    (root / "x.bin").write_bytes(b"x" * 1000)
    (root / "y.bin").write_bytes(b"y" * 1000)
    out = tmp_path / "out"
    (out / "x.bin").mkdir(parents=True)
    r = rftp(alice_env, "--continue-on-error", "get", alice_url(rftpd, "/x.bin"), alice_url(rftpd, "/y.bin"), out)
    assert r.returncode == 6, r.stderr
    assert b"x.bin is a directory" in r.stderr, r.stderr
    assert os.listdir(out / "x.bin") == []
    assert (out / "y.bin").read_bytes() == b"y" * 1000


def test_a_symlinked_file_in_a_tree_keeps_its_own_name(rftpd, alice_env, tmp_path):
    """put -r sends a symlink to a file under the link's name, inside the
    tree, never under the name of what it points to (which could lie
    outside the tree, and so outside the remote directory)."""
    root = rftpd.roots["alice"]
    outside = tmp_path / "outside.bin"
    outside.write_bytes(b"linked from the tree")
    tree = tmp_path / "t"
    (tree / "s").mkdir(parents=True)
    (tree / "s" / "link").symlink_to(outside)
    (tree / "b").mkdir()
    (tree / "b" / "f").write_bytes(b"the real f")
    (tree / "s" / "l2").symlink_to("../b/f")
    (root / "in").mkdir()
    r = rftp(alice_env, "put", "-r", tree, alice_url(rftpd, "/in/"))
    assert r.returncode == 0, r.stderr
    assert (root / "in" / "t" / "s" / "link").read_bytes() == b"linked from the tree"
    assert (root / "in" / "t" / "s" / "l2").read_bytes() == b"the real f"
    assert (root / "in" / "t" / "b" / "f").read_bytes() == b"the real f"
    assert sorted(p.name for p in root.rglob("*") if p.is_file()) == ["f", "l2", "link"]


def test_a_link_to_nothing_in_a_tree_is_a_failed_file(rftpd, alice_env, tmp_path):
    """A link whose target is not there (a file system not mounted on this
    node) names a file of the tree rftp cannot send: a failed file (exit 6,
    the rest sent with --continue-on-error), as the link given alone is."""
    root = rftpd.roots["alice"]
    tree = tmp_path / "t"
    tree.mkdir()
    (tree / "x.dat").symlink_to("/lustre/proj/x.dat")
    (tree / "y.dat").write_bytes(b"y")
    (root / "in").mkdir()
    r = rftp(alice_env, "--continue-on-error", "put", "-r", tree, alice_url(rftpd, "/in/"))
    assert r.returncode == 6, r.stderr
    assert b"a symbolic link to /lustre/proj/x.dat, which does not exist" in r.stderr, r.stderr
    assert b"1 ok, 1 failed" in r.stderr, r.stderr
    assert (root / "in" / "t" / "y.dat").read_bytes() == b"y"


def test_a_line_break_in_a_file_name_never_reaches_the_server(rftpd, alice_env, tmp_path):
    """FTP ends a command at a line break and cannot quote one: a local file
    named "a<LF>DELE keep.bin" would send a second command. That file fails
    (exit 2); the others go, and nothing else happens on the server."""
    root = rftpd.roots["alice"]
    (root / "keep.bin").write_bytes(b"keep me")
    tree = tmp_path / "t"
    tree.mkdir()
    with open(tree / "a\nDELE keep.bin", "wb") as f:
        f.truncate(9 << 20)  # large enough for an ALLO
    (tree / "fine.bin").write_bytes(b"fine")
    r = rftp(alice_env, "--continue-on-error", "put", "-r", tree, alice_url(rftpd, "/"))
    assert r.returncode == 2, r.stderr
    assert b"line break" in r.stderr, r.stderr
    assert (root / "keep.bin").read_bytes() == b"keep me"
    assert (root / "t" / "fine.bin").read_bytes() == b"fine"
    assert sorted(p.name for p in (root / "t").iterdir()) == ["fine.bin"]
    # Refused before anything readied its transfer: no ALLO (nor SRCE) of
    # it was left for fine.bin's STOR to take.
    assert f"command=ALLO argument={9 << 20}" not in rftpd.log()


def test_usage_errors_for_many_files(rftpd, alice_env, tmp_path):
    a = tmp_path / "a"
    a.write_bytes(b"a")
    # A directory source without -r.
    r = rftp(alice_env, "put", a, tmp_path, alice_url(rftpd, "/"))
    assert r.returncode == 6 and b"-r" in r.stderr
    # Several files cannot go to stdout or into a file.
    assert rftp(alice_env, "get", alice_url(rftpd, "/x"), alice_url(rftpd, "/y"), "-").returncode == 2
    assert rftp(alice_env, "get", alice_url(rftpd, "/x"), alice_url(rftpd, "/y"), a).returncode == 2
    # All URLs must name one server.
    r = rftp(alice_env, "get", alice_url(rftpd, "/x"), "rftp://bob@127.0.0.1:1/y", tmp_path)
    assert r.returncode == 2 and b"same server" in r.stderr
    assert rftp(alice_env, "put", a).returncode == 2


# --- against vsftpd: no MLSD (LIST is read), no PARALLEL, anonymous pub/ ---

needs_vsftpd = pytest.mark.skipif(not os.path.exists(VSFTPD) or os.geteuid() != 0,
                                  reason="vsftpd not installed, or not root (vsftpd needs root to start)")


@pytest.fixture
def anon_env(tmp_path):
    home = tmp_path / "anon-home"
    home.mkdir()
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home)}


@needs_vsftpd
def test_tree_round_trip_against_vsftpd(tmp_path, anon_env):
    server = VsftpdServer(tmp_path / "ftproot").start()
    try:
        src = make_tree(tmp_path / "src", small=60, large_sizes=(3 * 2**20 + 1,))
        want = tree_digests(src)
        r = rftp(anon_env, "-j", "3", "-P", "4", "put", "-r", src, server.url("/pub/"))
        assert r.returncode == 0, r.stderr
        assert tree_digests(server.pub / "src") == want

        # vsftpd (no MLSD) leaves names with a leading dot out of a plain
        # LIST: a Zarr store's .zarray is data, so rftp asks LIST -a.
        (server.pub / "src" / ".zattrs").write_bytes(b'{"units": "K"}')
        want[".zattrs"] = hashlib.sha256(b'{"units": "K"}').hexdigest()
        # A link is no file of the tree: left out, and said so.
        (server.pub / "src" / "latest").symlink_to(next(p.name for p in (server.pub / "src").iterdir() if p.is_file()))
        dst = tmp_path / "dst"
        dst.mkdir()
        r = rftp(anon_env, "-j", "3", "--json", "get", "-r", server.url("/pub/src"), dst)
        assert r.returncode == 0, r.stderr
        assert tree_digests(dst / "src") == want
        assert events(r)[-1]["files"]["ok"] == len(want)
        assert b"not fetched: \"latest -> " in r.stderr and b"is a symbolic link" in r.stderr, r.stderr
    finally:
        server.stop()


@needs_vsftpd
def test_the_largest_files_start_first_by_list_sizes(tmp_path, anon_env):
    """vsftpd has no MLSD: the sizes come from LIST's size column."""
    server = VsftpdServer(tmp_path / "ftproot").start()
    try:
        src = sized_tree(tmp_path / "src")
        shutil.copytree(src, server.pub / "src")
        dst = tmp_path / "dst"
        dst.mkdir()
        r = rftp(anon_env, "-j", "1", "--json", "get", "-r", server.url("/pub/src"), dst)
        assert r.returncode == 0, r.stderr
        assert moved_order(r, "/pub/src/") == BY_SIZE
    finally:
        server.stop()


@needs_vsftpd
def test_ctrl_c_stops_a_shell_loop_of_rftp_runs(tmp_path, anon_env):
    """Ctrl-C reaches the terminal's whole process group: the shell running a
    loop of rftp runs and the rftp under way. rftp cleans up, then dies of
    SIGINT, so the shell stops too; an exit 130 would tell the shell rftp
    handled it, and the loop would go on to the next file."""
    root = tmp_path / "ftproot"
    slow = VsftpdServer(root, max_rate=500_000).start()
    try:
        (slow.pub / "big.bin").write_bytes(os.urandom(3 * 2**20))
        dst = tmp_path / "dst"
        dst.mkdir()
        loop = f"for i in 1 2; do '{RFTP}' get '{slow.url('/pub/big.bin')}' '{dst}/'$i.bin; echo next-$i; done"
        shell = subprocess.Popen(["bash", "-c", loop], env=anon_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 start_new_session=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not any(p.stat().st_size > 0 for p in dst.iterdir()):
            time.sleep(0.05)
        os.killpg(shell.pid, signal.SIGINT)  # as the terminal does
        out, err = shell.communicate(timeout=60)
        assert b"next-1" not in out, (out, err)
        assert shell.returncode == -signal.SIGINT, (shell.returncode, err)
        assert b"resume with" in err, err
    finally:
        slow.stop()


@needs_vsftpd
def test_interrupt_stops_every_session_and_resume_completes(tmp_path, anon_env):
    root = tmp_path / "ftproot"
    fast = VsftpdServer(root).start()
    slow = VsftpdServer(root, max_rate=500_000).start()
    try:
        names = [f"big{i}.bin" for i in range(4)]
        for n in names:
            (fast.pub / n).write_bytes(os.urandom(3 * 2**20))
        dst = tmp_path / "dst"
        dst.mkdir()
        urls = [slow.url(f"/pub/{n}") for n in names]
        proc = subprocess.Popen([RFTP, "-j", "2", "get", *urls, str(dst)], env=anon_env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        # Wait (without a time assertion) until both sessions wrote bytes, then interrupt.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            parts = [p for p in dst.iterdir() if p.name.endswith(".rftp-part") and p.stat().st_size > 0]
            if len(parts) >= 2:
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == -signal.SIGINT, err  # died of it, as shells expect
        assert b"-c" in err
        # Nothing incomplete under a final name; the partial files are kept.
        for n in names:
            final = dst / n
            assert not final.exists() or sha256(final) == sha256(fast.pub / n)
        assert any(p.name.endswith(".rftp-part") for p in dst.iterdir())

        r = rftp(anon_env, "-c", "get", *[fast.url(f"/pub/{n}") for n in names], dst)
        assert r.returncode == 0, r.stderr
        for n in names:
            assert sha256(dst / n) == sha256(fast.pub / n)
        assert no_partials(dst) == []
    finally:
        slow.stop()
        fast.stop()


def test_sessions_the_server_turns_away_are_done_without(rftpd_factory, alice_env, tmp_path):
    d = rftpd_factory("limits: {max_sessions_per_ip: 2}\n")
    src = make_tree(tmp_path / "src", small=20, large_sizes=())
    r = rftp(alice_env, "-j", "6", "put", "-r", src, alice_url(d, "/lim/"))
    assert r.returncode == 0, r.stderr
    assert b"one session fewer" in r.stderr
    assert tree_digests(d.roots["alice"] / "lim" / "src") == tree_digests(src)


def test_a_remote_path_ending_in_dot_dot_lands_inside_the_local_directory(rftpd, alice_env, tmp_path):
    """get -r URL/p/q/.. fetches /p and names the copy p, as the path
    resolves: never '..', which would write beside the local directory."""
    (rftpd.roots["alice"] / "p" / "q").mkdir(parents=True)
    (rftpd.roots["alice"] / "p" / "f.bin").write_bytes(os.urandom(2000))
    (rftpd.roots["alice"] / "p" / "q" / "g.bin").write_bytes(os.urandom(3000))
    parent = tmp_path / "parent"
    dst = parent / "dst"
    dst.mkdir(parents=True)
    r = rftp(alice_env, "get", "-r", alice_url(rftpd, "/p/q/.."), dst)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in parent.iterdir()) == ["dst"]
    assert tree_digests(dst / "p") == tree_digests(rftpd.roots["alice"] / "p")


def as_nobody():
    """preexec_fn: drop to nobody when running as root, whom no permission bit stops."""
    if os.geteuid() == 0:
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)


def test_an_unreadable_directory_fails_itself_and_the_rest_of_the_tree_is_sent(rftpd, tmp_path):
    """put -r of a tree holding a directory rftp may not read: that directory
    is a failed file (exit 6, named in the message); every other file is
    still sent with --continue-on-error, and none goes missing unreported."""
    import tempfile
    base = Path(tempfile.mkdtemp(prefix="rftp-unreadable-"))
    try:
        base.chmod(0o755)
        tree = base / "t"
        for d in ("a", "closed", "z"):
            (tree / d).mkdir(parents=True)
            (tree / d / "f.bin").write_bytes(os.urandom(1000))
        (tree / "closed").chmod(0o000)
        (rftpd.roots["alice"] / "in").mkdir()
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(base), "RFTP_PASSWORD": PASSWORDS["alice"]}
        r = subprocess.run([RFTP, "--continue-on-error", "put", "-r", str(tree), alice_url(rftpd, "/in/")], env=env,
                           capture_output=True, timeout=120, preexec_fn=as_nobody)
        assert r.returncode == 6, r.stderr
        assert f"read directory {tree / 'closed'}: Permission denied".encode() in r.stderr
        assert b"2 ok, 1 failed, 0 skipped of 3 files" in r.stderr
        sent = rftpd.roots["alice"] / "in" / "t"
        assert sorted(p.relative_to(sent).as_posix() for p in sent.rglob("*.bin")) == ["a/f.bin", "z/f.bin"]
    finally:
        (base / "t" / "closed").chmod(0o755)
        shutil.rmtree(base)


def test_a_remote_directory_the_server_will_not_make_fails_only_its_files(rftpd, alice_env, tmp_path):
    """rftpd refuses MKD of a name it keeps for partial uploads (553). The two
    files meant for that directory fail with the server's reply (exit 5, said
    once for both), the rest of the tree arrives; without
    --continue-on-error nothing moves and the run still says why."""
    tree = tmp_path / "t"
    (tree / "x.rftp-part").mkdir(parents=True)
    (tree / "x.rftp-part" / "one.bin").write_bytes(b"1")
    (tree / "x.rftp-part" / "two.bin").write_bytes(b"2")
    (tree / "ok").mkdir()
    (tree / "ok" / "three.bin").write_bytes(b"3")
    (rftpd.roots["alice"] / "in").mkdir()

    r = rftp(alice_env, "put", "-r", tree, alice_url(rftpd, "/in/"))
    assert r.returncode == 5, r.stderr
    assert b"553" in r.stderr
    assert list((rftpd.roots["alice"] / "in" / "t").rglob("*.bin")) == []

    r = rftp(alice_env, "--json", "--continue-on-error", "put", "-r", tree, alice_url(rftpd, "/in/"))
    assert r.returncode == 5, r.stderr
    assert (rftpd.roots["alice"] / "in" / "t" / "ok" / "three.bin").read_bytes() == b"3"
    failed = sorted(e["path"] for e in events(r) if e["event"] == "file" and e["result"] == "error")
    assert failed == ["/in/t/x.rftp-part/one.bin", "/in/t/x.rftp-part/two.bin"]
    assert events(r)[-1]["files"] == {"total": 3, "ok": 1, "failed": 2, "skipped": 0}
    # main reports one of the two; the other, same cause, is said once more.
    assert r.stderr.count(b"553") == 2, r.stderr


def test_a_fifo_where_a_downloaded_file_would_land_fails_that_file(rftpd, alice_env, tmp_path):
    """A many-file get writes only plain files: a FIFO at a file's local path
    would hold the session until someone reads it. That file fails (exit 6)
    at once; the other arrives."""
    root = rftpd.roots["alice"]
    (root / "p.bin").write_bytes(b"p" * 1000)
    (root / "q.bin").write_bytes(b"q" * 1000)
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / "p.bin")
    r = rftp(alice_env, "--continue-on-error", "get", alice_url(rftpd, "/p.bin"), alice_url(rftpd, "/q.bin"), out,
             timeout=60)
    assert r.returncode == 6, r.stderr
    assert b"p.bin exists and is not a regular file" in r.stderr
    assert (out / "q.bin").read_bytes() == b"q" * 1000
