"""A real single-node Slurm cluster for the tests, from Debian's packages:
munged, slurmctld and slurmd in the foreground, their keys, state, logs and
config in one temporary directory, on loopback and ports of their own, so a
test can sbatch an array job, wait for it, and scancel a task. Nothing
outside the directory is touched; stop() ends every process it started
(and the jobs first)."""

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

from conftest import free_port

PROGRAMS = ("munged", "mungekey", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "scancel")


def available() -> bool:
    return os.geteuid() == 0 and all(shutil.which(p) for p in PROGRAMS)


class SlurmCluster:
    def __init__(self, workdir: Path):
        self.dir = workdir
        self.dir.mkdir(parents=True, exist_ok=True)
        self.procs = []
        self.host = socket.gethostname().split(".")[0]
        self.env = dict(os.environ, SLURM_CONF=str(self.dir / "slurm.conf"))

    def _write_config(self):
        d = self.dir
        (d / "state").mkdir(exist_ok=True)
        (d / "spool").mkdir(exist_ok=True)
        cpus = os.cpu_count() or 1
        (d / "slurm.conf").write_text(f"""ClusterName=rftptest
SlurmctldHost={self.host}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={d / "munge.sock"}
CredType=cred/munge
StateSaveLocation={d / "state"}
SlurmdSpoolDir={d / "spool"}
SlurmctldPidFile={d / "slurmctld.pid"}
SlurmdPidFile={d / "slurmd.pid"}
SlurmctldLogFile={d / "slurmctld.log"}
SlurmdLogFile={d / "slurmd.log"}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MinJobAge=3600
NodeName=rftpnode NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN
PartitionName=rftp Nodes=ALL Default=YES MaxTime=INFINITE State=UP
""")

    def start(self):
        d = self.dir
        try:
            subprocess.run(["mungekey", "-c", "-k", str(d / "munge.key")], check=True, capture_output=True)
            os.chmod(d / "munge.key", 0o600)
            self._spawn("munged", ["munged", "-F", "-f", f"--socket={d / 'munge.sock'}", f"--key-file={d / 'munge.key'}",
                                   f"--log-file={d / 'munged.log'}", f"--pid-file={d / 'munged.pid'}",
                                   f"--seed-file={d / 'munged.seed'}"])
            self._wait_for(lambda: (d / "munge.sock").exists(), "munged's socket")
            self._write_config()
            self._spawn("slurmctld", ["slurmctld", "-D", "-i"])
            self._spawn("slurmd", ["slurmd", "-D", "-N", "rftpnode"])
            self._wait_for(self._node_idle, "the node to be idle")
        except BaseException:
            self.stop()
            raise
        return self

    def _spawn(self, name, argv):
        log = open(self.dir / f"{name}.out", "w")
        self.procs.append(subprocess.Popen(argv, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                           start_new_session=True))

    def _node_idle(self):
        r = self.run("sinfo", "-h", "-o", "%t", check=False)
        return r.returncode == 0 and r.stdout.strip() in ("idle", "mix", "alloc")

    def _wait_for(self, ready, what, seconds=60):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for p in self.procs:
                if p.poll() is not None:
                    raise RuntimeError(f"{p.args[0]} exited {p.returncode} while waiting for {what}:\n{self.logs()}")
            if ready():
                return
            time.sleep(0.2)
        raise RuntimeError(f"timed out waiting for {what}:\n{self.logs()}")

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text()[-2000:]}" for p in sorted(self.dir.glob("*.log")) +
                         sorted(self.dir.glob("*.out")) if p.is_file())

    def run(self, *argv, check=True):
        r = subprocess.run(list(argv), env=self.env, capture_output=True, text=True, timeout=60)
        if check and r.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)}: {r.stderr}\n{self.logs()}")
        return r

    def sbatch(self, script: Path, array: str, env: dict, output: str) -> str:
        """Submits script as an array job; returns its job id."""
        # One CPU per task whatever the script asks, so a small machine runs them too.
        r = subprocess.run(["sbatch", "--parsable", f"--array={array}", f"--output={output}", f"--chdir={self.dir}",
                            "--cpus-per-task=1",
                            str(script)], env=dict(env, SLURM_CONF=self.env["SLURM_CONF"]), capture_output=True,
                           text=True, timeout=60)
        if r.returncode != 0:
            raise RuntimeError(f"sbatch: {r.stderr}\n{self.logs()}")
        return r.stdout.strip().split(";")[0]

    def tasks(self, job: str) -> dict:
        """Array task id -> (state, exit code) from scontrol, for every task of job."""
        r = self.run("scontrol", "-o", "show", "job", job)
        out = {}
        for line in r.stdout.splitlines():
            fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
            if "ArrayTaskId" in fields and fields["ArrayTaskId"].isdigit():
                out[int(fields["ArrayTaskId"])] = (fields["JobState"], fields["ExitCode"])
        return out

    def wait(self, job: str, seconds=900) -> dict:
        """Until squeue lists no task of job; then each task's (state, exit code)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if not self.run("squeue", "-h", "-j", job, check=False).stdout.strip():
                return self.tasks(job)
            time.sleep(0.5)
        raise RuntimeError(f"job {job} still queued after {seconds} s:\n{self.logs()}")

    def stop(self):
        if self.procs:
            # The jobs first, so no task (and no slurmstepd) outlives the cluster.
            subprocess.run(["scancel", "--user", "root"], env=self.env, capture_output=True, timeout=30)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and self.run("squeue", "-h", check=False).stdout.strip():
                time.sleep(0.2)
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.procs = []
