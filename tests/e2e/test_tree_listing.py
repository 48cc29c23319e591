"""MLSR, a whole tree's MLSD lines over one data connection (docs/protocol.md,
"Tree listings"): what rftpd sends, read with ftplib, and how rftp walks a
tree with it (get -r, sync), asking MLSD only for what MLSR did not enter;
against vsftpd, which has no MLSR, directory by directory as before."""

import ftplib
import hashlib
import os
import subprocess

import pytest

from conftest import PASSWORDS, TESTING
from vsftpd_server import VSFTPD, VsftpdServer

needs_vsftpd = pytest.mark.skipif(not os.path.exists(VSFTPD) or os.geteuid() != 0,
                                  reason="vsftpd not installed, or not root (vsftpd needs root to start)")

RFTP = str(TESTING / "rftp")


def make_tree(top):
    """Three levels, names with a space and beyond ASCII, an empty
    directory, and a link to a directory beneath the root."""
    files = {
        "a.bin": os.urandom(3000),
        "sub dir/b.bin": os.urandom(70000),
        "sub dir/deeper/c.bin": b"",
        "données/é.bin": os.urandom(10),
        "g0/g1/g2/d.bin": os.urandom(5),
    }
    for rel, body in files.items():
        (top / rel).parent.mkdir(parents=True, exist_ok=True)
        (top / rel).write_bytes(body)
    (top / "empty").mkdir()
    os.symlink("sub dir", top / "link")
    return files


def login(d):
    f = ftplib.FTP(encoding="utf-8")
    f.connect("127.0.0.1", d.port, timeout=10)
    f.login("alice", PASSWORDS["alice"])
    return f


def facts_and_name(line):
    facts, name = line.split("; ", 1)
    return dict(kv.split("=", 1) for kv in facts.split(";") if kv), name


def test_mlsr_lists_every_directory_once_depth_first(rftpd):
    top = rftpd.roots["alice"] / "t"
    files = make_tree(top)
    f = login(rftpd)
    assert "MLSR" in f.sendcmd("FEAT").split()
    raw = []
    assert f.retrlines("MLSR /t", raw.append).startswith("226")
    lines = [facts_and_name(l) for l in raw]
    cdirs = [name for facts, name in lines if facts["type"] == "cdir"]
    # Real directories only: the link is listed (as the directory it points
    # to, as MLSD does) but not entered.
    assert cdirs == [".", "données", "empty", "g0", "g0/g1", "g0/g1/g2", "sub dir", "sub dir/deeper"], cdirs
    listed = {name: facts for facts, name in lines if facts["type"] != "cdir"}
    assert {n for n, facts in listed.items() if facts["type"] == "file"} == set(files)
    assert all(int(listed[n]["size"]) == len(body) for n, body in files.items())
    assert listed["link"]["type"] == "dir"
    # Each directory's entries follow its cdir line, before any other's.
    current = None
    for facts, name in lines:
        if facts["type"] == "cdir":
            current = name
        else:
            assert os.path.dirname(name) == ("" if current == "." else current), (name, current)
    # A directory's entries, facts and all, are MLSD's for it.
    mlsd = []
    f.retrlines("MLSD /t/sub dir", mlsd.append)
    own = [l.replace("; sub dir/", "; ", 1) for l in raw
           if "; sub dir/" in l and "/" not in l.split("; sub dir/", 1)[1] and "type=cdir" not in l]
    assert sorted(own) == sorted(l for l in mlsd if "type=cdir" not in l)
    f.quit()


def test_mlsr_refuses_what_is_not_a_directory_beneath_the_root(rftpd):
    make_tree(rftpd.roots["alice"] / "t")
    plain = ftplib.FTP()
    plain.connect("127.0.0.1", rftpd.port, timeout=10)
    try:
        plain.sendcmd("MLSR /")
        raise AssertionError("MLSR before the login was answered")
    except ftplib.error_perm as e:
        assert str(e).startswith("530"), e
    plain.close()
    f = login(rftpd)
    for path, code in (("/t/a.bin", "501"), ("/nowhere", "550")):
        try:
            f.retrlines(f"MLSR {path}", lambda _: None)
            raise AssertionError(f"MLSR {path} was answered")
        except ftplib.error_perm as e:
            assert str(e).startswith(code), (path, e)
    # Above the root is the root: the listing names nothing outside it.
    raw = []
    f.retrlines("MLSR /../..", raw.append)
    names = {facts_and_name(l)[1] for l in raw}
    assert "t/a.bin" in names and not any(n.startswith("..") for n in names)
    f.quit()
    assert rftpd.alive()


