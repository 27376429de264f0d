"""The test suite's CPU, test by test: where `make test`'s time goes (issue 29, item 7).

On a shared machine a test's wall time says more about its neighbours than about it; its CPU
does not. This runs pytest (the project's settings: pytest-xdist, `-n auto`) with itself as a
plugin (`-p suite_cpu`), which charges each test, set-up and tear-down included, with the CPU
of its worker process and of every process below it: those already reaped (`RUSAGE_CHILDREN`)
and those still running, read from /proc (a session's llama.cpp server, a Ray cluster, a CLI
run's llama.cpp workers). It prints the suite's CPU (the pytest process and all it reaped,
from `wait4`), the sum over tests, the CPU a worker spends outside tests (start-up and
collection), and the tests costing most.

    python bench/suite_cpu.py                          # the whole suite, top 30
    python bench/suite_cpu.py --top 10 -- tests/models tests/cli -n 2

On a quiet 2-core machine the suite's wall time is about its CPU / 2 (it keeps both cores busy).
Linux only (/proc). Run it with the interpreter of the environment chatjudge is installed in.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

TICKS = os.sysconf("SC_CLK_TCK")
OUT_VAR = "SUITE_CPU_OUT"


def _descendants_cpu() -> float:
    """CPU seconds of the live processes below this one (and of what they reaped)."""
    children: dict[int, list[int]] = {}
    used: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:  # gone since listed
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        children.setdefault(int(fields[1]), []).append(int(entry))
        used[int(entry)] = sum(int(f) for f in fields[11:15]) / TICKS  # utime stime cutime cstime
    total, stack = 0.0, list(children.get(os.getpid(), []))
    while stack:
        pid = stack.pop()
        total += used.get(pid, 0.0)
        stack += children.get(pid, [])
    return total


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime + _descendants_cpu()


_rows: list[tuple[str, float, float]] = []
_start = (_cpu(), time.monotonic())


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    cpu, wall = _cpu(), time.monotonic()
    yield
    _rows.append((item.nodeid, _cpu() - cpu, time.monotonic() - wall))


def pytest_sessionfinish(session: pytest.Session) -> None:
    out = os.environ.get(OUT_VAR)
    if not out:
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    record = {"rows": _rows, "cpu": _cpu() - _start[0], "wall": time.monotonic() - _start[1]}
    Path(out, f"{worker}.json").write_text(json.dumps(record))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top", type=int, default=30, help="how many tests to list")
    parser.add_argument("pytest_args", nargs="*", help="after --: arguments for pytest")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="suite-cpu-") as out:
        path = os.pathsep.join(
            filter(None, [str(Path(__file__).parent), os.environ.get("PYTHONPATH")])
        )
        env = {**os.environ, OUT_VAR: out, "PYTHONPATH": path}
        started = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-m", "pytest", "-p", "suite_cpu", "-q", *args.pytest_args], env=env
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - started
        workers = {p.stem: json.loads(p.read_text()) for p in Path(out).glob("*.json")}
    if len(workers) > 1:  # pytest-xdist: the controller runs no test (its CPU is the workers')
        workers.pop("main", None)
    rows = [row for record in workers.values() for row in record["rows"]]
    in_tests = sum(cpu for _, cpu, _ in rows)
    total = usage.ru_utime + usage.ru_stime
    print(f"pytest exit status {os.waitstatus_to_exitcode(status)}, {len(rows)} tests, "
          f"{wall:.0f} s wall")  # fmt: skip
    print(
        f"suite CPU {total:.1f} s (pytest and every process it reaped); in tests {in_tests:.1f} s"
    )
    for name, record in sorted(workers.items()):
        mine = sum(cpu for _, cpu, _ in record["rows"])
        print(f"  {name}: {len(record['rows'])} tests, {mine:.1f} s in tests, "
              f"{record['cpu'] - mine:.1f} s outside them")  # fmt: skip
    print(f"quiet 2-core estimate: {total / 2:.0f} s wall (CPU / 2)")
    print(f"\n{'CPU s':>7} {'wall s':>7}  test (set-up and tear-down included)")
    for name, cpu, spent in sorted(rows, key=lambda row: -row[1])[: args.top]:
        print(f"{cpu:7.2f} {spent:7.2f}  {name}")


if __name__ == "__main__":
    main()
