"""The lab guest keeps each process's vector registers: four processes
hold different values in AVX registers across thousands of system calls
and switches between them (fp_state_check.c). Every guest system call
takes its registers from the host and puts them back, through a buffer
of the host's XSAVE size (tests/rdma/lab/patches)."""

import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_processes_keep_their_avx_registers_across_switches(tmp_path):
    exe = tmp_path / "fp_state_check"
    subprocess.run(["gcc", "-O1", "-Wall", "-o", str(exe), str(HERE / "fp_state_check.c")], check=True, timeout=120)
    procs = [subprocess.Popen([str(exe), str(seed)], stdout=subprocess.PIPE, text=True) for seed in (1, 7, 13, 29)]
    results = [(p.wait(timeout=300), p.stdout.read()) for p in procs]
    assert results == [(0, "")] * 4, results
