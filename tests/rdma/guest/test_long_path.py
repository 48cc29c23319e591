"""A long path over TCP (docs/config.md, "Long paths: windows"): without
-P on the guest's one CPU a large file takes one stream (more streams
take the path's size on two CPUs or more: tests/e2e/test_long_paths.py); a
file whose streams' windows cannot hold the round trip says so, with what
would fill it; a short path says nothing. netem on the guest's
loopback, which every packet between the lab's addresses crosses, makes
the path long; the file is compared by digest."""

import hashlib
import os
import subprocess

from conftest import lab_devices, rftp, url

MiB = 1 << 20


def set_delay(ms_each_way: float):
    if ms_each_way == 0:
        subprocess.run(["tc", "qdisc", "del", "dev", "lo", "root"], capture_output=True)
        return
    subprocess.run(["tc", "qdisc", "replace", "dev", "lo", "root", "netem", "delay", f"{ms_each_way}ms",
                    "limit", "100000"], check=True)


def fetch(daemon, tmp_path, name, *extra):
    """(streams, notes) of a TCP get of name, once its digest is checked."""
    addr = lab_devices()[0][1]
    out = tmp_path / f"{name}.{len(extra)}"
    _, summary = rftp("--transport", "tcp", *extra, "get", url(addr, name), str(out))
    assert hashlib.sha256(out.read_bytes()).digest() == hashlib.sha256((daemon.root / name).read_bytes()).digest()
    return summary["streams"], " ".join(summary.get("notes", []))


def test_a_large_file_on_a_long_path_says_what_would_fill_it(daemon, tmp_path):
    (daemon.root / "large.bin").write_bytes(os.urandom(24 * MiB))  # three blocks of 8 MiB
    streams, notes = fetch(daemon, tmp_path, "large.bin")
    assert streams == 1 and "round trip" not in notes, notes  # the lab's own path: well under a millisecond
    set_delay(25)
    try:
        # 50 ms at 10 Gb/s is 62.5 MB in flight: twenty windows of 3 MiB
        # (the guest's tcp_rmem ceiling is Linux's default), so the bound, 16.
        # Without -P the guest's one CPU takes one stream; the sysctls would
        # fill the path.
        streams, notes = fetch(daemon, tmp_path, "large.bin")
        assert len(os.sched_getaffinity(0)) == 1 and streams == 1, notes
        assert "the round trip to the server is 5" in notes and "raise net.ipv4.tcp_rmem" in notes, notes
        assert "try -P" not in notes, notes
        streams, notes = fetch(daemon, tmp_path, "large.bin", "-P", "2")
        assert streams == 2 and "2 TCP streams of at most 3 MiB" in notes, notes
        assert "try -P 16" in notes, notes
        # A small file fits one block: nothing to say.
        (daemon.root / "small.bin").write_bytes(os.urandom(MiB))
        assert "round trip" not in fetch(daemon, tmp_path, "small.bin")[1]
    finally:
        set_delay(0)
