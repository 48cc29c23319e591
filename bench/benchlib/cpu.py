"""CPU accounting for the benchmark.

Servers: each server runs in its own cgroup, and its CPU for one transfer is
the delta of the cgroup's usage around it. A cgroup covers every thread of
rftpd and every process vsftpd forks per session (even those that already
exited), which per-PID counters cannot do reliably. Without a usable cgroup
hierarchy we fall back to summing /proc/<pid>/stat over the server's live
process tree, including the cutime/cstime of children it has reaped.

Clients: the rusage that os.wait4 returns for the client process.

Everything else on the machine ("others"): busy time from /proc/stat minus
what we measured, so a noisy run can be recognised in the table."""

import os
from pathlib import Path

CLK_TCK = os.sysconf("SC_CLK_TCK")


class CgroupBase:
    """Finds a cgroup hierarchy with CPU accounting that we may create groups in."""

    def __init__(self, name: str):
        self.base, self.kind = None, "proc-tree"
        v1 = Path("/sys/fs/cgroup/cpuacct")
        if (v1 / "cpuacct.usage").exists() and self._make(v1 / name):
            self.base, self.kind = v1 / name, "cgroup-v1-cpuacct"
            return
        for line in Path("/proc/mounts").read_text().splitlines():
            fields = line.split()
            if len(fields) > 2 and fields[2] == "cgroup2":
                p = Path(fields[1]) / name
                if self._make(p) and (p / "cpu.stat").exists():
                    self.base, self.kind = p, "cgroup-v2"
                    return
                self._remove(p)

    @staticmethod
    def _make(p: Path) -> bool:
        try:
            p.mkdir(exist_ok=True)
            return True
        except OSError:
            return False

    @staticmethod
    def _remove(p: Path) -> None:
        try:
            p.rmdir()
        except OSError:
            pass

    def group(self, name: str) -> "CpuGroup":
        return CpuGroup(self, name)

    def remove(self) -> None:
        if self.base is not None:
            self._remove(self.base)


class CpuGroup:
    """CPU meter for one server's process tree."""

    def __init__(self, base: CgroupBase, name: str):
        self.kind = base.kind
        self.path = None
        self.root_pid = None
        if base.base is not None:
            self.path = base.base / name
            self.path.mkdir(exist_ok=True)

    def preexec(self):
        """For subprocess.Popen(preexec_fn=...): the child joins the group before exec."""
        path = self.path

        def join():
            if path is not None:
                with open(path / "cgroup.procs", "w") as f:
                    f.write(str(os.getpid()))
        return join

    def attach_root(self, pid: int) -> None:
        self.root_pid = pid

    def seconds(self) -> float:
        """Cumulative user+system CPU seconds of everything in the group."""
        if self.path is not None:
            if self.kind == "cgroup-v1-cpuacct":
                return int((self.path / "cpuacct.usage").read_text()) / 1e9
            stat = dict(l.split() for l in (self.path / "cpu.stat").read_text().splitlines())
            return int(stat["usage_usec"]) / 1e6
        return proc_tree_seconds(self.root_pid) if self.root_pid else 0.0

    def remove(self) -> None:
        if self.path is not None:
            try:
                self.path.rmdir()
            except OSError:
                pass


def _stat_fields(pid: int):
    text = Path(f"/proc/{pid}/stat").read_text()
    # The command name may contain spaces and parentheses: split after the last ')'.
    return text[text.rindex(")") + 2:].split()


def proc_tree_seconds(root: int) -> float:
    """utime+stime+cutime+cstime of root and its live descendants."""
    children: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                ppid = int(_stat_fields(int(d))[1])
            except (OSError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(d))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        try:
            f = _stat_fields(pid)
        except OSError:
            continue
        # fields after the name: state=0 ppid=1 ... utime=11 stime=12 cutime=13 cstime=14
        total += sum(int(x) for x in f[11:15])
        todo.extend(children.get(pid, []))
    return total / CLK_TCK


def process_seconds(pid: int) -> float:
    """utime+stime of one (multi-threaded) process: all its threads."""
    f = _stat_fields(pid)
    return (int(f[11]) + int(f[12])) / CLK_TCK


def machine_busy_seconds() -> float:
    """Busy CPU seconds of the whole machine so far (all CPUs)."""
    cpu = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    user, nice, system, idle, iowait, irq, softirq, steal = (int(x) for x in cpu[:8])
    return (user + nice + system + irq + softirq + steal) / CLK_TCK


def rusage_seconds(ru) -> float:
    return ru.ru_utime + ru.ru_stime


def wait_for_quiet(max_seconds: float, busy_cores: float = 0.3) -> float:
    """Waits (at most max_seconds) for a second in which the machine is less
    busy than busy_cores, so a measurement does not start in someone else's
    burst. Returns the seconds waited."""
    import time
    start = time.monotonic()
    while time.monotonic() - start < max_seconds:
        b0, t0 = machine_busy_seconds(), time.monotonic()
        time.sleep(1)
        if (machine_busy_seconds() - b0) / (time.monotonic() - t0) < busy_cores:
            break
    return time.monotonic() - start
