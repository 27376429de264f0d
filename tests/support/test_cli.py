"""`run_cli` answers as the `chatjudge` process would: what a test reads of a command run in
the test's own process is what `run_process` reads of one run as a process of its own."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

import chatjudge.protocols
from tests.runner.conftest import pointwise_rows, write_jsonl
from tests.support.cli import run_cli, run_process
from tests.support.stub_openai import StubServer


def test_status_and_streams_are_the_process_s() -> None:
    inside, outside = run_cli("protocols"), run_process("protocols")
    assert (inside.returncode, inside.stdout, inside.stderr) == (0, outside.stdout, "")
    bad = run_cli("run", "no-such-file.jsonl", "-p", "interactivity-accuracy", "--out", "x")
    assert bad.returncode == 2 and "no-such-file.jsonl" in bad.stderr and not bad.stdout


def test_a_crash_is_status_1_with_its_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> None:
        raise RuntimeError("a bug in chatjudge")

    monkeypatch.setattr(chatjudge.protocols, "list_protocols", broken)
    done = run_cli("protocols")
    assert done.returncode == 1
    assert "Traceback" in done.stderr and "RuntimeError: a bug in chatjudge" in done.stderr


def test_each_run_has_its_own_width() -> None:
    narrow, wide = run_cli("run", "--help", COLUMNS="60"), run_cli("run", "--help", COLUMNS="240")
    assert max(map(len, narrow.stdout.splitlines())) <= 60
    assert max(map(len, wide.stdout.splitlines())) > 100


def test_what_a_process_reads_as_it_starts_is_refused() -> None:
    with pytest.raises(ValueError, match="run_process"):
        run_cli("protocols", PYTHONPATH="/tmp")


def test_the_collector_is_left_as_it_was(stub: StubServer, tmp_path: Path) -> None:
    """The judge loop freezes the objects it finds and raises the threshold, for its process."""
    before = gc.get_threshold()
    frozen = gc.get_freeze_count()
    data = write_jsonl(tmp_path / "d.jsonl", pointwise_rows(2))
    args = ("-p", "interactivity-accuracy", "-j", "openai/stub", "--base-url", stub.base_url)
    done = run_cli("run", str(data), *args, "--out", str(tmp_path / "run"), key="dummy")
    assert done.returncode == 0, done.stderr
    assert gc.get_threshold() == before and gc.get_freeze_count() == frozen
