"""rftp sync spread over a Slurm array job, on a real single-node Slurm
(munged, slurmctld, slurmd from Debian's packages; tests/e2e/slurm_cluster.py):
a plan made once, 4 array tasks each copying its share (--shard auto) to a
running rftpd, waited for with squeue and scontrol, checked with rftp check;
then one task of a second run cancelled mid-way with scancel and run again,
which sends none of the files it had finished."""

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from conftest import PASSWORDS, TESTING  # noqa: E402
from slurm_cluster import SlurmCluster, available  # noqa: E402

RFTP = str(TESTING / "rftp")

pytestmark = pytest.mark.skipif(not available(), reason="Slurm and munge not installed, or not root "
                                                        "(scripts/install-deps.sh installs them)")


def make_dataset(root: Path, files: int, large: int) -> Path:
    """files small files (0..64 KiB) over nested directories, and large ones of 2..6 MiB."""
    rng = random.Random(4)
    for i in range(files):
        d = root / f"d{i % 17}" / f"e{i % 5}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"s{i:05d}.dat").write_bytes(rng.randbytes(rng.randrange(0, 65536)))
    for i in range(large):
        (root / f"large-{i:02d}.bin").write_bytes(os.urandom(rng.randrange(2, 7) * 2**20))
    return root


@pytest.fixture
def cluster(tmp_path):
    c = SlurmCluster(tmp_path / "slurm").start()
    yield c
    c.stop()


@pytest.fixture
def env(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "RFTP_PASSWORD": PASSWORDS["alice"]}


def rftp(env, *args):
    return subprocess.run([RFTP, *map(str, args)], env=env, capture_output=True, timeout=600)


# The script docs/cli.md shows, run as documented (PLAN and RFTP from the environment).
SCRIPT = Path(__file__).parents[2] / "docs" / "examples" / "replicate.sbatch"


def task_env(env, plan: Path) -> dict:
    return dict(env, PLAN=str(plan), RFTP=RFTP)


def file_events(output: Path) -> list:
    if not output.exists():
        return []
    events = []
    for line in output.read_text().splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            pass  # a line cut short by the cancel
    return [e for e in events if e.get("event") == "file" and e.get("result") == "ok"]


def test_a_four_task_array_replicates_a_dataset(rftpd, cluster, tmp_path, env):
    src = make_dataset(tmp_path / "src", files=3000, large=6)
    target = f"rftp://alice@127.0.0.1:{rftpd.port}/replica"
    plan = tmp_path / "plan.json"
    r = rftp(env, "sync", "--plan-only", "--plan", plan, src, target)
    assert r.returncode == 0, r.stderr

    job = cluster.sbatch(SCRIPT, "1-4", task_env(env, plan), str(tmp_path / "task-%a.json"))
    tasks = cluster.wait(job)
    assert tasks == {k: ("COMPLETED", "0:0") for k in (1, 2, 3, 4)}, (tasks, cluster.logs())
    per_task = [len(file_events(tmp_path / f"task-{k}.json")) for k in (1, 2, 3, 4)]
    assert sum(per_task) == 3006 and min(per_task) > 0, per_task

    r = rftp(env, "sync", "--plan", plan, "--finish")
    assert r.returncode == 0, r.stderr
    r = rftp(env, "check", src, target)
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_cancelled_task_run_again_sends_only_what_it_had_not_finished(rftpd, cluster, tmp_path, env):
    src = make_dataset(tmp_path / "src", files=2000, large=24)
    target = f"rftp://alice@127.0.0.1:{rftpd.port}/replica"
    plan = tmp_path / "plan.json"
    assert rftp(env, "sync", "--plan-only", "--plan", plan, src, target).returncode == 0
    job = cluster.sbatch(SCRIPT, "1-4", task_env(env, plan), str(tmp_path / "first-%a.json"))
    first = tmp_path / "first-2.json"
    deadline = time.monotonic() + 300
    while not file_events(first) and time.monotonic() < deadline:
        time.sleep(0.01)
    cluster.run("scancel", f"{job}_2")
    tasks = cluster.wait(job)
    assert tasks[2][0] == "CANCELLED", (tasks, cluster.logs())
    finished = {e["path"] for e in file_events(first)}
    assert finished

    # As the script says: a one-task array names its share, or it would count itself 1 of 1.
    rerun = cluster.sbatch(SCRIPT, "2", dict(task_env(env, plan), SHARD="2/4"), str(tmp_path / "again-%a.json"))
    again = cluster.wait(rerun)
    assert again == {2: ("COMPLETED", "0:0")}, (again, cluster.logs())
    sent_again = {e["path"] for e in file_events(tmp_path / "again-2.json")}
    assert not finished & sent_again, sorted(finished & sent_again)[:5]
    summary = json.loads((tmp_path / "again-2.json").read_text().splitlines()[-1])
    assert summary["files"]["unchanged"] >= len(finished), summary
    planned = len(json.loads(plan.read_text())["copies"])
    assert summary["files"]["ok"] + summary["files"]["unchanged"] < planned / 2, (summary, planned)  # its share only

    assert rftp(env, "sync", "--plan", plan, "--finish").returncode == 0
    r = rftp(env, "check", src, target)
    assert r.returncode == 0, r.stdout + r.stderr
