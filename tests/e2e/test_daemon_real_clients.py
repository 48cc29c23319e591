"""rftpd driven by the FTP clients people actually use: curl and lftp, run as
real processes. Every test checks the effect on disk (bytes under the user's
root, SHA-256 equality, names in listings), not only exit codes."""

import hashlib
import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import PASSWORDS

CLIENT_TIMEOUT = 60


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def url(d, path=""):
    return f"ftp://127.0.0.1:{d.port}/{path}"


def curl(d, *args, user="alice", check=True):
    """Runs curl against the daemon; -v output lands in stderr for protocol checks."""
    cmd = ["curl", "-sS", "-v", "--max-time", "30", "--user", f"{user}:{PASSWORDS[user]}", *args]
    p = subprocess.run(cmd, capture_output=True, timeout=CLIENT_TIMEOUT)
    if check:
        assert p.returncode == 0, f"curl {args} exited {p.returncode}:\n{p.stderr.decode(errors='replace')}"
    return p


def sent_commands(curl_stderr: bytes) -> list[str]:
    """The FTP commands curl sent, from its -v trace ("> CMD arg")."""
    return [l[2:] for l in curl_stderr.decode(errors="replace").splitlines() if l.startswith("> ")]


def lftp(d, script, cwd, user="alice", check=True):
    """Runs lftp non-interactively; cmd:fail-exit makes any failing command end
    the run with a non-zero status, so a refused step cannot hide."""
    settings = ("set cmd:fail-exit yes; set ftp:ssl-allow no; set net:max-retries 1; "
                "set net:timeout 10; set net:reconnect-interval-base 1; set xfer:clobber yes")
    cmd = ["lftp", "-u", f"{user},{PASSWORDS[user]}", "-p", str(d.port), "-e", f"{settings}; {script}; bye",
           "127.0.0.1"]
    p = subprocess.run(cmd, capture_output=True, timeout=CLIENT_TIMEOUT, cwd=cwd, stdin=subprocess.DEVNULL)
    if check:
        assert p.returncode == 0, (f"lftp `{script}` exited {p.returncode}:\n{p.stdout.decode(errors='replace')}\n"
                                   f"{p.stderr.decode(errors='replace')}\n--- daemon log ---\n{d.log()[-3000:]}")
    return p


