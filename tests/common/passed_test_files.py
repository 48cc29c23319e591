"""A test's tmp_path goes once the test is over (its daemons stopped) and
every phase passed, the teardown included; a failed test's files, and those
of a daemon that died or would not stop, stay for the post-mortem.

Both conftests use it: one e2e run writes about 17 GiB of files, and pytest
keeps the last three runs (51 GiB of a developer's /tmp for nothing); the
lab guest's /tmp is a tmpfs in the guest's memory, where one test's
leftovers once left the next no room."""

import shutil
from pathlib import Path

import pytest

_files_of_test = pytest.StashKey[Path]()
_failed = pytest.StashKey[bool]()


@pytest.fixture(autouse=True)
def note_the_tests_files(request):
    """Remembers the test's tmp_path, if it has one. A conftest that imports
    this fixture has it for every test beneath it."""
    if "tmp_path" in request.fixturenames:
        request.node.stash[_files_of_test] = request.getfixturevalue("tmp_path")


def remove_if_passed(item, report) -> None:
    """From pytest_runtest_makereport, with each phase's report."""
    if report.failed:
        item.stash[_failed] = True
    if report.when == "teardown" and not item.stash.get(_failed, False) and _files_of_test in item.stash:
        shutil.rmtree(item.stash[_files_of_test], ignore_errors=True)
