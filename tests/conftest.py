"""Shared session fixtures; their logic lives in tests/support."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.llama_server import LlamaServer, run_llama_server


@pytest.fixture(scope="session")
def llama_server() -> Iterator[LlamaServer]:
    """llama-cpp-python's OpenAI-compatible server with SmolLM2, on a free loopback port."""
    with run_llama_server() as server:
        yield server
