"""A pytest plugin for the lab guest: every test's wall time, as it ends and
in a table of the slowest at the end, and which test runs now.

The guest is slow and its speed varies from host to host, so the suite's
bounds are easy to overrun; when one is, what ran and for how long is what
tells a lighter test from a hung one. Two files under $LAB_RESULTS (a host
directory the guest may write; see tests/rdma/run.sh) outlive the guest:
  times.tsv   one line per finished test: seconds, outcome, test id
  current     the test running now and the guest's clock when it started
The host prints both after the run, whether it passed, failed or was killed.
"""

import os
import time
from pathlib import Path

import pytest

_started = pytest.StashKey[float]()
_failed = pytest.StashKey[bool]()
_skipped = pytest.StashKey[bool]()
_finished: list[tuple[float, str, str]] = []


def _results_dir() -> Path | None:
    d = os.environ.get("LAB_RESULTS")
    return Path(d) if d else None


def _write(name: str, text: str, mode: str = "a") -> None:
    d = _results_dir()
    if d:
        with open(d / name, mode) as f:
            f.write(text)


def pytest_runtest_logstart(nodeid, location):
    _write("current", f"{nodeid}\t{time.time():.1f}\n", mode="w")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    item.stash[_started] = time.monotonic()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Once teardown is over: the test's whole time, setup included (a
    module's daemon starts in its first test's setup)."""
    report = (yield).get_result()
    if report.failed:
        item.stash[_failed] = True
    if report.skipped:
        item.stash[_skipped] = True
    if report.when != "teardown" or _started not in item.stash:
        return
    seconds = time.monotonic() - item.stash[_started]
    outcome = "failed" if item.stash.get(_failed, False) else "skipped" if item.stash.get(_skipped, False) else "passed"
    _finished.append((seconds, outcome, item.nodeid))
    _write("times.tsv", f"{seconds:.1f}\t{outcome}\t{item.nodeid}\n")
    reporter = item.config.pluginmanager.get_plugin("terminalreporter")
    if reporter:
        reporter.write_line(f"[{seconds:6.1f} s] {outcome:7} {item.nodeid}")


def pytest_sessionfinish(session, exitstatus):
    _write("current", "", mode="w")


def pytest_terminal_summary(terminalreporter):
    if not _finished:
        return
    total = sum(s for s, _, _ in _finished)
    terminalreporter.section(f"lab: the slowest tests ({len(_finished)} tests, {total:.0f} s in all)")
    for seconds, outcome, nodeid in sorted(_finished, reverse=True)[:15]:
        terminalreporter.write_line(f"{seconds:7.1f} s  {outcome:7}  {nodeid}")
