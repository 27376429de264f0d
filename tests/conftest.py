"""Shared session fixtures; their logic lives in tests/support."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.llama_server import LlamaServer, run_llama_server
from tests.support.stub_openai import StubServer


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
