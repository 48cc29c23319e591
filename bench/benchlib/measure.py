"""Running one client command and measuring it: wall time, the client's CPU
(os.wait4 rusage, summed over every process when a test runs many), the
server's CPU (delta of its CPU group) and the rest of the machine's CPU."""

import os
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from .cpu import machine_busy_seconds, rusage_seconds


@dataclass
class Sample:
    wall: float = 0.0
    client_cpu: float = 0.0
    server_cpu: float = 0.0
    others_cpu: float = 0.0     # CPU used by everything else on the machine meanwhile
    bytes: int = 0              # payload moved, as checked by the harness
    files: int = 0
    error: str = ""             # empty when the run was correct
    extra: dict = field(default_factory=dict)


@dataclass
class ClientRun:
    returncode: int
    cpu: float
    stdout: str
    stderr: str


def run_client(argv: list[str], env: dict | None = None) -> ClientRun:
    """Runs argv to completion; its CPU comes from wait4, so nothing else may reap it."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                env=env)
        _, status, rusage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return ClientRun(proc.returncode, rusage_seconds(rusage),
                         out.read().decode(errors="replace"), err.read().decode(errors="replace"))


def measure(server_cpu, clients: list[list[str]], workers: int = 1,
            env: dict | None = None) -> tuple[Sample, list[ClientRun]]:
    """Runs the client commands (at most `workers` at a time) and measures them
    as one transfer. server_cpu() returns the server's cumulative CPU seconds."""
    s0, m0, t0 = server_cpu(), machine_busy_seconds(), time.monotonic()
    if workers == 1:
        runs = [run_client(argv, env) for argv in clients]
    else:
        with ThreadPoolExecutor(workers) as pool:
            runs = list(pool.map(lambda a: run_client(a, env), clients))
    t1 = time.monotonic()
    # Let the server finish bookkeeping for the last transfer (close, rename)
    # that may trail the client's exit by a moment.
    time.sleep(0.05)
    s1, m1 = server_cpu(), machine_busy_seconds()
    sample = Sample(wall=t1 - t0, client_cpu=sum(r.cpu for r in runs), server_cpu=s1 - s0)
    sample.others_cpu = max(0.0, (m1 - m0) - sample.client_cpu - sample.server_cpu)
    failed = [r for r in runs if r.returncode != 0]
    if failed:
        sample.error = f"{len(failed)} of {len(runs)} client runs failed, first: exit " \
                       f"{failed[0].returncode}: {failed[0].stderr.strip()[:300]}"
    return sample, runs
