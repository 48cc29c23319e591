"""rftp sync and rftp check against the real rftpd and a real vsftpd: both
directions, each --compare level, --delete and --max-delete, --dry-run,
filters and --files-from, manifests checked with sha256sum, and check's exit
codes. Every tree is compared by SHA-256 on disk."""

import hashlib
import json
import os
import random
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from conftest import PASSWORDS, TESTING, Rftpd  # noqa: E402
from restart import journal_prefix  # noqa: E402
from vsftpd_server import VSFTPD, VsftpdServer  # noqa: E402

RFTP = str(TESTING / "rftp")
OLD = 1_600_000_000  # a modification time well in the past


def rftp(env, *args, timeout=300, stdin=None, cwd=None):
    return subprocess.run([RFTP, *map(str, args)], env=env, capture_output=True, timeout=timeout,
                          start_new_session=True, input=stdin, cwd=cwd)


def tree_digests(root: Path) -> dict:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def tree_state(root: Path) -> dict:
    """Every entry with its type, size and modification time, and every file's digest."""
    state = {}
    for p in sorted(root.rglob("*")):
        st = p.lstat()
        state[p.relative_to(root).as_posix()] = (p.is_dir(), st.st_size, st.st_mtime_ns,
                                                 hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None)
    return state


def events(result, kind=None) -> list:
    all_events = [json.loads(line) for line in result.stdout.decode().splitlines()]
    return [e for e in all_events if kind is None or e["event"] == kind]


def summary(result) -> dict:
    return events(result, "summary")[-1]


def make_dataset(root: Path, files: int = 60) -> Path:
    rng = random.Random(39)
    dirs = [root, root / "a", root / "a" / "b", root / "c d", root / "ünï"]
    for d in dirs:
        d.mkdir(parents=True, exist_ok=True)
    for i in range(files):
        path = dirs[i % len(dirs)] / f"f{i:03d}.dat"
        path.write_bytes(rng.randbytes(rng.randrange(0, 20000)))
        os.utime(path, (OLD + i, OLD + i))
    (root / "big.bin").write_bytes(os.urandom(3 * 2**20 + 7))
    return root


@pytest.fixture
def env(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "RFTP_PASSWORD": PASSWORDS["alice"]}


def url(d, path="/"):
    return f"rftp://alice@127.0.0.1:{d.port}{path}"


def assert_same_times(a: Path, b: Path):
    for p in a.rglob("*"):
        if p.is_file():
            assert int(p.stat().st_mtime) == int((b / p.relative_to(a)).stat().st_mtime), p


def test_sync_up_copies_the_tree_with_its_times_and_a_second_run_moves_nothing(rftpd, tmp_path, env):
    src = make_dataset(tmp_path / "src")
    r = rftp(env, "--json", "sync", src, url(rftpd, "/data/set"))
    assert r.returncode == 0, r.stderr
    dst = rftpd.roots["alice"] / "data" / "set"
    assert tree_digests(dst) == tree_digests(src)
    assert_same_times(src, dst)
    assert summary(r)["files"]["ok"] == len(tree_digests(src))

    again = rftp(env, "--json", "sync", src, url(rftpd, "/data/set"))
    assert again.returncode == 0, again.stderr
    files = summary(again)["files"]
    assert files["ok"] == 0 and files["unchanged"] == len(tree_digests(src)) and summary(again)["bytes"] == 0
    assert events(again, "file") == []
    human = rftp(env, "sync", src, url(rftpd, "/data/set"))
    assert b"0 copied, 61 unchanged, 0 deleted, 0 failed" in human.stderr, human.stderr


