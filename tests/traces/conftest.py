"""Fixtures of the import tests: a production app's traces, written by real
instrumentations of the official client, and the rows read back."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.traces.chat_server import ChatServer

ROOT = Path(__file__).resolve().parents[2]
Traced = Callable[[str], tuple[list[Path], list[list[dict[str, Any]]]]]


@pytest.fixture
def traced(tmp_path: Path) -> Traced:
    """Run the instrumented app (`openai-v2`, `openai-v2-events`, `openinference` or `log`)
    in its own process against a loopback chat server: the files it wrote, and what it sent
    and got back."""

    def run(kind: str) -> tuple[list[Path], list[list[dict[str, Any]]]]:
        out, sent = tmp_path / f"{kind}.jsonl", tmp_path / f"{kind}.sent.json"
        logs = tmp_path / f"{kind}.logs.jsonl"
        with ChatServer() as server:
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "tests.traces.instrumented_app",
                    kind,
                    "--base-url",
                    server.base_url,
                    "--out",
                    str(out),
                    "--sent",
                    str(sent),
                    "--logs",
                    str(logs),
                ],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=120,
            )
        assert done.returncode == 0, done.stderr
        files = [out, logs] if logs.exists() else [out]
        return files, json.loads(sent.read_text(encoding="utf-8"))

    return run


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
