"""`chatjudge gate` on `run -p tool-trajectory` runs: a micro metric (matched calls over
calls made, summed over items) is compared as the difference of the two runs' ratios, not
as a mean of per-item values (from 30 units: `test_gate_small` has fewer); pass^k of
`trajectory_match` from rows sharing a `task_id`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.runner.test_tool_trajectory import BOOK, GET, SEARCH, trajectory, write_rows
from tests.support.cli import run_cli

Call = tuple[str, dict[str, Any]]
# expected: GET then BOOK, in every row. Per row: (baseline's calls, candidate's calls).
PRECISION_ROWS: list[tuple[list[Call], list[Call]]] = [
    ([GET, BOOK], [GET, BOOK, SEARCH, SEARCH]),  # matched/made: 2/2 -> 2/4
    ([GET, SEARCH, SEARCH, SEARCH], [GET, BOOK]),  # 1/4 -> 2/2
    ([GET], [GET, BOOK]),  # 1/1 -> 2/2
    ([SEARCH], [GET]),  # 0/1 -> 1/1
    ([], [GET]),  # no call made (no precision of its own) -> 1/1
]


def runs(
    tmp_path: Path, pairs: list[tuple[list[Call], list[Call]]], times: int = 1
) -> tuple[Path, Path]:
    """The baseline's and the candidate's run directories, written by `run`: `pairs` over
    and over `times` times, in `group` by their place in `pairs` (even, odd)."""
    dirs = []
    for side, name in ((0, "b"), (1, "c")):
        rows = [
            {"id": f"r{k}", "group": k % len(pairs) % 2,
             "response_trajectory": trajectory(*calls[side])}
            for k, calls in enumerate(pairs * times)
        ]  # fmt: skip
        data = write_rows(tmp_path / f"{name}.jsonl", rows)
        done = run_cli("run", str(data), "-p", "tool-trajectory", "--out", str(tmp_path / name))
        assert done.returncode == 0, done.stderr
        dirs.append(tmp_path / name)
    return dirs[0], dirs[1]


def gate(tmp_path: Path, base: Path, cand: Path, metric: str, *more: str) -> dict[str, Any]:
    out = tmp_path / f"{metric}.json"
    done = run_cli("gate", "--baseline", str(base), "--candidate", str(cand),
                   "--metric", metric, "--allow-mismatch", "--out", str(out), *more)  # fmt: skip
    assert done.returncode in (0, 1, 3), done.stderr
    decision: dict[str, Any] = json.loads(out.read_text())
    return decision


def test_a_micro_metric_gates_the_difference_of_the_runs_ratios(tmp_path: Path) -> None:
    base, cand = runs(tmp_path, PRECISION_ROWS[:4], times=8)  # 32 units: not a small sample
    decision = gate(tmp_path, base, cand, "tool_call_precision")
    # by hand, 8 times over: the baseline matched 2+1+1+0 = 4 of 2+4+1+1 = 8 calls made,
    # the candidate 2+2+2+1 = 7 of 4+2+2+1 = 9: Δ = 7/9 - 4/8 = 5/18 (the mean of the items'
    # own precisions would give 0.875 - 0.5625 = 0.3125; of their numerators, 0.75)
    assert decision["difference"]["value"] == round(5 / 18, 6)
    assert decision["n_pairs"] == 32 and decision["method"] == "ratio-cluster-bootstrap"
    assert decision["decided_on"] is None
    lo, hi = decision["difference"]["ci95"]
    assert lo <= 5 / 18 <= hi
    summaries = [json.loads((d / "summary.json").read_text())["metrics"] for d in (base, cand)]
    micro = [s["tool_call_precision"]["value"] for s in summaries]
    assert micro == [0.5, 7 / 9]  # the gate's Δ is the summaries' difference
    # f1: 2 x matched / (made + expected): 8/16 against 14/17
    f1 = gate(tmp_path, base, cand, "tool_call_f1")
    assert f1["difference"]["value"] == round(14 / 17 - 8 / 16, 6)
    macro = gate(tmp_path, base, cand, "tool_call_precision_macro")  # a mean of items
    assert macro["difference"]["value"] == 0.3125


def test_an_item_with_no_call_made_counts_in_the_sums_and_slices(tmp_path: Path) -> None:
    base, cand = runs(tmp_path, PRECISION_ROWS, times=8)
    decision = gate(tmp_path, base, cand, "tool_call_precision", "--by", "group")
    # the baseline's last item made no call (no precision of its own): 4 of 8 calls made
    # stays; the candidate's made one and matched it: 8 of 10. Δ = 0.8 - 0.5
    assert decision["difference"]["value"] == 0.3 and decision["n_pairs"] == 40
    # by group, each slice its own ratios: items 0, 2, 4 matched 3 of 3 against 5 of 7;
    # items 1, 3, 1 of 5 against 3 of 3
    slices = {s["value"]: s["difference"]["value"] for s in decision["slices"]}
    assert slices == {"0": round(5 / 7 - 1, 6), "1": 0.8}


def test_a_micro_metric_with_no_call_in_a_run_is_exit_2(tmp_path: Path) -> None:
    base, cand = runs(tmp_path, [([], [GET]), ([], [GET, BOOK])])
    out = tmp_path / "gate.json"
    done = run_cli("gate", "--baseline", str(base), "--candidate", str(cand), "--metric",
                   "tool_call_precision", "--allow-mismatch", "--out", str(out))  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "the baseline's actual_calls sum to 0 over the 2 paired row(s)" in done.stderr
    assert not out.exists()


def test_the_sequential_gate_refuses_a_micro_metric(tmp_path: Path) -> None:
    rows = [{"id": f"r{k}", "response_trajectory": trajectory(GET)} for k in range(4)]
    data = write_rows(tmp_path / "rows.jsonl", rows)
    done = run_cli("gate", "--sequential", str(data), "--baseline-data", str(data),
                   "-p", "tool-trajectory", "--metric", "tool_call_precision",
                   "--out", str(tmp_path / "seq"))  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "tool_call_precision is a ratio over all rows" in done.stderr


def tries(successes: list[list[int]], tmp_path: Path, name: str) -> Path:
    """A `run -p tool-trajectory` of tasks whose tries (rows sharing a `task_id`) match
    (1: the expected calls made) or not (0: only the first)."""
    rows = [
        {"id": f"t{t}-{k}", "task_id": f"t{t}",
         "response_trajectory": trajectory(GET, BOOK) if ok else trajectory(GET)}
        for t, task in enumerate(successes)
        for k, ok in enumerate(task)
    ]  # fmt: skip
    data = write_rows(tmp_path / f"{name}.jsonl", rows)
    done = run_cli("run", str(data), "-p", "tool-trajectory", "--out", str(tmp_path / name))
    assert done.returncode == 0, done.stderr
    return tmp_path / name


def test_pass_hat_of_trajectory_match_over_tries_sharing_a_task_id(tmp_path: Path) -> None:
    base = tries([[1, 1, 0, 0], [1, 1, 1, 0], [0, 0, 0, 0], [1, 1, 1, 1]], tmp_path, "b")
    cand = tries([[1, 1, 1, 0], [1, 1, 1, 1], [1, 0, 0, 0], [1, 1, 1, 1]], tmp_path, "c")
    metrics = json.loads((base / "summary.json").read_text())["metrics"]
    # pass^2 = C(c, 2) / C(4, 2) per task, averaged: (1 + 3 + 0 + 6) / 6 / 4
    assert metrics["trajectory_match_pass_hat_2"]["value"] == pytest.approx(10 / 24)
    # pass@2 = 1 - C(4 - c, 2) / C(4, 2): (5/6 + 1 + 0 + 1) / 4
    assert metrics["trajectory_match_pass_at_2"]["value"] == pytest.approx((5 / 6 + 2) / 4)
    assert "trajectory_match_pass_hat_4" in metrics and "trajectory_match_pass_hat_5" not in metrics
    decision = gate(tmp_path, base, cand, "trajectory_match_pass_hat_2")
    # the candidate's per task: 3/6, 1, 0, 1; paired by task
    assert decision["n_pairs"] == 4 and decision["difference"]["value"] == round(
        ((3 - 1) / 6 + (6 - 3) / 6 + 0 + 0) / 4, 6
    )


def test_a_macro_metric_leaves_out_an_item_it_has_no_value_for_and_counts_it(
    tmp_path: Path,
) -> None:
    """The baseline's last item made no call: its macro precision is null (the summary's
    mean leaves it out), so the gate pairs the other four and counts it, rather than
    stopping on a value that is not a number."""
    base, cand = runs(tmp_path, PRECISION_ROWS)
    done = run_cli("gate", "--baseline", str(base), "--candidate", str(cand),
                   "--metric", "tool_call_precision_macro", "--allow-mismatch",
                   "--out", str(tmp_path / "g.json"), COLUMNS="400")  # fmt: skip
    assert done.returncode in (0, 1, 3), done.stderr
    decision = json.loads((tmp_path / "g.json").read_text())
    # by hand, items 0-3: the candidate's 2/4, 2/2, 2/2, 1/1 against 2/2, 1/4, 1/1, 0/1
    assert decision["n_pairs"] == 4
    assert decision["difference"]["value"] == round((3.5 - 2.25) / 4, 6)
    assert decision["counts"]["baseline"] == {"rows": 5, "failed": 0, "no_value": 1, "unpaired": 0}
    assert decision["counts"]["candidate"]["no_value"] == 0
    assert "baseline: 5 rows, 0 failed, 1 without a value, 0 unpaired" in done.stdout
