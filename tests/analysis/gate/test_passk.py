"""`chatjudge gate --metric <metric>_pass_hat_<k>` (and `_pass_at_<k>`): tasks are the rows,
paired by task between the runs, each task's estimate from its tries; run directories the
real engine wrote with Python judges."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

import chatjudge
from chatjudge.errors import UsageError
from chatjudge.formats.analyses import Gate
from chatjudge.formats.io import read_model
from tests.analysis.gate.test_decide import judged
from tests.support.cli import run_cli


def tries(successes: list[list[int]], *, by: str = "sample") -> list[dict[str, Any]]:
    """Per task, its tries' accuracy (0, 1, or None: the judge gives no verdict), as
    `simulate --samples` writes them (`by="sample"`) or as rows sharing a `task_id`."""
    rows = []
    for t, task in enumerate(successes):
        for k, acc in enumerate(task):
            mark = "BROKEN" if acc is None else f"ACC={acc} INT=2"
            row: dict[str, Any] = {
                "question": f"question {t}",
                "answer": f"answer {t}",
                "chat": f"user: hi {t} try {k}\nassistant: {mark}",
            }
            if by == "sample":
                row.update(id=f"t{t}#{k}", sample=k)
            else:
                row.update(id=f"row-{t}-{k}", task_id=f"t{t}")
            rows.append(row)
    return rows


def hat(n: int, c: int, k: int) -> float:
    return math.comb(c, k) / math.comb(n, k)


BASE = [[1, 1, 0, 0], [1, 1, 1, 0], [0, 0, 0, 0], [1, 1, 1, 1]] * 3
CAND = [[1, 1, 1, 0], [1, 1, 1, 1], [1, 0, 0, 0], [1, 1, 1, 1]] * 3


def expected(base: list[list[int]], cand: list[list[int]], k: int) -> float:
    return sum(
        hat(len(c), sum(c), k) - hat(len(b), sum(b), k) for b, c in zip(base, cand, strict=True)
    ) / len(base)


@pytest.mark.parametrize("by", ["sample", "task_id"])
def test_pass_hat_is_paired_by_task(tmp_path: Path, by: str) -> None:
    base = judged(tries(BASE, by=by), tmp_path / "b")
    cand = judged(tries(CAND, by=by), tmp_path / "c")
    g = chatjudge.gate(cand, base, metric="accuracy_pass_hat_2", report=False)
    assert g.metric == "accuracy_pass_hat_2"
    assert g.n_pairs == g.n_units == 12  # tasks, not the 48 tries
    # per task: (1/6 -> 1/2), (1/2 -> 1), (0 -> 0), (1 -> 1)
    assert g.difference.value == pytest.approx(expected(BASE, CAND, 2), abs=1e-6)
    assert g.difference.value == pytest.approx((1 / 3 + 1 / 2) / 4, abs=1e-6)
    lo, hi = g.difference.ci95
    assert lo <= g.difference.value <= hi
    at = chatjudge.gate(cand, base, metric="accuracy_pass_at_3", report=False)
    at_expected = sum(
        (1 - hat(4, 4 - sum(c), 3)) - (1 - hat(4, 4 - sum(b), 3))
        for b, c in zip(BASE, CAND, strict=True)
    ) / len(BASE)
    assert at.difference.value == pytest.approx(at_expected, abs=1e-6)


def test_the_cli_decides_on_pass_hat(tmp_path: Path) -> None:
    # 30 tasks: the candidate gets every try right, the baseline one task in two
    base = judged(tries([[1, 1, 1], [1, 0, 1]] * 15), tmp_path / "b")
    cand = judged(tries([[1, 1, 1]] * 30), tmp_path / "c")
    out = tmp_path / "gate.json"
    done = run_cli(
        "gate", "--baseline", str(base), "--candidate", str(cand),
        "--metric", "accuracy_pass_hat_2", "--require", "better", "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    g = read_model(out, Gate)
    assert g.outcome == "pass" and g.n_pairs == 30
    assert g.difference.value == pytest.approx(expected([[1, 1, 1], [1, 0, 1]] * 15,
                                                        [[1, 1, 1]] * 30, 2))  # fmt: skip


def test_a_task_short_of_k_tries_judged_ok_counts_as_failed(tmp_path: Path) -> None:
    base_tries = [[1, 1, 0], [1, None, None], [0, 1, 1], [1, 1, 1]]
    base = judged(tries(base_tries), tmp_path / "b")
    cand = judged(tries([[1, 1, 1]] * 4), tmp_path / "c")
    g = chatjudge.gate(cand, base, metric="accuracy_pass_hat_2", report=False)
    assert g.n_pairs == 3  # task t1 has one try judged ok: no pass^2
    assert g.counts["baseline"] == {"rows": 4, "failed": 1, "no_value": 0, "unpaired": 0}
    assert g.difference.value == pytest.approx((2 / 3 + 2 / 3 + 0) / 3, abs=1e-6)
    # at k = 3 the short task is the same, and the others have all three tries
    g3 = chatjudge.gate(cand, base, metric="accuracy_pass_hat_3", report=False)
    assert g3.n_pairs == 3 and g3.difference.value == pytest.approx(2 / 3, abs=1e-6)


def test_pass_metrics_of_metrics_that_are_not_0_1_are_refused(tmp_path: Path) -> None:
    base = judged(tries(BASE[:4]), tmp_path / "b")
    cand = judged(tries(CAND[:4]), tmp_path / "c")
    with pytest.raises(UsageError, match=r"_pass_hat_<k> / _pass_at_<k> of accuracy"):
        chatjudge.gate(cand, base, metric="interactivity_pass_hat_2", report=False)
    done = run_cli("gate", "--baseline", str(base), "--candidate", str(cand),
                   "--metric", "itr_pass_at_2")  # fmt: skip
    assert done.returncode == 2 and "not a metric of interactivity-accuracy" in done.stderr


def test_the_sequential_gate_refuses_pass_metrics(tmp_path: Path) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(f'{{"id": "r{i}", "chat": "c", "question": "q", "answer": "a"}}\n'
                            for i in range(4)))  # fmt: skip
    done = run_cli(
        "gate", "--sequential", str(data), "--baseline-data", str(data),
        "-p", "interactivity-accuracy", "--metric", "accuracy_pass_hat_2",
        "--out", str(tmp_path / "seq"),
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--sequential judges rows in batches, not whole tasks" in done.stderr


# --- end to end: simulate --samples, run, gate -------------------------------------------


def test_simulate_samples_then_run_then_gate_on_pass_hat(tmp_path: Path) -> None:
    """Two assistants (the stand-in's replies follow the seed, as a sampling model's do)
    each talk 4 times per question with a simulated user; the stand-in judge grades every
    conversation; the gate pairs the questions' pass^2 between the two runs."""
    from tests.support.stub_openai import StubServer

    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(
        f'{{"id": "q{i}", "question": "What is {i} + {i}?", "answer": "{2 * i}"}}\n'
        for i in range(10)
    ))  # fmt: skip
    with (
        StubServer(seeded=True) as assistant,
        StubServer(seeded=True) as user,
        StubServer() as judge,
    ):
        runs = {}
        for name, seed in (("base", 1), ("cand", 101)):
            rows = tmp_path / f"{name}.jsonl"
            done = run_cli(
                "simulate", str(questions), "-a", "openai/assistant", "--assistant-base-url",
                assistant.base_url, "-u", "openai/user", "--user-base-url", user.base_url,
                "--samples", "4", "--seed", str(seed), "--max-turns", "1", "--out", str(rows),
                "--quiet", key="dummy",
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
            runs[name] = tmp_path / f"{name}-run"
            done = run_cli(
                "run", str(rows), "-p", "interactivity-accuracy", "--judge", "openai/judge",
                "--base-url", judge.base_url, "--out", str(runs[name]), "--quiet", key="dummy",
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
    successes = {}
    for name, run in runs.items():
        by_task: dict[str, list[int]] = {}
        for line in (run / "results.jsonl").read_text().splitlines():
            record = json.loads(line)
            by_task.setdefault(record["id"].split("#")[0], []).append(
                int(record["scores"]["accuracy"])
            )
        assert sorted(by_task) == [f"q{i}" for i in range(10)]
        assert all(len(t) == 4 for t in by_task.values())
        successes[name] = by_task
        summary = json.loads((run / "summary.json").read_text())
        assert summary["pass_k"]["n_tasks"] == 10 and summary["pass_k"]["max_k"] == 4
        for k in (1, 2, 3, 4):
            value = sum(hat(4, sum(t), k) for t in by_task.values()) / 10
            assert summary["metrics"][f"accuracy_pass_hat_{k}"]["value"] == pytest.approx(value)
    counts = [sum(t) for name in successes for t in successes[name].values()]
    assert any(0 < c < 4 for c in counts)  # samples that differ: pass^k is not accuracy
    out = tmp_path / "gate.json"
    done = run_cli("gate", "--baseline", str(runs["base"]), "--candidate", str(runs["cand"]),
                   "--metric", "accuracy_pass_hat_2", "--out", str(out))  # fmt: skip
    g = read_model(out, Gate)
    assert done.returncode == {"pass": 0, "fail": 1, "inconclusive": 3}[g.outcome], done.stderr
    assert g.metric == "accuracy_pass_hat_2" and g.n_pairs == 10
    delta = (
        sum(
            hat(4, sum(successes["cand"][t]), 2) - hat(4, sum(successes["base"][t]), 2)
            for t in successes["base"]
        )
        / 10
    )
    assert g.difference.value == pytest.approx(delta, abs=1e-6)
    assert "accuracy_pass_hat_2" in done.stdout
