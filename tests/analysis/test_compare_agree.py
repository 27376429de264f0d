"""`chatjudge compare` and `chatjudge agree` on real runs made with deterministic judges."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import chatjudge
from chatjudge.analysis import agree_with_humans, compare_runs
from chatjudge.analysis.agree_text import agreement_lines
from chatjudge.cli import app
from chatjudge.errors import UsageError

runner = CliRunner()


def fair_judge(prompt: str) -> str:
    a = re.search(r"### Response A\n(.*?)\n\n### Response B", prompt, re.S).group(1)
    b = re.search(r"### Response B\n(.*)", prompt, re.S).group(1)
    choice = (
        "A"
        if "GOOD" in a and "GOOD" not in b
        else "B"
        if "GOOD" in b and "GOOD" not in a
        else "SAME"
    )
    return json.dumps({"explanation": "x", "pairwise_choice": choice})


def candidate_run(tmp_path: Path, name: str, wins: int, ties: int, n: int = 20) -> Path:
    """A pairwise run where the candidate wins `wins` items, ties `ties`, loses the rest."""
    rows = []
    for i in range(n):
        if i < wins:
            base, cand = "plain", "GOOD"
        elif i < wins + ties:
            base, cand = "GOOD one", "GOOD two"
        else:
            base, cand = "GOOD", "plain"
        rows.append(
            {
                "id": f"q{i}",
                "prompt": f"question {i}",
                "baseline_model_response": base,
                "response": cand,
            }
        )
    out = tmp_path / name
    chatjudge.evaluate(rows, "pairwise-chat-quality", fair_judge, out, report=False)
    return out


def test_compare_ranks_candidates_against_the_shared_baseline(tmp_path: Path) -> None:
    runs = {
        "strong": candidate_run(tmp_path, "strong", 32, 4, n=40),
        "middling": candidate_run(tmp_path, "middling", 18, 4, n=40),
        "weak": candidate_run(tmp_path, "weak", 6, 4, n=40),
    }
    result = compare_runs(runs)
    order = [r["model"] for r in result["ratings"]]
    assert order.index("strong") < order.index("middling") < order.index("weak")
    rating = {r["model"]: r for r in result["ratings"]}
    assert rating["baseline"]["rating"] == pytest.approx(1000.0)  # anchored
    for r in result["ratings"]:
        lo, hi = r["ci95"]
        assert lo <= r["rating"] <= hi
    assert result["outcomes"]["strong"] == {"won": 32, "tied": 4, "lost": 4}  # ties explicit
    assert result["n_items"] == 40 and result["n_battles"] == 120
    i, j = result["models"].index("strong"), result["models"].index("weak")
    assert result["win_rates"][i][j] > 0.5 > result["win_rates"][j][i]

    done = runner.invoke(
        app, ["compare", *(f"{k}={v}" for k, v in runs.items()), "--out", str(tmp_path / "cmp")]
    )
    assert done.exit_code == 0, done.output
    assert "strong" in done.output and "baseline" in done.output
    assert json.loads((tmp_path / "cmp" / "compare.json").read_text())["models"] == result["models"]
    assert (tmp_path / "cmp" / "compare.html").is_file()


def test_compare_on_few_items_says_too_few_to_say(tmp_path: Path) -> None:
    runs = {"strong": candidate_run(tmp_path, "strong", 3, 1, n=6)}
    result = compare_runs(runs)
    rating = {r["model"]: r for r in result["ratings"]}
    assert rating["strong"]["ci95"] is None
    assert rating["strong"]["too_few"] == "too few to say: 6 battles (fewer than 30)"
    done = runner.invoke(
        app, ["compare", f"strong={runs['strong']}", "--out", str(tmp_path / "cmp")]
    )
    assert done.exit_code == 0, done.output
    assert "too few to say" in done.output


def test_compare_refuses_mixed_protocols(tmp_path: Path) -> None:
    pair = candidate_run(tmp_path, "p", 5, 5)
    point = tmp_path / "point"
    chatjudge.evaluate(
        [{"chat": "hi", "question": "q", "answer": "a"}],
        "interactivity-accuracy",
        lambda p: (
            '{"interactivity": {"thought": "t", "score": 2}, '
            '"accuracy": {"thought": "t", "score": 1}}'
        ),
        point,
        report=False,
    )
    with pytest.raises(UsageError, match="mix protocols"):
        compare_runs({"p": pair, "point": point})


def test_agree_pairwise_with_and_without_ties(tmp_path: Path) -> None:
    run = candidate_run(tmp_path, "run", wins=4, ties=2, n=8)  # judge: B B B B SAME SAME A A
    human = tmp_path / "human.jsonl"
    labels = ["B", "B", "A", "B", "SAME", "B", "A", "SAME"]
    human.write_text(
        "".join(json.dumps({"id": f"q{i}", "label": lab}) + "\n" for i, lab in enumerate(labels))
    )
    result = agree_with_humans(run, human)
    # Equal on q0, q1, q3, q4, q6 -> 5 of 8.
    assert result["with_ties"]["agreement"] == pytest.approx(5 / 8)
    assert result["with_ties"]["n"] == 8
    # Without ties, q4 q5 (judge SAME) and q7 (human SAME) drop: q0 q1 q2 q3 q6, 4 of 5 equal.
    assert result["without_ties"]["n"] == 5
    assert result["without_ties"]["agreement"] == pytest.approx(4 / 5)
    # 8 pairs: the share's exact interval, and no interval of kappa (too few to say).
    assert result["with_ties"]["ci95"] == pytest.approx([0.2449, 0.9148], abs=1e-4)
    assert result["with_ties"]["kappa_ci95"] is None
    assert result["with_ties"]["kappa_too_few"] == "too few to say: 8 pairs (fewer than 30)"

    done = runner.invoke(app, ["agree", str(run), "--human", str(human)])
    assert done.exit_code == 0, done.output
    assert "with ties (S1): agreement 0.625 [0.245, 0.915]" in done.output
    assert "kappa 0.400 (too few to say), n=8" in agreement_lines(result)
    assert (run / "agreement.json").is_file()


def test_agree_pointwise_correlation_and_alpha(tmp_path: Path) -> None:
    rows = [
        {"id": f"d{i}", "chat": f"**user**: q{i}", "question": "q", "answer": str(i % 3 + 1)}
        for i in range(12)
    ]

    def judge(prompt: str) -> str:
        score = int(re.search(r"Ground Truth Answer: (\d)", prompt).group(1))
        return json.dumps(
            {
                "interactivity": {"thought": "t", "score": score},
                "accuracy": {"thought": "t", "score": 1},
            }
        )

    run = tmp_path / "run"
    chatjudge.evaluate(rows, "interactivity-accuracy", judge, run, report=False)
    human = tmp_path / "human.csv"
    lines = ["id,rater,score"]
    for i in range(12):
        truth = i % 3 + 1
        lines += [f"d{i},r1,{truth}", f"d{i},r2,{min(3, truth + (i % 2))}"]
    human.write_text("\n".join(lines) + "\n")
    result = agree_with_humans(run, human, score="interactivity")
    corr = result["correlation"]
    assert corr["n"] == 12 and corr["spearman"] > 0.8
    # 12 items: no interval of a correlation or of alpha is valid; each says so.
    assert corr["spearman_ci95"] is None and corr["too_few"].startswith("too few to say: 12")
    alpha = result["krippendorff_alpha"]
    assert alpha["n_raters"] == 2 and alpha["humans"]["value"] is not None
    assert alpha["humans"]["ci95"] is None and "12 items" in alpha["humans"]["too_few"]
    text = agreement_lines(result)
    assert "Spearman" in text and "(too few to say)" in text


def test_agree_errors_name_the_problem(tmp_path: Path) -> None:
    run = candidate_run(tmp_path, "run", 2, 2, n=4)
    missing = runner.invoke(app, ["agree", str(run), "--human", str(tmp_path / "none.jsonl")])
    assert missing.exit_code == 2 and "not found" in missing.output
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"id": "zzz", "label": "A"}) + "\n")
    done = runner.invoke(app, ["agree", str(run), "--human", str(other)])
    assert done.exit_code == 2 and "no item" in done.output


def test_agree_with_a_constant_judge_says_so(tmp_path: Path) -> None:
    rows = [{"id": f"d{i}", "chat": "hi", "question": "q", "answer": "a"} for i in range(5)]
    run = tmp_path / "run"
    chatjudge.evaluate(
        rows,
        "interactivity-accuracy",
        lambda p: (
            '{"interactivity": {"thought": "t", "score": 2}, '
            '"accuracy": {"thought": "t", "score": 1}}'
        ),
        run,
        report=False,
    )
    human = tmp_path / "human.jsonl"
    human.write_text("".join(json.dumps({"id": f"d{i}", "score": i}) + "\n" for i in range(5)))
    done = runner.invoke(
        app, ["agree", str(run), "--human", str(human), "--score", "interactivity"]
    )
    assert done.exit_code == 0, done.output
    assert "judge scores are constant (2): no correlation" in done.output
