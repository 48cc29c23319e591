"""The measured tests: TCP and tmpfs limits, big-file downloads and uploads
with rftp and with vsftpd+curl, and many small files both ways."""

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from . import data
from .measure import Sample, measure


@dataclass
class Test:
    id: str
    kind: str        # "limit-net", "limit-disk", "get", "put", "mem", "small-put", "small-get"
    tool: str        # what ran, for the table
    run: Callable[[int], Sample]   # rep number -> sample


@dataclass
class Env:
    """Everything a test needs: paths, servers, sizes and the source digest."""
    build: Path
    root: Path            # both servers' root; holds big.bin and small/
    work: Path            # scratch outside the servers' roots
    size: int
    small_count: int
    small_size: int
    big_sha: str
    rftpd: object
    vsftpd: object
    iperf: object
    iperf_secs: int
    multi_put: bool       # rftp put FILE... URL/dir/ -j N exists
    multi_get: bool       # rftp get -r URL/dir/ LOCALDIR -j N exists
    jobs: int = 4

    @property
    def big(self) -> Path:
        return self.root / "big.bin"

    @property
    def small(self) -> Path:
        return self.root / "small"

    def rftp(self) -> list[str]:
        return [str(self.build / "rftp"), "--no-progress", "-q"]

    def client_env(self) -> dict:
        return dict(os.environ, RFTP_PASSWORD=self.rftpd.password)


def _no_server() -> float:
    return 0.0


# ----------------------------------------------------------------- limits
def iperf3_test(env: Env, zerocopy: bool) -> Test:
    def run(rep: int) -> Sample:
        argv = ["iperf3", "-c", "127.0.0.1", "-p", str(env.iperf.port), "-t", str(env.iperf_secs), "-J"]
        if zerocopy:
            argv.append("-Z")
        sample, [r] = measure(env.iperf.cpu_seconds, [argv])
        if not sample.error:
            end = json.loads(r.stdout)["end"]
            sample.bytes = int(end["sum_received"]["bytes"])
            # iperf3's own interval excludes its start-up; use it for the rate.
            sample.extra["rate"] = end["sum_received"]["bits_per_second"] / 8
        return sample
    return Test(f"iperf3 -P1{' -Z' if zerocopy else ''}", "limit-net",
                f"iperf3{' -Z (sendfile)' if zerocopy else ''}, {env.iperf_secs} s", run)


def dd_tmpfs_write_test(env: Env) -> Test:
    out = env.work / "dd.out"

    def run(rep: int) -> Sample:
        out.unlink(missing_ok=True)
        sample, _ = measure(_no_server, [["dd", f"if={env.big}", f"of={out}", "bs=1M", "status=none"]])
        if not sample.error:
            sample.error = data.check_file(out, env.size, None)
            sample.bytes = env.size
        out.unlink(missing_ok=True)
        return sample
    return Test("dd tmpfs write", "limit-disk", "dd bs=1M tmpfs file -> new tmpfs file", run)


# ----------------------------------------------------------------- big file
def _rftp_summary(stdout: str) -> dict:
    for line in reversed(stdout.splitlines()):
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("event") == "summary":
            return event
    return {}


def _rftp_summary_run(env: Env, argv: list[str]) -> Sample:
    """One rftp run whose JSON summary must say ok and env.size bytes."""
    sample, [r] = measure(env.rftpd.cpu_seconds, [argv], env=env.client_env())
    summary = _rftp_summary(r.stdout)
    if not sample.error:
        if summary.get("result") != "ok" or summary.get("bytes") != env.size:
            sample.error = f"rftp summary says {summary}, want {env.size} bytes ok"
        sample.bytes = env.size
    sample.extra["streams_used"] = summary.get("streams")
    return sample


def rftp_get_test(env: Env, streams: int) -> Test:
    def run(rep: int) -> Sample:
        return _rftp_summary_run(env, env.rftp() + ["--json", "get", "-P", str(streams), env.rftpd.url("big.bin"),
                                                    "/dev/null"])
    return Test(f"rftp get -P{streams}", "get", f"rftp -P {streams} -> /dev/null", run)


