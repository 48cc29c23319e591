"""A long path over TCP (docs/config.md, "Long paths: windows"): without
-P, rftp sizes a large file's streams to the control connection's round
trip. netem on the guest's loopback, which every packet between the lab's
addresses crosses, makes the path long; the file is compared by digest."""

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
    addr = lab_devices()[0][1]
    out = tmp_path / f"{name}.{len(extra)}"
    _, summary = rftp("--transport", "tcp", *extra, "get", url(addr, name), str(out))
    assert hashlib.sha256(out.read_bytes()).digest() == hashlib.sha256((daemon.root / name).read_bytes()).digest()
    return summary["streams"]


def test_a_large_file_takes_more_streams_on_a_long_path_unless_p_says(daemon, tmp_path):
    (daemon.root / "large.bin").write_bytes(os.urandom(24 * MiB))  # three blocks of 8 MiB
    assert fetch(daemon, tmp_path, "large.bin") == 1  # the lab's own path: well under a millisecond
    set_delay(25)
    try:
        # 50 ms at 10 Gb/s is 62.5 MB in flight: twenty windows of 3 MiB
        # (the guest's tcp_rmem ceiling is Linux's default), so the bound, 8.
        assert fetch(daemon, tmp_path, "large.bin") == 8
        assert fetch(daemon, tmp_path, "large.bin", "-P", "2") == 2
    finally:
        set_delay(0)
