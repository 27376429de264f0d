"""The gate on a small sample of a metric that nothing bounds per row: a ratio (micro) is
decided on its macro figure under the rule valid at every n, a metric with no known range
is inconclusive and says why, and a run that made no call has no precision."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chatjudge.analysis.gate.assemble import Settings, assemble
from chatjudge.analysis.gate.pair_rows import Paired
from chatjudge.stats.paired import paired_difference
from tests.analysis.gate.test_trajectory import Call, runs
from tests.runner.test_tool_trajectory import BOOK, GET, SEARCH
from tests.support.cli import run_cli

RATIOS = ("tool_call_f1", "tool_call_precision", "tool_call_recall")
# expected: GET then BOOK. The baseline matched nothing, the candidate everything.
IMPROVED: tuple[list[Call], list[Call]] = ([SEARCH], [GET, BOOK])


def gate(tmp_path: Path, base: Path, cand: Path, metric: str, *more: str) -> tuple[Any, dict]:
    out = tmp_path / f"{metric}.json"
    done = run_cli("gate", "--baseline", str(base), "--candidate", str(cand),
                   "--metric", metric, "--allow-mismatch", "--out", str(out),
                   "--markdown", str(tmp_path / f"{metric}.md"), *more,
                   COLUMNS="400")  # fmt: skip
    assert done.returncode in (0, 1, 3), done.stderr
    return done, json.loads(out.read_text())


@pytest.mark.parametrize("metric", RATIOS)
def test_two_identical_improved_rows_of_a_ratio_are_inconclusive(
    tmp_path: Path, metric: str
) -> None:
    """Each ratio's micro bootstrap of two rows that both gain +1 is [+1, +1]: decided on
    its macro figure under the betting interval, two rows cannot pass."""
    base, cand = runs(tmp_path, [IMPROVED, IMPROVED])
    done, g = gate(tmp_path, base, cand, metric)
    assert done.returncode == 3 and g["outcome"] == "inconclusive"
    assert g["metric"] == metric and g["decided_on"] == f"{metric}_macro"
    assert g["difference"]["value"] == 1.0 and g["difference"]["ci95"][0] <= 0
    assert g["reason"].startswith(f"decided on {metric}_macro, {metric} being a ratio")
    assert g["small_sample"]["rule"] == "betting"
    assert g["small_sample"]["difference_range"] == [-1.0, 1.0]
    said = f"Decided on {metric}_macro, the mean of each row's own ratio"
    assert said in done.stdout
    assert said in (tmp_path / f"{metric}.md").read_text(encoding="utf-8")


def test_enough_improved_rows_pass_on_the_macro_figure(tmp_path: Path) -> None:
    base, cand = runs(tmp_path, [IMPROVED] * 12)
    done, g = gate(tmp_path, base, cand, "tool_call_f1", "--require", "better")
    assert done.returncode == 0 and g["outcome"] == "pass", done.stdout
    assert g["decided_on"] == "tool_call_f1_macro" and g["difference"]["ci95"][0] > 0


def test_a_large_sample_is_decided_on_the_ratio_itself(tmp_path: Path) -> None:
    """From 30 units that differ, in 3 distinct ways or more, the micro ratio decides."""
    better: list[tuple[list[Call], list[Call]]] = [
        ([SEARCH], [GET, BOOK]),
        ([GET, SEARCH], [GET, BOOK]),
        ([GET, SEARCH, SEARCH], [GET, BOOK, SEARCH]),
    ]
    base, cand = runs(tmp_path, better * 12)
    done, g = gate(tmp_path, base, cand, "tool_call_precision", "--require", "better")
    assert done.returncode == 0 and g["outcome"] == "pass", done.stdout
    assert g.get("decided_on") is None and g["method"] == "ratio-cluster-bootstrap"
    assert g["small_sample"] is None and g["n_pairs"] == 36


def test_a_candidate_that_made_no_call_has_no_precision(tmp_path: Path) -> None:
    base, cand = runs(tmp_path, [([GET], []), ([GET, BOOK], [])])
    out = tmp_path / "gate.json"
    done = run_cli("gate", "--baseline", str(base), "--candidate", str(cand), "--metric",
                   "tool_call_precision", "--allow-mismatch", "--out", str(out))  # fmt: skip
    assert done.returncode == 2 and not out.exists()
    assert "the candidate's actual_calls sum to 0 over the 2 paired row(s)" in done.stderr
    assert "gate tool_call_recall or tool_call_f1 instead" in done.stderr
    # its recall has a value: 0 against 1/2 and 2/2 of the expected calls made
    _, g = gate(tmp_path, base, cand, "tool_call_recall")
    assert g["difference"]["value"] == -0.75 and g["decided_on"] == "tool_call_recall_macro"


def test_rows_where_the_candidate_made_no_call_are_named(tmp_path: Path) -> None:
    base, cand = runs(tmp_path, [IMPROVED, IMPROVED, ([GET], [])])
    done, g = gate(tmp_path, base, cand, "tool_call_precision")
    assert g["decided_on"] == "tool_call_precision_macro" and g["n_pairs"] == 2
    assert g["counts"]["candidate"]["no_value"] == 1
    assert (
        "1 of the candidate's rows have no tool_call_precision_macro (actual_calls 0 there): "
        "it leaves them out, and tool_call_recall and tool_call_f1 count them"
    ) in done.stderr


def test_a_small_sample_of_a_metric_with_no_known_range_is_inconclusive() -> None:
    """No range bounds a row: the approximate interval [+1, +1] of five rows decides nothing."""
    cand, base = np.ones(5), np.zeros(5)
    paired = Paired(
        ids=[f"r{k}" for k in range(5)],
        candidate=cand,
        baseline=base,
        candidate_inner=[np.ones(1)] * 5,
        baseline_inner=[np.zeros(1)] * 5,
        clusters=None,
        rows=[{}] * 5,
    )
    diff = paired_difference(cand, base)
    assert diff.small is not None and diff.small.rule == "unguarded" and diff.ci95[0] > 0
    settings = Settings("score", 0.0, "better", None, None, False, 0)
    g = assemble(paired, {}, diff, settings, mismatches=[], runs={})
    assert g.outcome == "inconclusive"
    assert g.reason == (
        "a small sample (5 units (fewer than 30)) of a metric with no known range per row: "
        "no interval valid at this size can decide it"
    )
    assert g.rows_to_decide is not None and g.rows_to_decide >= 30