def rftp_put_test(env: Env, streams: int) -> Test:
    updir = env.root / "up"

    def run(rep: int) -> Sample:
        data.empty_dir(updir)
        argv = env.rftp() + ["--json", "put", "-P", str(streams), str(env.big), env.rftpd.url("up/")]
        sample, [r] = measure(env.rftpd.cpu_seconds, [argv], env=env.client_env())
        summary = _rftp_summary(r.stdout)
        if not sample.error:
            sample.error = data.check_file(updir / "big.bin", env.size, env.big_sha if rep == 0 else None)
            sample.bytes = env.size
        sample.extra["streams_used"] = summary.get("streams")
        data.empty_dir(updir)
        return sample
    return Test(f"rftp put -P{streams}", "put", f"rftp -P {streams} -> new tmpfs file", run)


def rftp_memory_test(env: Env, streams: int) -> Test:
    """/dev/zero to rftpd's /dev/null: no disk and no file on either side,
    so the row is the protocol, its checksums and TCP alone."""
    def run(rep: int) -> Sample:
        return _rftp_summary_run(env, env.rftp() + ["--json", "put", "-P", str(streams), "--size", str(env.size),
                                                    "/dev/zero", env.rftpd.url("dev/null")])
    return Test(f"rftp mem->mem -P{streams}", "mem", f"rftp put -P {streams} /dev/zero -> /dev/null", run)


def curl_get_test(env: Env) -> Test:
    def run(rep: int) -> Sample:
        argv = ["curl", "-sS", "--fail", "-o", "/dev/null", "-w", "%{size_download}\n",
                env.vsftpd.url("big.bin")]
        sample, [r] = measure(env.vsftpd.cpu_seconds, [argv])
        if not sample.error:
            got = int(r.stdout.split()[-1])
            sample.error = "" if got == env.size else f"curl got {got} bytes, want {env.size}"
            sample.bytes = env.size
        return sample
    return Test("vsftpd+curl get", "get", "vsftpd (sendfile) + curl -> /dev/null", run)


def curl_put_test(env: Env) -> Test:
    pub = env.root / "pub"

    def run(rep: int) -> Sample:
        data.empty_dir(pub, 0o777)
        argv = ["curl", "-sS", "--fail", "-T", str(env.big), "-w", "%{size_upload}\n",
                env.vsftpd.url("pub/")]
        sample, _ = measure(env.vsftpd.cpu_seconds, [argv])
        if not sample.error:
            sample.error = data.check_file(pub / "big.bin", env.size, env.big_sha if rep == 0 else None)
            sample.bytes = env.size
        data.empty_dir(pub, 0o777)
        return sample
    return Test("vsftpd+curl put", "put", "curl -T -> vsftpd -> new tmpfs file", run)


# ----------------------------------------------------------------- small files
def _small_sources(env: Env) -> list[str]:
    return [str(env.small / data.small_name(i)) for i in range(env.small_count)]


def rftp_small_put_test(env: Env) -> Test:
    updir = env.root / "up-small"

    def run(rep: int) -> Sample:
        data.empty_dir(updir)
        url = env.rftpd.url("up-small/")
        if env.multi_put:
            clients, workers = [env.rftp() + ["put", "-j", str(env.jobs)] + _small_sources(env) + [url]], 1
        else:
            clients, workers = [env.rftp() + ["put", f, url] for f in _small_sources(env)], env.jobs
        sample, _ = measure(env.rftpd.cpu_seconds, clients, workers, env.client_env())
        if not sample.error:
            sample.error = data.check_tree(updir, env.small, env.small_count, env.small_size, rep == 0)
        sample.bytes, sample.files = env.small_count * env.small_size, env.small_count
        data.empty_dir(updir)
        return sample
    how = f"rftp put FILE... -j {env.jobs}" if env.multi_put else \
        f"one rftp put per file, {env.jobs} at a time"
    return Test("rftp small put", "small-put", how, run)


