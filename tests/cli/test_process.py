"""The `chatjudge` process as a shell sees it: each outcome's exit status from a process of
its own, where the other CLI tests call the command in theirs (tests/support/cli.py).
Ctrl-C's 130 is `tests/analysis/gate/test_sequential_judging.py`'s, also a process."""

from __future__ import annotations

from pathlib import Path

from tests.runner.conftest import pointwise_rows, write_jsonl
from tests.support.cli import run_process
from tests.support.stub_openai import StubServer


def _run(stub: StubServer, data: Path, out: Path, *extra: str):
    return run_process(
        "run", str(data), "-p", "interactivity-accuracy", "-j", "openai/stub",
        "--base-url", stub.base_url, "--out", str(out), "--quiet", *extra, key="dummy",
    )  # fmt: skip


def test_a_finished_run_is_0_and_a_gate_on_three_rows_is_3(
    stub: StubServer, tmp_path: Path
) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", pointwise_rows(3))
    done = _run(stub, data, tmp_path / "run")
    assert done.returncode == 0, done.stderr
    assert "results: " in done.stderr and "Traceback" not in done.stderr
    assert _run(stub, data, tmp_path / "again").returncode == 0
    runs = ("--baseline", str(tmp_path / "run"), "--candidate", str(tmp_path / "again"))
    gate = run_process("gate", *runs, "--metric", "accuracy")
    assert gate.returncode == 3, gate.stderr
    assert "inconclusive" in gate.stdout.lower()


def test_a_failed_item_is_1(stub: StubServer, tmp_path: Path) -> None:
    stub.configure(permanent={"POISON": "503"})
    data = write_jsonl(tmp_path / "d.jsonl", pointwise_rows(3, marker="POISON"))
    done = _run(stub, data, tmp_path / "run", "--max-retries", "1")
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr


def test_bad_input_is_2_naming_the_row_and_field(stub: StubServer, tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text('{"chat": "x", "question": "q"}\n', encoding="utf-8")
    done = _run(stub, data, tmp_path / "run")
    assert done.returncode == 2
    assert "row 1, field 'answer'" in done.stderr and "Traceback" not in done.stderr
    assert stub.stats.requests == 0


def test_a_budget_below_one_call_is_4_and_sends_nothing(stub: StubServer, tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", pointwise_rows(3))
    prices = ("--price-in", "100", "--price-out", "200", "--max-tokens", "256")
    done = _run(stub, data, tmp_path / "run", *prices, "--max-cost-usd", "0.001")
    assert done.returncode == 4, done.stderr
    assert "could cost up to" in done.stderr and stub.stats.requests == 0
