"""pass^k and pass@k in a run's summary: which rows are tries of one task (`task_id`,
`--samples` outputs), which metrics are 0/1, the range of k, the tasks left out, and a try's
majority over its judge samples; through real runs of the engine with Python judges."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import chatjudge
from chatjudge.formats.io import read_model
from chatjudge.formats.summary import Summary
from chatjudge.protocols import get_protocol
from chatjudge.summarize.run_summary import SummaryBuilder
from chatjudge.summarize.tries import parse_passk, task_of, zero_one_metrics

RESOLVED = """\
name = "resolved"
kind = "pointwise"
template = "Did the assistant resolve the user's problem?\\n{chat}\\n"

[[fields]]
name = "chat"
conversation = true

[[scores]]
name = "resolved"
path = "resolved"
min = 0
max = 1
"""


def resolved_judge(prompt: str) -> str:
    """`OK` in the conversation resolves it."""
    return json.dumps({"resolved": int("OK" in prompt)})


@pytest.fixture
def resolved(tmp_path: Path) -> Path:
    path = tmp_path / "resolved.toml"
    path.write_text(RESOLVED, encoding="utf-8")
    return path


def test_a_row_is_a_try_of_its_task_id_else_of_its_sampled_row() -> None:
    assert task_of("r1", {"task_id": "t7", "sample": 1}) == "t7"  # task_id first
    assert task_of("r1#2", {"sample": 2}) == "r1"
    assert task_of("r1#2", {}) is None  # a `#` in an id alone says nothing
    assert task_of("r1", {"task_id": float("nan")}) is None
    assert task_of("r1", {"task_id": 3}) == "3"
    assert task_of("r1", {"task_id": ""}) is None  # empty: missing, not one task of all
    assert task_of("r1#2", {"task_id": " ", "sample": 2}) == "r1"


def test_the_zero_one_metrics_of_each_protocol(resolved: Path) -> None:
    assert [m.name for m in zero_one_metrics(get_protocol("interactivity-accuracy"))] == [
        "accuracy"
    ]
    pairwise = zero_one_metrics(get_protocol("pairwise-chat-quality"))
    assert [m.name for m in pairwise] == ["candidate_win_rate", "baseline_win_rate", "tie_rate"]
    assert [m.name for m in zero_one_metrics(get_protocol(resolved))] == ["resolved"]


def test_pass_metric_names_parse_back() -> None:
    assert parse_passk("accuracy_pass_hat_2") == ("accuracy", "pass_hat", 2)
    assert parse_passk("tool_call_pass_at_12") == ("tool_call", "pass_at", 12)
    assert parse_passk("accuracy") is None and parse_passk("accuracy_pass_hat_0") is None


def test_tasks_by_task_id_through_a_custom_protocol(tmp_path: Path, resolved: Path) -> None:
    # t1: 2 of 4 tries resolved, t2: 3 of 3, t3: 1 of 3; t4 and t5 tried once
    tries = {"t1": "OOXX", "t2": "OOO", "t3": "XOX", "t4": "O", "t5": "X"}
    rows = [
        {"id": f"{task}-{k}", "task_id": task, "chat": "OK" if mark == "O" else "no"}
        for task, marks in tries.items()
        for k, mark in enumerate(marks)
    ]
    out = tmp_path / "run"
    chatjudge.evaluate(rows, resolved, judge=resolved_judge, out=out, report=False)
    summary = read_model(out / "summary.json", Summary)
    m = summary.metrics
    assert summary.format == 2 and summary.pass_k is not None
    assert summary.pass_k.metrics == ["resolved"]
    assert (summary.pass_k.n_tasks, summary.pass_k.single_try_tasks) == (3, 2)
    assert (summary.pass_k.max_k, summary.pass_k.min_tries, summary.pass_k.max_tries) == (3, 3, 4)
    passk = sorted(name for name in m if "_pass_" in name)
    assert passk == sorted(
        [f"resolved_pass_hat_{k}" for k in (1, 2, 3)] + [f"resolved_pass_at_{k}" for k in (1, 2, 3)]
    )  # k = 1..3: the fewest tries among the tasks counted
    assert m["resolved_pass_hat_2"].value == pytest.approx((1 / 6 + 1 + 0) / 3)
    assert m["resolved_pass_at_2"].value == pytest.approx((5 / 6 + 1 + 2 / 3) / 3)
    assert m["resolved_pass_hat_3"].value == pytest.approx((0 + 1 + 0) / 3)
    assert m["resolved_pass_hat_1"].value == pytest.approx((2 / 4 + 1 + 1 / 3) / 3)
    assert all(m[name].n == 3 for name in passk)
    assert m["resolved"].n == 12  # the plain metric still counts every try


def test_rows_on_their_own_give_no_pass_k(tmp_path: Path, resolved: Path) -> None:
    rows = [{"id": f"r{i}", "chat": "OK"} for i in range(4)]
    chatjudge.evaluate(rows, resolved, judge=resolved_judge, out=tmp_path / "r", report=False)
    written = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert "pass_k" not in written and not any("_pass_" in name for name in written["metrics"])


class SampledJudge:
    """Per conversation, the judge's samples say 1 as often as its `Y=<count>` marker says,
    then 0: `Y=2` with 3 samples is a 2-1 majority; with 2 samples `Y=1` is a tie."""

    def __init__(self) -> None:
        self.seen: Counter[str] = Counter()

    def __call__(self, prompt: str) -> str:
        marker = re.search(r"Y=(\d)", prompt)
        assert marker is not None
        self.seen[prompt] += 1
        accurate = int(self.seen[prompt] <= int(marker[1]))
        return json.dumps(
            {
                "interactivity": {"thought": "t", "score": 2},
                "accuracy": {"thought": "t", "score": accurate},
            }
        )


def sampled_rows(yes: dict[str, list[int]]) -> list[dict[str, Any]]:
    """Rows as `simulate --samples` writes them: per task, its tries' `Y` markers."""
    return [
        {
            "id": f"{task}#{k}",
            "sample": k,
            "question": f"q {task}",
            "answer": "a",
            "chat": f"user: hi\nassistant: try {k} Y={y}",
        }
        for task, marks in yes.items()
        for k, y in enumerate(marks)
    ]