def test_sync_down_and_a_manifest_that_sha256sum_confirms(rftpd, tmp_path, env):
    src = make_dataset(rftpd.roots["alice"] / "campaign")
    dst = tmp_path / "mirror"
    manifest = tmp_path / "manifest.tsv"
    r = rftp(env, "sync", "--manifest", manifest, url(rftpd, "/campaign/"), dst)
    assert r.returncode == 0, r.stderr
    assert tree_digests(dst) == tree_digests(src)
    assert "command=MDTM" not in rftpd.log()  # the listing's times serve: no round trip per file for them
    assert_same_times(src, dst)
    lines = manifest.read_text().splitlines()
    assert lines[0] == "# rftp manifest 1"
    rows = [line.split("\t") for line in lines[1:]]
    assert [row[0] for row in rows] == sorted(tree_digests(src))
    listed = "".join(f"{row[3]}  {row[0]}\n" for row in rows)
    checked = subprocess.run(["sha256sum", "--check", "--strict", "-"], cwd=dst, input=listed.encode(),
                             capture_output=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    for row in rows:
        assert int(row[1]) == (dst / row[0]).stat().st_size

    # check --manifest of the copy: the same; one byte flipped (size and time kept) is found by --checksum only.
    assert rftp(env, "check", "--manifest", manifest, dst).returncode == 0
    victim = dst / "a" / "f001.dat"
    st = victim.stat()
    data = bytearray(victim.read_bytes())
    data[0] ^= 1
    victim.write_bytes(bytes(data))
    os.utime(victim, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert rftp(env, "check", "--manifest", manifest, dst).returncode == 0
    r = rftp(env, "check", "--checksum", "--manifest", manifest, dst)
    assert r.returncode == 1 and r.stdout == b"differs (checksum)\ta/f001.dat\n", r.stdout + r.stderr


@pytest.mark.parametrize("direction", ["up", "down"])
@pytest.mark.parametrize("compare,copied", [
    # rewritten (same size, new time), rewritten keeping the old time, touched only
    ("mtime", {"rewritten", "touched"}),
    ("size", set()),
    ("checksum", {"rewritten", "rewritten-old-time"}),
])
def test_what_each_compare_level_calls_changed(rftpd, tmp_path, env, direction, compare, copied):
    local = tmp_path / "local"
    remote = rftpd.roots["alice"] / "tree"
    src, dst = (local, remote) if direction == "up" else (remote, local)
    src.mkdir()
    for name in ("rewritten", "rewritten-old-time", "touched", "same"):
        (src / name).write_bytes(b"version one " + name.encode())
        os.utime(src / name, (OLD, OLD))
    first = rftp(env, "sync", *((local, url(rftpd, "/tree")) if direction == "up" else (url(rftpd, "/tree"), local)))
    assert first.returncode == 0, first.stderr
    (src / "rewritten").write_bytes(b"version two " + b"rewritten")
    (src / "rewritten-old-time").write_bytes(b"version two " + b"rewritten-old-time")
    os.utime(src / "rewritten-old-time", (OLD, OLD))
    os.utime(src / "touched", (OLD + 3600, OLD + 3600))
    args = (local, url(rftpd, "/tree")) if direction == "up" else (url(rftpd, "/tree"), local)
    r = rftp(env, "--json", "sync", "--compare", compare, *args)
    assert r.returncode == 0, r.stderr
    moved = {Path(e["local"]).name for e in events(r, "file")}
    assert moved == copied
    for name in copied:
        assert (dst / name).read_bytes() == (src / name).read_bytes()
    assert (dst / "same").read_bytes() == b"version one same"


def test_delete_respects_max_delete_and_never_follows_a_failed_copy(rftpd, tmp_path, env):
    src = make_dataset(tmp_path / "src", files=20)
    target = url(rftpd, "/d")
    assert rftp(env, "sync", src, target).returncode == 0
    dst = rftpd.roots["alice"] / "d"
    for name in ("f000.dat", "f005.dat", "a/f001.dat"):
        (src / name).unlink()
    (src / "a" / "b").rename(tmp_path / "gone-b")  # a directory and its files go too

    before = tree_state(dst)
    r = rftp(env, "--json", "sync", "--delete", "--max-delete", "3", src, target)
    assert r.returncode == 9, r.stderr
    assert "nothing was deleted" in summary(r)["message"]
    assert tree_state(dst) == before

    # A file the source has that cannot be copied (a directory holds its name
    # at the destination): the copy fails, so nothing is deleted either.
    (src / "blocked").write_bytes(b"x")
    (dst / "blocked").mkdir()
    (dst / "blocked" / "inside").write_bytes(b"keep")
    r = rftp(env, "--json", "sync", "--delete", src, target)
    assert r.returncode != 0
    assert events(r, "delete") == [] and (dst / "f000.dat").exists()
    (src / "blocked").unlink()

    extra = set(tree_digests(dst)) - set(tree_digests(src))
    assert len(extra) == 3 + 1 + 4  # the three, blocked/inside, and a/b's four files
    r = rftp(env, "--json", "sync", "--delete", "--max-delete", "50%", src, target)
    assert r.returncode == 0, r.stderr
    assert summary(r)["files"]["deleted"] == len(extra)
    assert {Path(e["path"]).relative_to("/d").as_posix() for e in events(r, "delete")} == extra
    assert tree_digests(dst) == tree_digests(src)
    assert not (dst / "a" / "b").exists() and not (dst / "blocked").exists()


def test_dry_run_changes_nothing_and_shows_the_plan(rftpd, tmp_path, env):
    src = make_dataset(tmp_path / "src", files=10)
    assert rftp(env, "sync", src, url(rftpd, "/p")).returncode == 0
    dst = rftpd.roots["alice"] / "p"
    (src / "new file").write_bytes(b"new")
    (src / "f000.dat").write_bytes(b"changed size")
    (src / "f005.dat").unlink()
    (dst / "extra").write_bytes(b"only here")
    before = (tree_state(src), tree_state(dst))
    r = rftp(env, "--json", "sync", "--dry-run", "--delete", src, url(rftpd, "/p"))
    assert r.returncode == 0, r.stderr
    assert (tree_state(src), tree_state(dst)) == before
    plan = {e["path"]: (e["action"], e.get("reason")) for e in events(r, "plan")}
    assert plan["new file"] == ("new", None)
    assert plan["f000.dat"] == ("changed", "size")
    assert plan["f005.dat"] == ("delete", None) and plan["extra"] == ("delete", None)
    assert plan["a/f001.dat"] == ("unchanged", None)
    human = rftp(env, "sync", "-n", "--delete", src, url(rftpd, "/p"))
    assert human.returncode == 0
    assert b"new\tnew file\n" in human.stdout and b"changed (size)\tf000.dat\n" in human.stdout
    assert b"delete\textra\n" in human.stdout and b"unchanged" not in human.stdout
    assert (tree_state(src), tree_state(dst)) == before


def test_filters_and_files_from_with_awkward_names(rftpd, tmp_path, env):
    src = tmp_path / "src"
    (src / "logs").mkdir(parents=True)
    (src / "keep").mkdir()
    names = ["a b.txt", "ünïcødé.txt", "-leading-dash.txt", "data.bin", "logs/x.log", "keep/deep.tmp", "top.tmp"]
    for n in names:
        (src / n).write_bytes(n.encode())
    r = rftp(env, "sync", "--include", "/keep/**", "--exclude", "*.tmp", "--exclude", "logs/", src, url(rftpd, "/f"))
    assert r.returncode == 0, r.stderr
    got = set(tree_digests(rftpd.roots["alice"] / "f"))
    assert got == {"a b.txt", "ünïcødé.txt", "-leading-dash.txt", "data.bin", "keep/deep.tmp"}

    listing = tmp_path / "list"
    listing.write_bytes(b"./a b.txt\n-leading-dash.txt\n\xc3\xbcn\xc3\xafc\xc3\xb8d\xc3\xa9.txt\n")
    r = rftp(env, "sync", "--files-from", listing, src, url(rftpd, "/g"))
    assert r.returncode == 0, r.stderr
    assert set(tree_digests(rftpd.roots["alice"] / "g")) == {"a b.txt", "-leading-dash.txt", "ünïcødé.txt"}
    r = rftp(env, "sync", "--files-from", "-", "--from0", src, url(rftpd, "/h"), stdin=b"logs\0data.bin\0")
    assert r.returncode == 0, r.stderr
    assert set(tree_digests(rftpd.roots["alice"] / "h")) == {"logs/x.log", "data.bin"}
    bad = tmp_path / "bad"
    bad.write_text("ok.txt\n../etc/passwd\n")
    r = rftp(env, "sync", "--files-from", bad, src, url(rftpd, "/h"))
    assert r.returncode == 2 and b":2: not a path beneath the source" in r.stderr


def test_a_symbolic_link_where_a_directory_goes_is_never_written_through(rftpd, tmp_path, env):
    src = rftpd.roots["alice"] / "tree"
    (src / "a").mkdir(parents=True)
    (src / "a" / "f.dat").write_bytes(b"data")
    dst = tmp_path / "dst"
    dst.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (dst / "a").symlink_to(elsewhere)
    r = rftp(env, "sync", url(rftpd, "/tree"), dst)
    assert r.returncode == 6, r.stderr
    assert b"is not a directory (a symbolic link" in r.stderr, r.stderr
    assert list(elsewhere.iterdir()) == []


def test_check_says_what_differs_and_exits_1(rftpd, tmp_path, env):
    src = make_dataset(tmp_path / "src", files=10)
    target = url(rftpd, "/chk")
    assert rftp(env, "sync", src, target).returncode == 0
    assert rftp(env, "check", src, target).returncode == 0
    dst = rftpd.roots["alice"] / "chk"
    (src / "only-src").write_bytes(b"1")
    (dst / "only-dst").write_bytes(b"2")
    (dst / "f000.dat").write_bytes(b"different length")
    r = rftp(env, "check", src, target)
    assert r.returncode == 1, r.stderr
    assert sorted(r.stdout.decode().splitlines()) == ["differs (size)\tf000.dat", "extra\tonly-dst", "missing\tonly-src"]
    r = rftp(env, "--json", "check", src, target)
    assert summary(r)["exit_code"] == 1
    assert {e["path"]: e["kind"] for e in events(r, "difference")} == {
        "f000.dat": "differs", "only-dst": "extra", "only-src": "missing"}


def test_usage_errors_are_clear(rftpd, tmp_path, env):
    src = tmp_path / "s"
    src.mkdir()
    for args, words in [
        (("sync", src, tmp_path / "t"), b"a local directory and a URL"),
        (("sync", "--max-delete", "5", src, url(rftpd)), b"give --delete too"),
        (("sync", "--delete", "--max-delete", "120%", src, url(rftpd)), b"--max-delete"),
        (("sync", "--compare", "size", "--checksum", src, url(rftpd)), b"contradict"),
        (("put", "--delete", src, url(rftpd)), b"are for sync and check"),
        (("check", "--delete", src, url(rftpd)), b"check changes nothing"),
        (("sync", tmp_path / "missing", url(rftpd, "/x")), b"not a directory"),
    ]:
        r = rftp(env, *args)
        assert r.returncode == 2, (args, r.stderr)
        assert words in r.stderr, (args, r.stderr)


needs_vsftpd = pytest.mark.skipif(not os.path.exists(VSFTPD) or os.geteuid() != 0,
                                  reason="vsftpd not installed, or not root (vsftpd needs root to start)")


@needs_vsftpd
def test_sync_against_vsftpd_sets_times_with_mdtm_and_compares_them(tmp_path):
    """vsftpd has no MLSD, MFMT or HASH: times are set with the two-argument
    MDTM and read back with MDTM, one round trip per same-size file."""
    server = VsftpdServer(tmp_path / "ftproot").start()
    anon = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)}
    try:
        src = make_dataset(tmp_path / "src", files=12)
        r = rftp(anon, "sync", src, server.url("/pub/set"))
        assert r.returncode == 0, r.stderr
        assert tree_digests(server.pub / "set") == tree_digests(src)
        assert_same_times(src, server.pub / "set")
        r = rftp(anon, "-v", "--json", "sync", src, server.url("/pub/set"))
        assert r.returncode == 0, r.stderr
        assert summary(r)["files"]["unchanged"] == 13 and summary(r)["bytes"] == 0
        assert any("no MLSD" in n for n in summary(r)["notes"])
        (src / "a" / "f001.dat").write_bytes(b"rewritten")
        down = tmp_path / "down"
        r = rftp(anon, "sync", src, server.url("/pub/set"))
        assert r.returncode == 0, r.stderr
        r = rftp(anon, "sync", server.url("/pub/set"), down)
        assert r.returncode == 0, r.stderr
        assert tree_digests(down) == tree_digests(src)
        assert_same_times(src, down)
        assert rftp(anon, "check", down, server.url("/pub/set")).returncode == 0
    finally:
        server.stop()


