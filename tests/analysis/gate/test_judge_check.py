"""`run --judge-check` and the gate's judge check, end to end with a judge in Python: the
check is judged beside the data and resumed from the run's own store; a judge that changed
under the same name between two runs refuses the gate (exit 2) unless
--allow-judge-change; an unchanged one gates as before."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

import chatjudge
from chatjudge.cli import app
from chatjudge.errors import ChatJudgeWarning, UsageError
from chatjudge.formats.analyses import Gate
from chatjudge.formats.io import read_model
from chatjudge.formats.summary import Summary
from chatjudge.report.terminal import summary_table
from chatjudge.rundir import GATE, RunDir
from chatjudge.runner.judge_check import CHECK_DIR
from tests.analysis.gate.test_decide import pointwise_rows
from tests.runner.conftest import write_jsonl

SHIFT = {"by": 0}  # how far the judge has moved: a provider's update behind the same name
CALLS = itertools.count()


def drifting_judge(prompt: str) -> str:
    """The scores written in the conversation, moved by `SHIFT`; on the check's noisy
    items (NOISY), every third call says 1 less."""
    m = re.search(r"ACC=(\d) INT=(\d)", prompt)
    assert m is not None
    accuracy, interactivity = int(m[1]), (int(m[2]) + SHIFT["by"]) % 4
    if "NOISY" in prompt and next(CALLS) % 3 == 0:
        interactivity = max(0, interactivity - 1)
    return json.dumps(
        {
            "interactivity": {"thought": "t", "score": interactivity},
            "accuracy": {"thought": "t", "score": accuracy},
        }
    )


def _check_file(tmp: Path, n: int = 24) -> Path:
    rows = pointwise_rows([(1, 2)] * n)
    for i, row in enumerate(rows):
        row["id"] = f"check-{i}"
        row["chat"] += " NOISY" if i % 4 == 0 else ""
        row["label"] = 2  # the reference rates interactivity (the first score)
    return write_jsonl(tmp / "check.jsonl", rows)


def _run(rows: list[dict[str, Any]], out: Path, check: Path, **opts: Any) -> dict[str, Any]:
    opts = {"report": False, **opts}
    result = chatjudge.evaluate(rows, "interactivity-accuracy", judge=drifting_judge, out=out,
                                judge_check=check, **opts)  # fmt: skip
    return result.summary


@pytest.fixture(autouse=True)
def _unshifted() -> None:
    SHIFT["by"] = 0


def test_the_check_is_judged_beside_the_data_and_summarised(tmp_path: Path) -> None:
    check = _check_file(tmp_path)
    summary = _run(pointwise_rows([(1, 2)] * 5), tmp_path / "run", check, report=True)
    found = summary["judge_check"]
    page = (tmp_path / "run" / "report.html").read_text(encoding="utf-8")
    assert '<p class="meta" id="judge-check">Judge check (check.jsonl, sha256 ' in page
    assert "agreement with the reference 0.92 [" in page and "on 24 items × 3" in page
    console = Console(record=True, width=200)
    console.print(summary_table(Summary.model_validate(summary)))
    table = console.export_text()
    assert "judge check agreement" in table and "judge check cost" in table
    assert found["n"] == 24 and found["samples"] == 3
    assert found["file"] == "check.jsonl" and len(found["file_sha256"]) == 64
    # 18 quiet items agree 3 of 3; the 6 noisy ones once in 3 calls said 1 (deterministic
    # across the calls, whatever their order: a third of the noisy calls)
    assert found["agreement"] == pytest.approx((18 + 6 * 2 / 3) / 24)
    assert 0 < found["ci95"][0] < found["agreement"] < found["ci95"][1] <= 1
    assert found["disagreement"] == pytest.approx(6 * (2 / 3) / 24, abs=0.06)
    assert RunDir(tmp_path / "run" / CHECK_DIR).summary.n_items == 24  # a run of its own
    assert summary["n_items"] == 5  # the data's own summary counts only the data


def test_a_check_row_without_a_reference_label_is_named(tmp_path: Path) -> None:
    check = _check_file(tmp_path)
    rows = [json.loads(line) for line in check.read_text().splitlines()]
    del rows[3]["label"]
    write_jsonl(check, rows)
    with pytest.raises(UsageError, match=r"row 4, field 'label': no reference label"):
        _run(pointwise_rows([(1, 2)] * 5), tmp_path / "run", check)
    assert not (tmp_path / "run" / "results.jsonl").exists()  # nothing judged


def test_a_judge_changed_behind_the_same_name_refuses_the_gate(tmp_path: Path) -> None:
    check, rows = _check_file(tmp_path), pointwise_rows([(1, 2), (2, 1)] * 5)
    _run(rows, tmp_path / "base", check)
    SHIFT["by"] = 1
    _run(rows, tmp_path / "cand", check)
    result = CliRunner().invoke(
        app, ["gate", "--baseline", str(tmp_path / "base"), "--candidate", str(tmp_path / "cand")]
    )
    assert result.exit_code == 2
    assert "the judge changed between these runs: check agreement 0.92 → 0.08" in result.output
    assert "--allow-judge-change" in result.output
    with pytest.warns(ChatJudgeWarning, match="the judge changed between these runs"):
        gate = chatjudge.gate(
            tmp_path / "cand", tmp_path / "base", allow_judge_change=True, report=False
        )
    assert gate.judge_check is not None and gate.judge_check.changed and gate.judge_check.allowed
    assert gate.judge_check.p_values["interactivity"] < 0.01 / 2
    assert gate.judge_check.p_values["accuracy"] == 1.0  # accuracy did not move
    assert read_model(tmp_path / "cand" / GATE, Gate).judge_check == gate.judge_check


def test_an_unchanged_judge_passes_the_check_and_a_resume_asks_nothing_again(
    tmp_path: Path,
) -> None:
    check, rows = _check_file(tmp_path), pointwise_rows([(1, 2), (2, 1)] * 5)
    _run(rows, tmp_path / "base", check)
    first = next(CALLS)
    _run(rows, tmp_path / "base", check)  # resumed: the check's calls come from its store
    assert next(CALLS) == first + 1
    _run(rows, tmp_path / "cand", check)  # a new run asks the judge again
    assert next(CALLS) > first + 2
    gate = chatjudge.gate(tmp_path / "cand", tmp_path / "base", report=False)
    assert gate.judge_check is not None and not gate.judge_check.changed
    assert gate.judge_check.n_items == 24 and gate.judge_check.level == 0.01
    (tmp_path / "other").mkdir()
    other = _check_file(tmp_path / "other", 20)  # another check file: nothing to pair
    _run(rows, tmp_path / "third", other)
    assert chatjudge.gate(tmp_path / "third", tmp_path / "base", report=False).judge_check is None
