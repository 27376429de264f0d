"""Tests sharing an expensive fixture run on one pytest-xdist worker (tests/conftest.py,
tests/support/xdist_groups.py): when xdist's own way of passing groups broke with pytest 9.2,
nothing failed, and each worker set up its own llama.cpp server, Chromium and Ray cluster."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from pathlib import Path

from tests.docs import test_formats

ROOT = Path(__file__).resolve().parents[2]


def test_the_tests_of_a_module_fixture_run_on_one_worker() -> None:
    """A small, quick module: 30 of its 32 tests take its module-scoped `doc` fixture."""
    sharing = {
        name
        for name, function in inspect.getmembers(test_formats, inspect.isfunction)
        if name.startswith("test_") and "doc" in inspect.signature(function).parameters
    }
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/docs/test_formats.py", "-n", "2", "-v",
         "-p", "no:cacheprovider"],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:]
    ran = re.findall(r"^\[(gw\d+)\] .*PASSED tests/docs/test_formats\.py::(\w+)", done.stdout, re.M)
    assert len(ran) == 32, done.stdout[-2000:]
    workers = {worker for worker, name in ran if name in sharing}
    assert len(workers) == 1, [(worker, name) for worker, name in ran if name in sharing]
    assert sum(name in sharing for _, name in ran) == 30
