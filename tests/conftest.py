"""Shared session fixtures; their logic lives in tests/support. And the grouping of tests
for pytest-xdist (`--dist loadgroup`, set in pyproject.toml): a test runs on any worker,
except that tests sharing an expensive fixture run on one worker, so it is set up once."""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.llama_server import LlamaServer, run_llama_server
from tests.support.stub_openai import StubServer
from tests.support.xdist_groups import INPUT_KEY, FileGroupScheduling, write_groups

# Session fixtures worth one set-up for the whole suite: each worker would start its own
# otherwise (a llama.cpp server loading the model).
SHARED_BY_NAME = {"llama_server": "llama-server"}


@pytest.hookimpl(tryfirst=True)  # before xdist reads the `xdist_group` marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests that share a fixture of `SHARED_BY_NAME`, or one of package, module or class
    scope, run on one worker: the fixture is set up once, not once per worker that gets one
    of them (the report tests' Chromium, a Ray cluster, a loaded model). Such groups are
    handed out first, the widest fixtures first (a llama.cpp server's tests are the longest
    group), so that no long one is left to run alone at the end."""
    grouped: dict[str, str] = {}
    order: dict[str, int] = {}
    for item in items:
        found = _group(item)
        if found:
            order[item.nodeid], group = found
            item.add_marker(pytest.mark.xdist_group(group))
            grouped[item.nodeid] = group
    items.sort(key=lambda item: order.get(item.nodeid, len(SCOPES)))  # stable: file order
    write_groups(config, grouped)  # for the controller (tests/support/xdist_groups.py)


SCOPES = ("session", "package", "module")  # the order groups are handed out in


def _group(item: pytest.Item) -> tuple[int, str] | None:
    """The place in `SCOPES` of the fixture a test shares, and its group."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    names = [name for name in info.names_closure if name in SHARED_BY_NAME]
    if names:
        return 0, SHARED_BY_NAME[names[0]]
    for defs in info.name2fixturedefs.values():
        if defs and defs[-1].scope == "package":  # its conftest's folder, e.g. tests/report
            return 1, defs[-1].baseid
    for defs in info.name2fixturedefs.values():
        if defs and defs[-1].scope in ("module", "class"):
            return 2, item.nodeid.split("::", 1)[0]
    return None


GROUPS_FILE = pytest.StashKey[Path]()


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput") and config.getoption("dist", "no") == "loadgroup":
        fd, name = tempfile.mkstemp(prefix="chatjudge-xdist-groups-", suffix=".json")
        os.close(fd)
        os.unlink(name)  # the first worker writes it
        config.stash[GROUPS_FILE] = Path(name)
        # units in the order collected (above), not xdist's default of the most tests first
        config.option.loadscopereorder = False


def pytest_unconfigure(config: pytest.Config) -> None:
    if GROUPS_FILE in config.stash:
        config.stash[GROUPS_FILE].unlink(missing_ok=True)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist, on the controller: tell each worker where the groups go."""
    if GROUPS_FILE in node.config.stash:
        node.workerinput[INPUT_KEY] = str(node.config.stash[GROUPS_FILE])


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadgroup` that works on pytest 9.2 (tests/support/xdist_groups.py)."""
    if GROUPS_FILE not in config.stash:
        return None
    return FileGroupScheduling(config, config.stash[GROUPS_FILE], log)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: three workers for two cores (at most 8), as many tests wait on processes
    and servers on loopback rather than compute, while each worker costs ~6 s of CPU of its
    own (collection, first imports: 3 workers on 2 cores run the suite as fast as 4, on
    less CPU); none (this process) for tests named one by one (`FILE::TEST`), where
    starting workers would cost more than it saves. CHATJUDGE_TEST_WORKERS overrides."""
    if os.environ.get("CHATJUDGE_TEST_WORKERS"):
        return int(os.environ["CHATJUDGE_TEST_WORKERS"])
    if config.args and all("::" in arg for arg in config.args):
        return 0
    return min(3 * (os.cpu_count() or 1) // 2, 8)


@pytest.fixture(scope="session")
def llama_server() -> Iterator[LlamaServer]:
    """llama-cpp-python's OpenAI-compatible server with SmolLM2, on a free loopback port."""
    with run_llama_server() as server:
        yield server


@pytest.fixture
def immutable() -> Iterator[Callable[[Path], None]]:
    """Make files or directories unwritable even for root (`chattr +i`), as a read-only store
    or run directory is for a user; undone after the test."""
    made: list[Path] = []

    def freeze(path: Path) -> None:
        subprocess.run(["chattr", "+i", str(path)], check=True, capture_output=True)
        made.append(path)

    yield freeze
    for path in reversed(made):
        subprocess.run(["chattr", "-i", str(path)], check=False, capture_output=True)


@pytest.fixture
def stub() -> Iterator[StubServer]:
    """The stand-in OpenAI server on loopback, quick to answer and to say when to retry."""
    with StubServer(latency=0.005, retry_after=0.05) as server:
        yield server
