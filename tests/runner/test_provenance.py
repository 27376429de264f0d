"""A run's provenance end to end, against the stand-in OpenAI server on loopback: the
evaluator fingerprint in run.json, summary.json, the report, the terminal table and every
exported record; the model and system fingerprint the provider reported, counted per judge
across a resume; and both sides of a gate."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

import chatjudge
from chatjudge import evaluate
from chatjudge.errors import ChatJudgeWarning
from chatjudge.formats.provenance import Served
from chatjudge.formats.summary import Summary
from chatjudge.otel.records import evaluations, open_run
from chatjudge.report.gate_text import markdown
from chatjudge.report.terminal import summary_table
from chatjudge.rundir import RunDir
from chatjudge.traces.redact import Redactor
from tests.runner.conftest import pointwise_rows
from tests.support.stub_openai import StubServer

JUDGE = "openai/stub"


def _run(stub: StubServer, rows: list[dict], out: Path, **options: object) -> dict:
    options = {"retry_wait": 0.01, "concurrency": 4, **options}
    result = evaluate(rows, "interactivity-accuracy", JUDGE, out, base_url=stub.base_url,
                      report=True, **options)  # fmt: skip
    return result.summary


def _terminal(summary: dict) -> str:
    console = Console(record=True, width=200)
    console.print(summary_table(Summary.model_validate(summary)))
    return console.export_text()


def test_the_fingerprint_is_written_shown_and_exported(stub: StubServer, tmp_path: Path) -> None:
    stub.configure(served_model="stub-2026-01-01", system_fingerprint="fp_one")
    summary = _run(stub, pointwise_rows(6), tmp_path / "run")
    info = RunDir(tmp_path / "run").info
    assert info.evaluator is not None
    fingerprint = info.evaluator.fingerprint
    assert RunDir(tmp_path / "run").summary.evaluator == info.evaluator
    assert summary["evaluator"]["fingerprint"] == fingerprint and len(fingerprint) == 64
    page = (tmp_path / "run" / "report.html").read_text(encoding="utf-8")
    assert f'id="evaluator" title="{fingerprint}"><code>{fingerprint[:12]}</code>' in page
    assert "Served: openai/stub: stub-2026-01-01 ×6; system fingerprints fp_one ×6" in page
    assert fingerprint[:12] in _terminal(summary) and fingerprint[:13] not in _terminal(summary)
    source, protocol = open_run(RunDir(tmp_path / "run"))
    records = list(evaluations(RunDir(tmp_path / "run"), source, protocol, Redactor(())))
    assert records and all(
        r.attributes["chatjudge.evaluator.fingerprint"] == fingerprint for r in records
    )
    attributes = records[0].attributes
    assert attributes["chatjudge.evaluator.protocol_sha256"] == info.evaluator.protocol_sha256
    assert attributes["chatjudge.evaluator.judges"] == '[{"model":"stub","provider":"openai"}]'
    assert '"samples":1' in attributes["chatjudge.evaluator.options"]
    assert attributes["chatjudge.evaluator.verdict_parsing"] == "1"


def test_out_concurrency_and_budget_keep_the_fingerprint(stub: StubServer, tmp_path: Path) -> None:
    rows = pointwise_rows(4)
    first = _run(stub, rows, tmp_path / "a")
    other = _run(stub, rows, tmp_path / "b", concurrency=1, max_cost_usd=5.0, price_in=1.0,
                 price_out=1.0)  # fmt: skip
    hotter = _run(stub, rows, tmp_path / "c", temperature=0.3)
    assert first["evaluator"] == other["evaluator"]
    assert hotter["evaluator"]["fingerprint"] != first["evaluator"]["fingerprint"]


def test_served_counts_span_a_resume_and_show_when_they_vary(
    stub: StubServer, tmp_path: Path
) -> None:
    rows = pointwise_rows(8)
    stub.configure(system_fingerprint="fp_one")
    _run(stub, rows, tmp_path / "run", limit=5)
    stub.configure(system_fingerprint="fp_two")
    summary = _run(stub, rows, tmp_path / "run")  # resumes: 5 from the store, 3 sent
    served = RunDir(tmp_path / "run").summary.served
    assert served == {
        JUDGE: Served(models={"stub": 8}, system_fingerprints={"fp_one": 5, "fp_two": 3})
    }
    page = (tmp_path / "run" / "report.html").read_text(encoding="utf-8")
    assert "fp_one ×5, fp_two ×3 (varies within this run)" in page
    assert "served, varies: openai/stub: stub ×8; system fingerprints fp_one ×5" in _terminal(
        summary
    )
    again = _run(stub, rows, tmp_path / "run")  # all from the store: the same counts
    assert again["served"] == summary["served"]


def test_a_gate_records_both_sides_and_a_change_behind_the_name(
    stub: StubServer, tmp_path: Path
) -> None:
    rows = pointwise_rows(10)
    stub.configure(system_fingerprint="fp_one")
    _run(stub, rows, tmp_path / "base")
    stub.configure(system_fingerprint="fp_two")
    _run(stub, rows, tmp_path / "cand")
    gate = chatjudge.gate(tmp_path / "cand", tmp_path / "base", report=False)
    evaluator = RunDir(tmp_path / "base").info.evaluator
    assert gate.mismatches == [] and evaluator is not None
    assert gate.evaluators == {"baseline": evaluator, "candidate": evaluator}
    assert gate.served["baseline"][JUDGE].system_fingerprints == {"fp_one": 10}
    text = markdown(gate)
    assert f"Evaluator fingerprints: baseline {evaluator.short}, candidate" in text
    assert "openai/stub was served as stub ×10; system fingerprints fp_one ×10 in the " in text
    _run(stub, rows, tmp_path / "hot", temperature=0.5)
    with pytest.warns(ChatJudgeWarning, match="runs differ: option temperature: 0.0 vs 0.5"):
        chatjudge.gate(tmp_path / "hot", tmp_path / "base", allow_mismatch=True, report=False)