def test_a_try_is_the_majority_of_its_judge_samples(tmp_path: Path) -> None:
    # 3 judge samples per try: Y=2 is a success (2 of 3), Y=1 a failure (1 of 3)
    rows = sampled_rows({"a": [2, 2, 1], "b": [1, 3, 0]})
    out = tmp_path / "three"
    chatjudge.evaluate(
        rows, "interactivity-accuracy", judge=SampledJudge(), out=out, samples=3, report=False
    )
    m = read_model(out / "summary.json", Summary).metrics
    # a: 2 of 3 tries succeed, b: 1 of 3: pass^1 = (2/3 + 1/3) / 2, pass^2 = (1/3 + 0) / 2
    assert m["accuracy_pass_hat_1"].value == pytest.approx(0.5)
    assert m["accuracy_pass_hat_2"].value == pytest.approx(1 / 6)
    assert m["accuracy"].value == pytest.approx((2 + 2 + 1 + 1 + 3 + 0) / 18)  # the mean call

    # 2 judge samples per try: Y=1 is a tie, which is no success
    rows = sampled_rows({"a": [1, 2], "b": [1, 1]})
    out = tmp_path / "two"
    chatjudge.evaluate(
        rows, "interactivity-accuracy", judge=SampledJudge(), out=out, samples=2, report=False
    )
    m = read_model(out / "summary.json", Summary).metrics
    assert m["accuracy_pass_hat_1"].value == pytest.approx((1 / 2 + 0) / 2)
    assert m["accuracy_pass_at_2"].value == pytest.approx((1 + 0) / 2)


def test_the_builder_counts_failed_items_as_no_try() -> None:
    builder = SummaryBuilder(get_protocol("interactivity-accuracy"), ["j"], flip=False, samples=1)
    items = [("t", 1), ("t", 1), ("t", None), ("u", 0), ("u", None)]
    for index, (task, acc) in enumerate(items):
        if acc is None:
            builder.add(index, False, {}, None, task=task)
        else:
            builder.add(index, True, {"interactivity": 2, "accuracy": acc}, None, task=task)
    built = builder.build({}, None)
    assert built.pass_k is not None
    assert (built.pass_k.n_tasks, built.pass_k.single_try_tasks) == (1, 1)  # u: one ok try
    assert built.metrics["accuracy_pass_hat_2"].value == 1.0  # t: 2 of 2 ok tries
