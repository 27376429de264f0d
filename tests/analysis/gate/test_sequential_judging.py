"""`chatjudge gate --sequential`: judging in seeded batches stops once the confidence
sequence decides, saves the calls of the rows left, and resumes without repeating a call."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from chatjudge.analysis.gate.sequential_judging import gate_sequential
from chatjudge.cli import app
from chatjudge.errors import UsageError
from chatjudge.formats.analyses import Gate
from chatjudge.formats.io import read_model
from chatjudge.rundir import GATE, RunDir
from tests.analysis.gate.test_decide import fair_judge, pairwise_rows, pointwise_rows
from tests.support.budget import largest_worst_case
from tests.support.cli import run_cli
from tests.support.stub_openai import StubServer

runner = CliRunner()
CALLS: list[str] = []


def counting_judge(prompt: str) -> str:
    """`fair_judge`, with every call counted."""
    CALLS.append(prompt)
    return fair_judge(prompt)


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_clear_case_stops_early_and_resumes_without_a_call(tmp_path: Path) -> None:
    wins = (["C"] * 6 + ["T"] * 2 + ["B"] * 2) * 40  # 400 rows, the candidate better: Δ 0.2
    data = write_jsonl(tmp_path / "rows.jsonl", pairwise_rows(wins))
    out = tmp_path / "seq"
    CALLS.clear()
    g = gate_sequential(
        data, "pairwise-chat-quality", counting_judge, out, batch=20, require="better", seed=3
    )
    assert g.outcome == "pass" and g.sequential is not None
    s = g.sequential
    assert s.stopped == "decided" and s.rows_total == 400 and s.rows_judged < 300
    assert s.batches > 1 and s.rows_judged == s.batches * 20 == g.n_pairs
    assert len(CALLS) == s.calls == 2 * s.rows_judged  # two orders a row, none sent twice
    assert s.calls_saved == 2 * (400 - s.rows_judged)
    assert g.method == "confidence-sequence"
    assert read_model(out / GATE, Gate) == g
    # the rows judged are a seeded random sample, not the first rows of the file
    judged_ids = {r.id for r in RunDir(out).results()}
    assert len(judged_ids) == s.rows_judged
    assert judged_ids != {f"p{i}" for i in range(len(judged_ids))}

    CALLS.clear()
    again = gate_sequential(
        data, "pairwise-chat-quality", counting_judge, out, batch=20, require="better", seed=3
    )
    assert CALLS == [] and again.sequential == s and again.difference == g.difference


def test_cli_sequential_pointwise_against_the_stand_in_server(tmp_path: Path) -> None:
    n = 300
    base = write_jsonl(tmp_path / "base.jsonl", pointwise_rows([(1, 2)] * n))
    cand_rows = pointwise_rows([(1, 2)] * n)
    for r in cand_rows:
        r["chat"] += " (candidate)"
    cand = write_jsonl(tmp_path / "cand.jsonl", cand_rows)
    out = tmp_path / "seq"
    args = [
        "gate",
        str(cand),
        "-p",
        "interactivity-accuracy",
        "--judge",
        "openai/stub",
        "--sequential",
        "--baseline-data",
        str(base),
        "--batch",
        "25",
        "--seed",
        "1",
        "--metric",
        "accuracy",
        "--margin",
        "0.5",
        "--out",
        str(out),
    ]
    with StubServer() as stub:
        env = {"OPENAI_API_KEY": "sk-test"}
        result = runner.invoke(app, [*args, "--base-url", stub.base_url], env=env)
        assert result.exit_code == 0, result.output  # random verdicts: Δ near 0, far above -0.5
        g = read_model(out / "candidate" / GATE, Gate)
        s = g.sequential
        assert s is not None and s.stopped == "decided" and s.rows_judged < n
        assert stub.stats.requests == s.calls == 2 * s.rows_judged
        assert f"{s.calls_saved:,} judge calls saved" in result.output
        result = runner.invoke(app, [*args, "--base-url", stub.base_url], env=env)
        assert result.exit_code == 0
        assert stub.stats.requests == s.calls  # resumed from the store: nothing sent again
        assert read_model(out / "candidate" / GATE, Gate).sequential == s


def test_sequential_refuses_bad_usage(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "rows.jsonl", pairwise_rows(["C"] * 4))
    with pytest.raises(UsageError, match="--baseline-data"):
        gate_sequential(data, "interactivity-accuracy", counting_judge, tmp_path / "o")
    with pytest.raises(UsageError, match="--out DIR"):
        gate_sequential(data, "pairwise-chat-quality", counting_judge, None)
    result = runner.invoke(app, ["gate", str(data), "--sequential"])
    assert result.exit_code == 2 and "--protocol" in result.output


@pytest.fixture(autouse=True)
def _clear() -> Iterator[None]:
    CALLS.clear()
    yield


def test_a_budget_stops_judging_before_a_decision_and_a_larger_one_resumes(
    tmp_path: Path,
) -> None:
    """`--max-cost-usd` across batches: the gate stops at the budget, undecided (exit 4 on
    the command line), and a larger budget goes on from the store to a decision."""
    wins = (["C"] * 6 + ["T"] * 2 + ["B"] * 2) * 40
    data = write_jsonl(tmp_path / "rows.jsonl", pairwise_rows(wins))
    out = tmp_path / "seq"
    # A callable reports no tokens: each call is charged its worst case, about $2.5 here.
    priced = {"price_in": 1000.0, "price_out": 1000.0, "max_tokens": 1024}
    CALLS.clear()
    g = gate_sequential(data, "pairwise-chat-quality", counting_judge, out, batch=20,
                        require="better", seed=3, max_cost_usd=150.0, **priced)  # fmt: skip
    s = g.sequential
    assert s is not None and s.stopped == "budget" and g.outcome == "inconclusive"
    assert s.max_cost_usd == 150.0 and s.cost_usd is not None and s.cost_usd <= 150.0
    assert 0 < s.rows_judged <= 40 and s.calls == 2 * s.rows_judged  # a cut batch counts
    assert s.calls <= len(CALLS) < s.calls + 40  # and items cut half-judged
    first = len(CALLS)
    CALLS.clear()
    done = gate_sequential(data, "pairwise-chat-quality", counting_judge, out, batch=20,
                           require="better", seed=3, max_cost_usd=1e6, **priced)  # fmt: skip
    assert done.outcome == "pass" and done.sequential.stopped == "decided"
    assert first + len(CALLS) >= done.sequential.calls  # judged rows: none paid twice
    assert len(CALLS) <= done.sequential.calls - s.calls + 40


def test_cli_sequential_stops_at_its_budget_with_exit_4(tmp_path: Path) -> None:
    wins = (["C"] * 6 + ["T"] * 2 + ["B"] * 2) * 40
    data = write_jsonl(tmp_path / "rows.jsonl", pairwise_rows(wins))
    out = tmp_path / "seq"
    with StubServer() as stub:
        result = runner.invoke(app, [
            "gate", str(data), "-p", "pairwise-chat-quality", "--sequential", "--batch", "20",
            "--judge", "openai/stub", "--base-url", stub.base_url, "--out", str(out),
            "--max-cost-usd", "40", "--price-in", "1000", "--price-out", "1000",
        ], env={"OPENAI_API_KEY": "sk-test"})  # fmt: skip
        sent = stub.stats.requests
    assert result.exit_code == 4, result.output
    assert "Budget: $40.0000" in result.output and "a larger budget resumes" in result.output
    g = read_model(out / GATE, Gate)
    assert g.sequential is not None and g.sequential.stopped == "budget"
    # undecided, the rows left still need judging: no call is saved
    assert g.sequential.calls_saved == 0 and "judge calls saved" not in result.output
    left = 400 - g.sequential.rows_judged
    assert f"{left:,} rows left unjudged, no judge call saved" in result.output
    assert g.sequential.cost_usd is not None and g.sequential.cost_usd <= 40
    assert 0 < sent < 2 * 400
    # The command writes the run's report with the gate's section (the report is the CLI's).
    assert 'data-section="gate"' in (out / "report.html").read_text(encoding="utf-8")


def sequential_args(data: Path, out: Path, stub: StubServer, *extra: str) -> list[str]:
    return [
        "gate", str(data), "-p", "pairwise-chat-quality", "--sequential", "--batch", "50",
        "--judge", "openai/stub", "--base-url", stub.base_url, "--out", str(out),
        "--require", "better", *extra,
    ]  # fmt: skip


def test_cli_sequential_at_concurrency_100_spends_its_budget_across_batches(
    stub: StubServer, tmp_path: Path
) -> None:
    """100 calls in flight, each batch on what is left: the gate stops at the budget
    (exit 4) within one call's worst case of it, and a larger budget resumes, sending no
    call twice."""
    data = write_jsonl(tmp_path / "rows.jsonl", pairwise_rows(["T"] * 400))
    out = tmp_path / "seq"
    stub.configure(record=True, latency=0.02)
    prices = ("--price-in", "100", "--price-out", "200", "--concurrency", "100")
    cut = run_cli(*sequential_args(data, out, stub, *prices, "--max-cost-usd", "25"), key="sk-t")
    assert cut.returncode == 4, cut.stderr
    s = read_model(out / GATE, Gate).sequential
    assert s is not None and s.stopped == "budget" and s.cost_usd is not None
    worst = largest_worst_case(stub.stats.recorded, 100.0, 200.0)
    assert s.cost_usd <= 25 and 25 - s.cost_usd <= worst, (s.cost_usd, worst)
    assert s.batches >= 2  # the budget outlasted the first batch
    sent = stub.stats.requests
    done = run_cli(*sequential_args(data, out, stub, *prices, "--max-cost-usd", "1000"),
                   key="sk-t")  # fmt: skip
    assert done.returncode in (0, 1, 3), done.stderr  # decided, or every row judged
    again = read_model(out / GATE, Gate).sequential
    assert again is not None and again.stopped != "budget" and again.rows_judged > s.rows_judged
    assert stub.stats.requests > sent and stub.stats.max_sends == 1  # none paid twice


def test_ctrl_c_in_a_sequential_gate_says_what_is_kept_and_the_same_command_resumes(
    tmp_path: Path,
) -> None:
    """SIGINT mid-run: exit 130, saying that the batches judged are kept and that the same
    command resumes; it then sends again only the calls that were in flight."""
    data = write_jsonl(tmp_path / "rows.jsonl", pairwise_rows(["T"] * 120))
    out = tmp_path / "seq"
    with StubServer(latency=0.02) as stub:
        args = sequential_args(data, out, stub, "--batch", "20", "--concurrency", "4")
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
        proc = subprocess.Popen(
            [sys.executable, "-m", "chatjudge.cli", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**env, "OPENAI_API_KEY": "sk-test"},
        )  # fmt: skip
        # Past the first batch, replies held: the run cannot end before the signal, however
        # slowly a loaded machine runs it. Given again once it is sent, for the stop to close.
        stub.hold(after=60)
        deadline = time.monotonic() + 60
        while stub.stats.replies < 60 and time.monotonic() < deadline:
            time.sleep(0.01)
        while stub.stats.in_flight == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        stub.release()
        _, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 130, stderr
        assert f"interrupted: the judgments of the batches so far are kept in {out}" in stderr
        assert "run the same command again to resume" in stderr
        assert "Traceback" not in stderr
        with contextlib.closing(sqlite3.connect(out / "calls.sqlite")) as db:
            (kept,) = db.execute("SELECT count(*) FROM calls").fetchone()
        assert kept >= 40  # the first batch's calls at least, kept in the store
        sent = stub.stats.requests
        done = run_cli(*args, key="sk-test")
        assert done.returncode in (0, 1, 3), done.stderr
        assert stub.stats.as_dict()["resent_prompts"] <= 4  # at most the calls in flight
        assert stub.stats.requests > sent


def test_a_pointwise_gate_spends_one_budget_across_both_runs_and_all_batches(
    stub: StubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The baseline's and the candidate's runs, batch after batch, spend from one budget:
    each run's summary shows the gate's limit and what all runs spent so far, and the
    gate's cost is that one count, within the limit."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    base = write_jsonl(tmp_path / "base.jsonl", pointwise_rows([(1, 2)] * 200))
    cand = write_jsonl(tmp_path / "cand.jsonl", pointwise_rows([(1, 2)] * 200))
    out = tmp_path / "seq"
    g = gate_sequential(
        cand, "interactivity-accuracy", "openai/stub", out, baseline_data=base, batch=10,
        metric="accuracy", require="better", max_cost_usd=20.0, base_url=stub.base_url,
        price_in=100.0, price_out=200.0, concurrency=4,
    )  # fmt: skip
    s = g.sequential
    assert s is not None and s.stopped == "budget" and s.batches >= 2
    budgets = {
        name: json.loads((out / name / "summary.json").read_text())["cost"]["budget"]
        for name in ("baseline", "candidate")
    }
    assert {b["max_usd"] for b in budgets.values()} == {20.0}
    assert s.cost_usd is not None and s.cost_usd <= 20.0
    assert max(b["spent_usd"] for b in budgets.values()) == pytest.approx(s.cost_usd)