BIG = 256 * 2**20


def wait_for_journal(journal: Path, proc, limit=120):
    """Until the upload's journal vouches for part of the file (True), or rftp ended first (False)."""
    deadline = time.monotonic() + limit
    while proc.poll() is None and time.monotonic() < deadline:
        if 0 < journal_prefix(journal) < BIG:
            return True
        time.sleep(0.001)
    return False


def test_an_interrupted_sync_resumes_with_the_command_it_prints(rftpd, tmp_path, env):
    src = make_dataset(tmp_path / "src", files=10)
    (src / "huge.bin").write_bytes(os.urandom(BIG))
    journal = rftpd.roots["alice"] / "s" / ".huge.bin.rftp-resume"
    for _attempt in range(3):
        proc = subprocess.Popen([RFTP, "-j", "1", "sync", str(src), url(rftpd, "/s")], env=env, text=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        if wait_for_journal(journal, proc):
            proc.send_signal(signal.SIGINT)
            break
        proc.communicate(timeout=60)
        shutil.rmtree(rftpd.roots["alice"] / "s")
    else:
        raise AssertionError("the sync was never caught mid-transfer")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGINT, err
    resume = re.search(r"resume with: (.*)", err).group(1)
    assert resume.startswith("rftp '-j' '1' 'sync' "), err  # the command as typed
    kept = journal_prefix(journal)
    r = subprocess.run(resume.replace("rftp ", shlex.quote(RFTP) + " --json ", 1), shell=True, env=env,
                       capture_output=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert tree_digests(rftpd.roots["alice"] / "s") == tree_digests(src)
    everything = sum(p.stat().st_size for p in src.rglob("*") if p.is_file())
    assert summary(r)["bytes"] <= everything - kept  # huge.bin's journal-vouched prefix did not move again


def test_a_sync_retries_a_file_cut_by_a_server_restart_and_continues_it(tmp_path, env):
    work = tmp_path / "d"
    d = Rftpd(work)
    src = tmp_path / "src"
    src.mkdir()
    (src / "huge.bin").write_bytes(os.urandom(BIG))
    journal = d.roots["alice"] / ".huge.bin.rftp-resume"
    unfinished = tmp_path / "unfinished"
    restarted = None
    try:
        proc = subprocess.Popen([RFTP, "--json", "sync", "--unfinished", str(unfinished), str(src), url(d)], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        if not wait_for_journal(journal, proc):
            pytest.skip("the file arrived before the restart could cut it")
        d.proc.send_signal(signal.SIGTERM)
        assert d.proc.wait(timeout=20) == 0
        restarted = Rftpd(work, port=d.port)  # back before the first retry's pause is over
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert b"trying /huge.bin again in 1 s (retry 1 of 3)" in err, err
        assert hashlib.sha256((d.roots["alice"] / "huge.bin").read_bytes()).hexdigest() == \
            hashlib.sha256((src / "huge.bin").read_bytes()).hexdigest()
        final = json.loads(out.decode().splitlines()[-1])
        assert final["bytes"] < 2 * BIG  # the retry continued the partial file
        assert not unfinished.exists()
    finally:
        for daemon in (d, restarted):
            if daemon and daemon.alive():
                daemon.stop()


def test_a_failed_sync_lists_what_it_did_not_finish_for_files_from(rftpd, tmp_path, env):
    src = make_dataset(tmp_path / "src", files=10)
    dst = rftpd.roots["alice"] / "u"
    dst.mkdir()
    (dst / "f000.dat").mkdir()  # a directory where the file must go: refused, never retried
    unfinished = tmp_path / "unfinished"
    r = rftp(env, "--continue-on-error", "sync", "--unfinished", unfinished, src, url(rftpd, "/u"))
    assert r.returncode == 5, r.stderr
    assert unfinished.read_text() == "f000.dat\n"
    r = rftp(env, "--continue-on-error", "sync", "--from0", "--unfinished", unfinished, src, url(rftpd, "/u"))
    assert r.returncode == 5, r.stderr
    assert unfinished.read_bytes() == b"f000.dat\0"
    unfinished.write_text("f000.dat\n")
    assert b"trying" not in r.stderr  # a refusal is not worth a retry
    (dst / "f000.dat").rmdir()
    r = rftp(env, "--json", "sync", "--files-from", unfinished, src, url(rftpd, "/u"))
    assert r.returncode == 0, r.stderr
    assert [e["local"] for e in events(r, "file")] == [str(src / "f000.dat")]
    assert tree_digests(dst) == tree_digests(src)


def test_a_job_file_runs_its_replications_and_reports_each_by_name(rftpd, tmp_path, env):
    up = make_dataset(tmp_path / "up", files=12)
    down_src = make_dataset(rftpd.roots["alice"] / "published", files=8)
    job = tmp_path / "nightly.yaml"
    job.write_text(f"""
defaults:
  compare: mtime
  retries: 2
  max_delete: 10%    # for the replications that delete
  filters:
    - exclude: "*.tmp"
replications:
  - name: raw
    source: {up}
    destination: {url(rftpd, "/raw")}
    delete: true
  - name: published
    source: {url(rftpd, "/published")}
    destination: {tmp_path / "published-copy"}
    manifest: {tmp_path / "published.manifest"}
""")
    (up / "scratch.tmp").write_bytes(b"not for the archive")
    for side_by_side in ("1", "2"):
        r = rftp(env, "--json", "sync", "--job", job, "-P", side_by_side)
        assert r.returncode == 0, r.stderr
        evs = events(r)
        assert evs[-1]["event"] == "summary" and evs[-1]["jobs"] == {"total": 2, "ok": 2, "failed": 0}
        assert evs[0]["event"] == "start"
        assert all(e.get("job") in ("raw", "published") for e in evs[1:-1])
        assert {e["job"] for e in evs if e["event"] == "job"} == {"raw", "published"}
    del_tmp = tree_digests(up)
    del del_tmp["scratch.tmp"]
    assert tree_digests(rftpd.roots["alice"] / "raw") == del_tmp
    assert tree_digests(tmp_path / "published-copy") == tree_digests(down_src)
    assert (tmp_path / "published.manifest").exists()

    human = rftp(env, "sync", "--job", job)
    assert human.returncode == 0, human.stderr
    assert b"[raw] rftp: sync: 0 copied, 13 unchanged" in human.stderr, human.stderr
    assert b"rftp: sync --job: 2 replications, 2 ok, 0 failed" in human.stderr

    # The most severe exit wins: one replication whose source is gone (2).
    broken = tmp_path / "broken.yaml"
    broken.write_text(job.read_text().replace(str(up), str(tmp_path / "gone")))
    r = rftp(env, "--json", "sync", "--job", broken)
    assert r.returncode == 2, r.stderr
    assert summary(r)["jobs"] == {"total": 2, "ok": 1, "failed": 1}


@pytest.mark.parametrize("text,where,words", [
    ("replications:\n  - name: a\n    source: /x\n    destination: rftp://h/y\n    colour: blue\n",
     ":5:5: replications[0].colour", "unknown key"),
    ("replications:\n  - name: a\n    source: /x\n    destination: rftp://h/y\n    compare: sha1\n",
     ":5:14: replications[0].compare", "expected one of size, mtime, checksum"),
    ("defaults:\n  retries: many\nreplications:\n  - {name: a, source: /x, destination: rftp://h/y}\n",
     ":2:12: defaults.retries", "expected an integer"),
    ("replications:\n  - name: a\n    source: /x\n    destination: /y\n", ":2:5: replications[0]",
     "a local directory and a URL"),
    ("replications:\n  - {name: a, source: /x, destination: rftp://h/y}\n  - {name: a, source: /z, destination: rftp://h/z}\n",
     ":3:12: replications[1].name", "a name used twice"),
    ("replications:\n  - {name: a, source: /x, destination: rftp://h/y, delete: true, max_delete: 150%}\n",
     "replications[0].max_delete", "expected a number of files or a percentage"),
    ("replications:\n  - {name: a, source: /x, destination: rftp://h/y, delete: true, files_from: /l}\n",
     "replications[0].files_from", "delete with files_from"),
    ("replications:\n  - {name: a, source: /x, destination: rftp://h/y, from0: true}\n",
     "replications[0].from0", "from0 says how"),
    ("replications:\n  - {name: a, source: /x, destination: rftp://h/y, pinned_pubkey: abc}\n",
     "replications[0].pinned_pubkey", "expected sha256//"),
    ("replications:\n  - name: a\n    source: /x\n    destination: rftp://h/y\n    max_delete: 5%\n",
     ":5:17: replications[0].max_delete", "max_delete limits delete"),
    ("replications:\n  - name: a\n    source: /x\n    destination: rftp://h/y\n    filters: [{keep: x}]\n",
     "replications[0].filters[0].keep", "unknown key"),
])
def test_a_bad_job_file_is_refused_with_file_and_line(tmp_path, env, text, where, words):
    job = tmp_path / "job.yaml"
    job.write_text(text)
    r = rftp(env, "sync", "--job", job)
    assert r.returncode == 2, r.stderr
    assert (str(job) + where).encode() in r.stderr or where.encode() in r.stderr, r.stderr
    assert words.encode() in r.stderr, r.stderr


def test_job_options_belong_in_the_file(tmp_path, env):
    job = tmp_path / "job.yaml"
    job.write_text("replications:\n  - {name: a, source: /x, destination: rftp://h/y}\n")
    r = rftp(env, "sync", "--job", job, "--delete")
    assert r.returncode == 2 and b"--delete does not go with --job" in r.stderr, r.stderr
    r = rftp(env, "sync", "--job", job, "/x", "rftp://h/y")
    assert r.returncode == 2 and b"takes no SRC DST" in r.stderr, r.stderr


def test_the_documented_example_job_runs(rftpd, tmp_path, env):
    """conf/rftp-sync-example.yaml, with its hosts and paths made this test's."""
    example = (Path(__file__).parents[2] / "conf" / "rftp-sync-example.yaml").read_text()
    raw = make_dataset(tmp_path / "srv" / "raw", files=6)
    (tmp_path / "srv" / "manifests").mkdir()
    release = make_dataset(rftpd.roots["alice"] / "v3", files=6)
    text = (example.replace("/srv/data", str(tmp_path / "srv"))
            .replace("rftp://mover@archive.example.org", url(rftpd, "").rstrip("/"))
            .replace("rftp://mover@release.example.org", url(rftpd, "").rstrip("/")))
    job = tmp_path / "example.yaml"
    job.write_text(text)
    r = rftp(env, "sync", "--job", job)
    assert r.returncode == 0, r.stderr
    assert tree_digests(rftpd.roots["alice"] / "raw") == tree_digests(raw)
    assert tree_digests(tmp_path / "srv" / "release-v3") == tree_digests(release)
    assert (tmp_path / "srv" / "manifests" / "raw.tsv").exists()


@pytest.mark.parametrize("direction", ["up", "down"])
def test_a_planned_sync_in_shards_moves_each_file_once_then_finishes(rftpd, tmp_path, env, direction):
    local = tmp_path / "local"
    remote = rftpd.roots["alice"] / "set"
    src, dst = (local, remote) if direction == "up" else (remote, local)
    make_dataset(src, files=40)
    (src / "huge.bin").write_bytes(os.urandom(8 * 2**20))
    dst.mkdir()
    (dst / "stale.dat").write_bytes(b"the source no longer has this")
    ends = (local, url(rftpd, "/set")) if direction == "up" else (url(rftpd, "/set"), local)
    plan = tmp_path / "plan.json"
    r = rftp(env, "sync", "--plan-only", "--plan", plan, "--delete", "--exclude", "*.skip", *ends)
    assert r.returncode == 0, r.stderr
    assert b"42 new" in r.stderr, r.stderr
    assert sorted(p.name for p in dst.rglob("*")) == ["stale.dat"]  # planning changed nothing

    total = sum(p.stat().st_size for p in src.rglob("*") if p.is_file())
    moved = 0
    for k in (1, 2, 3):
        r = rftp(env, "--json", "sync", "--plan", plan, "--shard", f"{k}/3")
        assert r.returncode == 0, r.stderr
        moved += summary(r)["bytes"]
        files = summary(r)["files"]
        assert files["ok"] > 0 and files["failed"] == 0
    assert moved == total  # every byte exactly once
    again = rftp(env, "--json", "sync", "--plan", plan, "--shard", "2/3")
    assert again.returncode == 0 and summary(again)["bytes"] == 0, again.stderr
    assert summary(again)["files"]["unchanged"] > 0

    assert (dst / "stale.dat").exists()  # --delete waits for --finish
    r = rftp(env, "--json", "sync", "--plan", plan, "--finish")
    assert r.returncode == 0, r.stderr
    assert summary(r)["files"]["deleted"] == 1
    assert tree_digests(dst) == tree_digests(src)
    assert rftp(env, "check", *ends).returncode == 0


def test_a_plan_keeps_its_list_and_its_local_directory_whatever_the_movers_working_directory(rftpd, tmp_path, env):
    (tmp_path / "work").mkdir()
    src = make_dataset(tmp_path / "work" / "src", files=10)
    listing = tmp_path / "list"
    listing.write_text("a\nbig.bin\n")
    plan = tmp_path / "plan.json"
    r = rftp(env, "sync", "--plan-only", "--plan", plan, "--files-from", listing, "src", url(rftpd, "/part"),
             cwd=tmp_path / "work")
    assert r.returncode == 0, r.stderr
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "src").mkdir(parents=True)  # a tree of the same name in another directory: not this plan's
    for k in (1, 2):
        r = rftp(env, "sync", "--plan", plan, "--shard", f"{k}/2", cwd=elsewhere)
        assert r.returncode == 0, r.stderr
        assert b"not attempted" not in r.stderr, r.stderr
    r = rftp(env, "sync", "--plan", plan, "--finish", cwd=elsewhere)
    assert r.returncode == 0, r.stderr
    assert b"not attempted" not in r.stderr, r.stderr
    want = {k: v for k, v in tree_digests(src).items() if k.startswith("a/") or k == "big.bin"}
    assert tree_digests(rftpd.roots["alice"] / "part") == want


def test_finish_makes_the_empty_directories_no_share_needed(rftpd, tmp_path, env):
    src = make_dataset(tmp_path / "src", files=4)
    (src / "empty" / "deeper").mkdir(parents=True)
    plan = tmp_path / "plan.json"
    assert rftp(env, "sync", "--plan-only", "--plan", plan, src, url(rftpd, "/e")).returncode == 0
    assert rftp(env, "sync", "--plan", plan, "--shard", "1/1").returncode == 0
    assert not (rftpd.roots["alice"] / "e" / "empty").exists()
    assert rftp(env, "sync", "--plan", plan, "--finish").returncode == 0
    assert (rftpd.roots["alice"] / "e" / "empty" / "deeper").is_dir()


def test_finish_refuses_while_a_share_is_missing_and_deletes_nothing(rftpd, tmp_path, env):
    src = make_dataset(tmp_path / "src", files=20)
    dst = rftpd.roots["alice"] / "set"
    dst.mkdir()
    (dst / "stale.dat").write_bytes(b"x")
    plan = tmp_path / "plan.json"
    assert rftp(env, "sync", "--plan-only", "--plan", plan, "--delete", src, url(rftpd, "/set")).returncode == 0
    assert rftp(env, "sync", "--plan", plan, "--shard", "1/2").returncode == 0
    r = rftp(env, "sync", "--plan", plan, "--finish")
    assert r.returncode == 1, r.stderr
    assert b"rerun the shards that failed" in r.stderr and (dst / "stale.dat").exists()
    assert r.stdout.startswith(b"new\t"), r.stdout
    assert rftp(env, "sync", "--plan", plan, "--shard", "2/2").returncode == 0
    assert rftp(env, "sync", "--plan", plan, "--finish").returncode == 0
    assert tree_digests(dst) == tree_digests(src)


def test_planned_options_are_checked(rftpd, tmp_path, env):
    plan = tmp_path / "plan.json"
    src = tmp_path / "s"
    src.mkdir()
    for args, words in [
        (("sync", "--shard", "1/2"), b"give --plan FILE"),
        (("sync", "--plan", plan, "--shard", "1/2", "--delete"), b"give them with --plan-only"),
        (("sync", "--plan", plan, "--shard", "1/2", "--finish"), b"one of them"),
        (("sync", "--plan-only", src, url(rftpd)), b"give it"),
        (("sync", "--plan", plan, src, url(rftpd)), b"goes with --plan-only"),
        (("sync", "--plan", plan, "--shard", "3/2"), b"cannot read the plan"),
    ]:
        r = rftp(env, *args)
        assert r.returncode == 2, (args, r.stderr)
        assert words in r.stderr, (args, r.stderr)
    plan.write_text("{}")
    r = rftp(env, "sync", "--plan", plan, "--shard", "1/2")
    assert r.returncode == 2 and b"is not a plan of this rftp" in r.stderr, r.stderr


@pytest.mark.parametrize("direction", ["up", "down"])
def test_backup_dir_keeps_what_would_be_deleted_or_overwritten(rftpd, tmp_path, env, direction):
    local = tmp_path / "local"
    remote = rftpd.roots["alice"] / "tree"
    src, dst = (local, remote) if direction == "up" else (remote, local)
    (src / "sub").mkdir(parents=True)
    (src / "keep.dat").write_bytes(b"same")
    (src / "sub" / "changed.dat").write_bytes(b"old version")
    (src / "gone.dat").write_bytes(b"deleted at the source")
    ends = (local, url(rftpd, "/tree")) if direction == "up" else (url(rftpd, "/tree"), local)
    assert rftp(env, "sync", *ends).returncode == 0
    (src / "sub" / "changed.dat").write_bytes(b"new version!")
    (src / "gone.dat").unlink()
    r = rftp(env, "--json", "sync", "--delete", "--backup-dir", "old", *ends)
    assert r.returncode == 0, r.stderr
    assert (dst / "sub" / "changed.dat").read_bytes() == b"new version!"
    assert (dst / "old" / "sub" / "changed.dat").read_bytes() == b"old version"
    assert (dst / "old" / "gone.dat").read_bytes() == b"deleted at the source"
    assert not (dst / "gone.dat").exists()
    assert summary(r)["files"]["deleted"] == 1
    # The backup directory inside the destination is no part of the tree: not deleted, not compared.
    r = rftp(env, "--json", "sync", "--delete", "--backup-dir", "old", *ends)
    assert r.returncode == 0 and summary(r)["files"]["deleted"] == 0, r.stderr
    assert rftp(env, "check", "--exclude", "/old/", *ends).returncode == 0
    if direction == "down":  # an absolute DIR inside a top given relative is recognised too
        rel_ends = (url(rftpd, "/tree"), "local")
        r = rftp(env, "--json", "sync", "--delete", "--backup-dir", dst / "old", *rel_ends, cwd=tmp_path)
        assert r.returncode == 0 and summary(r)["files"]["deleted"] == 0, r.stderr


@needs_vsftpd
def test_a_directory_vsftpd_cannot_read_is_no_empty_one_to_delete_after(tmp_path):
    server = VsftpdServer(tmp_path / "ftproot").start()
    anon = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)}
    try:
        src = make_dataset(server.pub / "set", files=10)
        down = tmp_path / "down"
        assert rftp(anon, "sync", server.url("/pub/set"), down).returncode == 0
        os.chmod(src / "a", 0o000)  # the anonymous user can no longer read it
        r = rftp(anon, "--json", "sync", "--delete", server.url("/pub/set"), down)
        assert r.returncode == 5, r.stderr
        assert "could not read the directory" in r.stderr.decode(), r.stderr
        assert events(r, "delete") == [] and (down / "a" / "f001.dat").exists()
    finally:
        os.chmod(server.pub / "set" / "a", 0o755)
        server.stop()