def rftp_small_get_test(env: Env) -> Test:
    local = env.work / "dl-small"

    def run(rep: int) -> Sample:
        data.empty_dir(local)
        if env.multi_get:
            clients = [env.rftp() + ["get", "-r", "-j", str(env.jobs), env.rftpd.url("small/"), str(local)]]
            workers = 1
        else:
            clients = [env.rftp() + ["get", env.rftpd.url(f"small/{data.small_name(i)}"), str(local) + "/"]
                       for i in range(env.small_count)]
            workers = env.jobs
        sample, _ = measure(env.rftpd.cpu_seconds, clients, workers, env.client_env())
        if not sample.error:
            got = local
            # `get -r URL/small/ LOCAL` may create LOCAL/small/; accept either layout.
            if env.multi_get and (local / "small").is_dir():
                got = local / "small"
            sample.error = data.check_tree(got, env.small, env.small_count, env.small_size, rep == 0)
        sample.bytes, sample.files = env.small_count * env.small_size, env.small_count
        data.empty_dir(local)
        return sample
    how = f"rftp get -r -j {env.jobs}" if env.multi_get else f"one rftp get per file, {env.jobs} at a time"
    return Test("rftp small get", "small-get", how, run)


def _curl_glob(env: Env) -> str:
    last = env.small_count - 1
    return f"f[0000-{last:04d}].bin"


def curl_small_put_test(env: Env) -> Test:
    pub = env.root / "pub"

    def run(rep: int) -> Sample:
        data.empty_dir(pub, 0o777)
        argv = ["curl", "-sS", "--fail", "--parallel", "--parallel-max", str(env.jobs),
                "-T", str(env.small / _curl_glob(env)), env.vsftpd.url("pub/")]
        sample, _ = measure(env.vsftpd.cpu_seconds, [argv])
        if not sample.error:
            sample.error = data.check_tree(pub, env.small, env.small_count, env.small_size, rep == 0)
        sample.bytes, sample.files = env.small_count * env.small_size, env.small_count
        data.empty_dir(pub, 0o777)
        return sample
    return Test("vsftpd+curl small put", "small-put", f"one curl -T glob --parallel-max {env.jobs}", run)


def curl_small_get_test(env: Env) -> Test:
    local = env.work / "dl-small"

    def run(rep: int) -> Sample:
        data.empty_dir(local)
        argv = ["curl", "-sS", "--fail", "--parallel", "--parallel-max", str(env.jobs),
                env.vsftpd.url("small/" + _curl_glob(env)), "-o", str(local / "f#1.bin")]
        sample, _ = measure(env.vsftpd.cpu_seconds, [argv])
        if not sample.error:
            sample.error = data.check_tree(local, env.small, env.small_count, env.small_size, rep == 0)
        sample.bytes, sample.files = env.small_count * env.small_size, env.small_count
        data.empty_dir(local)
        return sample
    return Test("vsftpd+curl small get", "small-get", f"one curl URL glob --parallel-max {env.jobs}", run)


# ----------------------------------------------------------------- one session
SESSIONS = 5


def rftp_session_test(env: Env) -> Test:
    """What one connection + login + listing of an empty directory costs: the
    fixed price every rftp invocation (and every -j session) pays."""
    def run(rep: int) -> Sample:
        argv = env.rftp() + ["ls", env.rftpd.url("empty/")]
        sample, _ = measure(env.rftpd.cpu_seconds, [argv] * SESSIONS, env=env.client_env())
        sample.files = SESSIONS
        return sample
    return Test("rftp session", "session", f"rftp ls of an empty dir, {SESSIONS} times in a row", run)


def curl_session_test(env: Env) -> Test:
    def run(rep: int) -> Sample:
        argv = ["curl", "-sS", "--fail", "-o", "/dev/null", env.vsftpd.url("empty/")]
        sample, _ = measure(env.vsftpd.cpu_seconds, [argv] * SESSIONS)
        sample.files = SESSIONS
        return sample
    return Test("vsftpd+curl session", "session", f"curl LIST of an empty dir, {SESSIONS} times in a row", run)


def all_tests(env: Env) -> list[Test]:
    return [
        iperf3_test(env, False), iperf3_test(env, True), dd_tmpfs_write_test(env),
        rftp_get_test(env, 1), rftp_get_test(env, 4), curl_get_test(env),
        rftp_put_test(env, 1), rftp_put_test(env, 4), curl_put_test(env),
        rftp_memory_test(env, 1), rftp_memory_test(env, 4),
        rftp_small_put_test(env), curl_small_put_test(env),
        rftp_small_get_test(env), curl_small_get_test(env),
        rftp_session_test(env), curl_session_test(env),
    ]


def rftp_supports(build: Path, option: str) -> bool:
    """Whether `rftp --help` lists option (the multi-file options are global)."""
    out = subprocess.run([str(build / "rftp"), "--help"], capture_output=True, text=True)
    return option in out.stdout