def tree(root: Path) -> dict[str, bytes]:
    """Every regular file under root, by relative path, with its bytes."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def no_partial_files(root: Path) -> bool:
    return not any(p.name.endswith(".rftp-part") for p in root.rglob("*"))


# ---------------------------------------------------------------- curl


def test_curl_upload_and_download(rftpd, tmp_path):
    data = os.urandom(1_500_000)
    src = tmp_path / "src.bin"
    src.write_bytes(data)
    curl(rftpd, "-T", str(src), url(rftpd, "up.bin"))
    assert sha256((rftpd.roots["alice"] / "up.bin").read_bytes()) == sha256(data)
    assert no_partial_files(rftpd.roots["alice"])

    out = tmp_path / "down.bin"
    curl(rftpd, "-o", str(out), url(rftpd, "up.bin"))
    assert sha256(out.read_bytes()) == sha256(data)


def test_curl_download_of_missing_file_fails_and_writes_nothing_useful(rftpd, tmp_path):
    out = tmp_path / "missing.bin"
    p = curl(rftpd, "-o", str(out), url(rftpd, "nothere.bin"), check=False)
    assert p.returncode == 78  # CURLE_REMOTE_FILE_NOT_FOUND: the server said 550
    assert not out.exists() or out.read_bytes() == b""


def test_curl_creates_missing_directories(rftpd, tmp_path):
    src = tmp_path / "f.txt"
    src.write_bytes(b"deep file\n")
    curl(rftpd, "--ftp-create-dirs", "-T", str(src), url(rftpd, "a/b/c/f.txt"))
    assert (rftpd.roots["alice"] / "a" / "b" / "c" / "f.txt").read_bytes() == b"deep file\n"


def test_curl_resumes_a_download(rftpd, tmp_path):
    data = os.urandom(2_000_000)
    (rftpd.roots["alice"] / "r.bin").write_bytes(data)
    out = tmp_path / "r.bin"
    out.write_bytes(data[:700_001])
    p = curl(rftpd, "-C", "-", "-o", str(out), url(rftpd, "r.bin"))
    assert "REST 700001" in sent_commands(p.stderr)
    assert sha256(out.read_bytes()) == sha256(data)


def test_curl_resumes_an_upload_with_size_and_appe(rftpd, tmp_path):
    data = os.urandom(1_800_000)
    # A first attempt got this far and was renamed into place (e.g. by a client
    # that uploads in pieces); curl asks SIZE and appends the rest with APPE.
    (rftpd.roots["alice"] / "u.bin").write_bytes(data[:600_000])
    src = tmp_path / "u.bin"
    src.write_bytes(data)
    p = curl(rftpd, "-C", "-", "-T", str(src), url(rftpd, "u.bin"))
    cmds = sent_commands(p.stderr)
    assert "SIZE u.bin" in cmds and "APPE u.bin" in cmds
    assert sha256((rftpd.roots["alice"] / "u.bin").read_bytes()) == sha256(data)
    assert no_partial_files(rftpd.roots["alice"])


def test_curl_name_listing(rftpd):
    root = rftpd.roots["alice"]
    (root / "dir").mkdir()
    for name in ("one.txt", "two words.txt", "three"):
        (root / "dir" / name).write_bytes(b"x")
    (root / "dir" / "sub").mkdir()
    p = curl(rftpd, "-l", url(rftpd, "dir/"))
    assert sorted(p.stdout.decode().splitlines()) == ["one.txt", "sub", "three", "two words.txt"]
    # A full listing (LIST) shows the directory marker and the sizes.
    p = curl(rftpd, url(rftpd, "dir/"))
    lines = p.stdout.decode().splitlines()
    assert any(l.startswith("d") and l.endswith(" sub") for l in lines)
    assert any(l.startswith("-") and l.endswith(" two words.txt") for l in lines)


@pytest.mark.parametrize("flag,verb", [("--ftp-pasv", "EPSV"), ("--disable-epsv", "PASV")])
def test_curl_passive_modes(rftpd, tmp_path, flag, verb):
    data = os.urandom(300_000)
    (rftpd.roots["alice"] / "p.bin").write_bytes(data)
    out = tmp_path / "p.bin"
    p = curl(rftpd, flag, "-o", str(out), url(rftpd, "p.bin"))
    assert verb in sent_commands(p.stderr)
    assert out.read_bytes() == data


def test_curl_quote_commands_change_the_tree(rftpd, tmp_path):
    root = rftpd.roots["alice"]
    (root / "old.txt").write_bytes(b"renamed")
    (root / "gone.txt").write_bytes(b"deleted")
    p = curl(rftpd, "-Q", "MKD made", "-Q", "RNFR old.txt", "-Q", "RNTO made/new.txt", "-Q", "DELE gone.txt",
             "-l", url(rftpd))
    assert (root / "made" / "new.txt").read_bytes() == b"renamed"
    assert not (root / "old.txt").exists() and not (root / "gone.txt").exists()
    assert sorted(p.stdout.decode().splitlines()) == ["made"]
    # A quote command the server refuses fails the whole run (curl exit 21).
    p = curl(rftpd, "-Q", "DELE nothere.txt", "-l", url(rftpd), check=False)
    assert p.returncode == 21
    assert "550" in p.stderr.decode(errors="replace")


def test_curl_active_mode_is_refused_by_default(rftpd, tmp_path):
    (rftpd.roots["alice"] / "a.bin").write_bytes(b"active")
    out = tmp_path / "a.bin"
    p = curl(rftpd, "--ftp-port", "127.0.0.1", "-o", str(out), url(rftpd, "a.bin"), check=False)
    assert p.returncode == 30  # CURLE_FTP_PORT_FAILED
    err = p.stderr.decode(errors="replace")
    assert re.search(r"^< 502 ", err, re.M), err
    assert not out.exists() or out.read_bytes() == b""


def test_curl_active_mode_works_when_enabled(rftpd_factory, tmp_path):
    d = rftpd_factory("active_mode: true\n")
    data = os.urandom(400_000)
    (d.roots["alice"] / "a.bin").write_bytes(data)
    out = tmp_path / "a.bin"
    p = curl(d, "--ftp-port", "127.0.0.1", "-o", str(out), url(d, "a.bin"))
    assert any(c.startswith(("EPRT", "PORT")) for c in sent_commands(p.stderr))
    assert out.read_bytes() == data


# ---------------------------------------------------------------- lftp


def test_lftp_put_get_and_listings(rftpd, tmp_path):
    data = os.urandom(900_000)
    (tmp_path / "local.bin").write_bytes(data)
    p = lftp(rftpd, "put local.bin -o remote.bin; cls -1; ls; get remote.bin -o back.bin", tmp_path)
    assert (rftpd.roots["alice"] / "remote.bin").read_bytes() == data
    assert (tmp_path / "back.bin").read_bytes() == data
    out = p.stdout.decode()
    assert "remote.bin\n" in out  # cls -1
    assert re.search(r"^-.* 900000 .*remote\.bin$", out, re.M), out  # ls
    assert no_partial_files(rftpd.roots["alice"])


def test_lftp_mirror_reverse_then_forward(rftpd, tmp_path):
    local = tmp_path / "tree"
    files = {
        "top.txt": b"top\n",
        "a/one.bin": os.urandom(70_000),
        "a/b/two.bin": os.urandom(150_001),
        "a/b/c/empty": b"",
        "x y/space name.txt": b"spaces are fine\n",
    }
    for rel, content in files.items():
        (local / rel).parent.mkdir(parents=True, exist_ok=True)
        (local / rel).write_bytes(content)
    (local / "empty-dir").mkdir()

    lftp(rftpd, "mirror -R tree up", tmp_path)
    remote = rftpd.roots["alice"] / "up"
    assert tree(remote) == files
    assert (remote / "empty-dir").is_dir()
    assert no_partial_files(remote)

    lftp(rftpd, "mirror up down", tmp_path)
    assert tree(tmp_path / "down") == files
    assert (tmp_path / "down" / "empty-dir").is_dir()


def test_lftp_mkdir_mv_rm(rftpd, tmp_path):
    root = rftpd.roots["alice"]
    (root / "f.txt").write_bytes(b"move me")
    (root / "del.txt").write_bytes(b"delete me")
    p = lftp(rftpd, "mkdir -p d1/d2; mv f.txt d1/d2/g.txt; rm del.txt; cls -1 d1/d2/", tmp_path)
    assert (root / "d1" / "d2" / "g.txt").read_bytes() == b"move me"
    assert sorted(os.listdir(root)) == ["d1"]
    assert "g.txt" in p.stdout.decode()
    lftp(rftpd, "rm d1/d2/g.txt; rmdir d1/d2; rmdir d1", tmp_path)
    assert os.listdir(root) == []
    # Removing what is not there fails the run: lftp saw the 550.
    p = lftp(rftpd, "rm nothere.txt", tmp_path, check=False)
    assert p.returncode != 0


def test_lftp_segmented_download(rftpd, tmp_path):
    data = os.urandom(4 * 1024 * 1024 + 123)
    (rftpd.roots["alice"] / "big.bin").write_bytes(data)
    # A rate limit per connection keeps the first segment from finishing
    # before the other sessions have logged in.
    lftp(rftpd, "set pget:min-chunk-size 256k; set net:limit-rate 1M; pget -n 4 big.bin -o seg.bin", tmp_path)
    assert sha256((tmp_path / "seg.bin").read_bytes()) == sha256(data)
    # pget really used several sessions, each starting with REST somewhere.
    rests = set(re.findall(r"command=REST argument=\"?(\d+)", rftpd.log()))
    assert len(rests - {"0"}) >= 2, rests


def test_lftp_resumes_put_and_get(rftpd, tmp_path):
    data = os.urandom(1_200_000)
    (tmp_path / "whole.bin").write_bytes(data)
    # Upload resume: the remote holds a prefix; put -c sends only the rest.
    (rftpd.roots["alice"] / "whole.bin").write_bytes(data[:400_000])
    lftp(rftpd, "put -c whole.bin", tmp_path)
    assert sha256((rftpd.roots["alice"] / "whole.bin").read_bytes()) == sha256(data)
    assert no_partial_files(rftpd.roots["alice"])
    # Download resume: the local file holds a prefix; get -c fetches the rest.
    (tmp_path / "dl").mkdir()
    (tmp_path / "dl" / "whole.bin").write_bytes(data[:333_333])
    lftp(rftpd, "lcd dl; get -c whole.bin", tmp_path)
    assert sha256((tmp_path / "dl" / "whole.bin").read_bytes()) == sha256(data)
    assert re.search(r"command=REST argument=\"?333333", rftpd.log())
    assert re.search(r"command=REST argument=\"?400000", rftpd.log())


def test_lftp_quote_hash(rftpd, tmp_path):
    data = os.urandom(77_777)
    (rftpd.roots["alice"] / "h.bin").write_bytes(data)
    p = lftp(rftpd, "quote HASH h.bin", tmp_path)
    assert f"213 SHA-256 0-77777 {sha256(data)} /h.bin" in p.stdout.decode(), p.stdout


def test_lftp_read_only_user_cannot_upload(rftpd, tmp_path):
    (tmp_path / "x.txt").write_bytes(b"x")
    p = lftp(rftpd, "put x.txt", tmp_path, user="bob", check=False)
    assert p.returncode != 0
    assert os.listdir(rftpd.roots["bob"]) == []