@needs_vsftpd
def test_checksum_against_a_server_without_hash_says_so_before_anything_moves(tmp_path):
    server = VsftpdServer(tmp_path / "ftproot").start()
    anon = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)}
    try:
        src = make_dataset(tmp_path / "src", files=4)
        assert rftp(anon, "sync", src, server.url("/pub/set")).returncode == 0
        before = tree_state(server.pub / "set")
        (src / "f000.dat").write_bytes(b"x" * (src / "f000.dat").stat().st_size)
        r = rftp(anon, "sync", "--compare", "checksum", src, server.url("/pub/set"))
        assert r.returncode == 5 and b"needs the server's HASH SHA-256" in r.stderr, r.stderr
        assert tree_state(server.pub / "set") == before
    finally:
        server.stop()


def test_a_share_sends_again_a_file_left_in_place_without_its_time(rftpd, tmp_path, env):
    """An attempt cut between the rename into place and MFMT leaves the whole
    file there with the server's time: the rerun must send it again (-c would
    take it as complete), or --finish would wait for it for ever."""
    src = make_dataset(tmp_path / "src", files=6)
    os.utime(src / "big.bin", (OLD, OLD))
    plan = tmp_path / "plan.json"
    assert rftp(env, "sync", "--plan-only", "--plan", plan, src, url(rftpd, "/cut")).returncode == 0
    dst = rftpd.roots["alice"] / "cut"
    dst.mkdir()
    shutil.copyfile(src / "big.bin", dst / "big.bin")  # the bytes, without the source's time
    r = rftp(env, "--json", "sync", "--plan", plan, "--shard", "1/1")
    assert r.returncode == 0, r.stderr
    assert str(src / "big.bin") in {e["local"] for e in events(r, "file")}
    assert rftp(env, "sync", "--plan", plan, "--finish").returncode == 0
    assert_same_times(src, dst)