def test_a_name_with_a_line_break_ends_mlsr_and_rftp_lists_each_directory(rftpd, tmp_path):
    """Its line could pass for an entry of another directory: MLSR ends
    with 451, and rftp walks the tree with MLSD, which shows the broken
    line where it is, as before."""
    top = rftpd.roots["alice"] / "t"
    files = make_tree(top)
    (top / "g0" / "bad\ntype=file;size=1; planted").write_bytes(b"x")  # an entry of /t, said in g0's lines
    f = login(rftpd)
    try:
        f.retrlines("MLSR /t", lambda _: None)
        raise AssertionError("MLSR of a tree with a line break in a name was answered 2xx")
    except ftplib.error_temp as e:
        assert str(e).startswith("451") and "line break" in str(e), e
    f.quit()
    r = run_rftp(tmp_path, "-vv", "--continue-on-error", "get", "-r", f"rftp://alice@127.0.0.1:{rftpd.port}/t/",
                 tmp_path)
    assert sent(r.stderr, "MLSR") and "/t/g0" in sent(r.stderr, "MLSD"), r.stderr.decode()[-3000:]
    got = digests(tmp_path / "t")
    assert "planted" not in got
    assert all(got.get(rel) == hashlib.sha256(body).hexdigest() for rel, body in files.items())
    assert rftpd.alive()


def run_rftp(home, *args):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "RFTP_PASSWORD": PASSWORDS["alice"]}
    return subprocess.run([RFTP, *map(str, args)], env=env, capture_output=True, timeout=120)


def digests(top):
    return {str(p.relative_to(top)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in top.rglob("*") if p.is_file()}


def sent(stderr: bytes, verb: str) -> list:
    return [l.removeprefix(f"debug: --> {verb} ") for l in stderr.decode().splitlines()
            if l.startswith(f"debug: --> {verb} ")]


def test_get_r_and_sync_walk_a_tree_with_one_mlsr(rftpd, tmp_path):
    top = rftpd.roots["alice"] / "t"
    make_tree(top)
    want = digests(top)
    # What the link points to comes again under the link's name, as MLSD has it.
    want.update({"link/" + k.removeprefix("sub dir/"): v for k, v in want.items() if k.startswith("sub dir/")})
    url = f"rftp://alice@127.0.0.1:{rftpd.port}/t/"
    (tmp_path / "got").mkdir()
    for command, landed in ((("get", "-r", url, tmp_path / "got"), tmp_path / "got" / "t"),
                            (("sync", url, tmp_path / "synced"), tmp_path / "synced")):
        r = run_rftp(tmp_path, "-vv", "-j", "2", *command)
        assert r.returncode == 0, r.stderr.decode()[-3000:]
        assert digests(landed) == want
        assert (landed / "empty").is_dir()
        # One MLSR for the tree; MLSD only at and below the link, which it
        # did not enter.
        assert [p.rstrip("/") for p in sent(r.stderr, "MLSR")] == ["/t"], r.stderr.decode()[-3000:]
        assert sent(r.stderr, "MLSD") == ["/t/link", "/t/link/deeper"], r.stderr.decode()[-3000:]


@needs_vsftpd
def test_a_server_without_mlsr_is_listed_directory_by_directory(tmp_path):
    server = VsftpdServer(tmp_path / "ftproot").start()
    try:
        top = server.pub / "t"
        files = make_tree(top)
        home = tmp_path / "home"
        home.mkdir()
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home)}
        (tmp_path / "got").mkdir()
        r = subprocess.run([RFTP, "-vv", "get", "-r", server.url("/pub/t/"), str(tmp_path / "got")], env=env,
                           capture_output=True, timeout=120)
        assert r.returncode == 0, r.stderr.decode()[-3000:]
        assert sent(r.stderr, "MLSR") == []
        got = digests(tmp_path / "got" / "t")
        assert {k: v for k, v in got.items() if not k.startswith("link/")} == {
            k: hashlib.sha256(v).hexdigest() for k, v in files.items()}
    finally:
        server.stop()
