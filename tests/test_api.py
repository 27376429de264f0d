"""`chatjudge.evaluate()` with Python-callable judges: inputs, flip, samples, panels, options."""

from __future__ import annotations

import datetime
import decimal
import json
import re
from pathlib import Path

import pandas as pd
import pytest

import chatjudge
from chatjudge.errors import DataValidationError, UsageError
from tests.support.report_page import embedded_items


def pair(i: int, better: str) -> dict:
    """A pairwise item whose better response carries the word GOOD."""
    good, bad = f"GOOD answer {i}", f"weak answer {i}"
    return {
        "id": f"p{i}",
        "history": [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}],
        "prompt": f"question {i}",
        "baseline_model_response": good if better == "baseline" else bad,
        "response": good if better == "candidate" else bad,
    }


PAIRS = [pair(0, "candidate"), pair(1, "candidate"), pair(2, "baseline"), pair(3, "candidate")]


def _shown(prompt: str) -> tuple[str, str]:
    a = re.search(r"### Response A\n(.*?)\n\n### Response B", prompt, re.S).group(1)
    b = re.search(r"### Response B\n(.*?)\n", prompt, re.S).group(1)
    return a, b


def fair_judge(prompt: str) -> str:
    """Prefers whichever shown response says GOOD, in either order."""
    a, b = _shown(prompt)
    choice = "A" if "GOOD" in a else "B" if "GOOD" in b else "SAME"
    return json.dumps({"explanation": "GOOD wins", "pairwise_choice": choice})


def first_position_judge(prompt: str) -> str:
    """Always prefers Response A: pure position bias."""
    return '{"explanation": "A looks fine", "pairwise_choice": "A"}'


async def async_fair_judge(prompt: str, schema: dict) -> dict:
    assert schema["properties"]["pairwise_choice"]["enum"] == ["A", "SAME", "B"]
    return json.loads(fair_judge(prompt))


def test_flip_maps_verdicts_to_the_candidate_side(tmp_path: Path) -> None:
    result = chatjudge.evaluate(
        PAIRS, "pairwise-chat-quality", fair_judge, tmp_path / "r", report=False
    )
    m = result.summary["metrics"]
    assert m["candidate_win_rate"]["value"] == 0.75 and m["baseline_win_rate"]["value"] == 0.25
    assert m["position_consistency"]["value"] == 1.0
    table = result.table
    assert list(table["pairwise_choice"]) == ["CANDIDATE", "CANDIDATE", "BASELINE", "CANDIDATE"]
    assert table["consistent"].all()
    calls = json.loads((tmp_path / "r" / "results.jsonl").read_text().splitlines()[0])["calls"]
    assert [(c["flipped"], c["label"]) for c in calls] == [(False, "B"), (True, "A")]


def test_position_bias_becomes_ties_and_is_measured(tmp_path: Path) -> None:
    result = chatjudge.evaluate(
        PAIRS, "pairwise-chat-quality", first_position_judge, tmp_path / "r", report=False
    )
    m = result.summary["metrics"]
    assert m["tie_rate"]["value"] == 1.0 and m["position_consistency"]["value"] == 0.0
    unflipped = chatjudge.evaluate(
        PAIRS,
        "pairwise-chat-quality",
        first_position_judge,
        tmp_path / "r2",
        flip=False,
        report=False,
    )
    assert unflipped.summary["metrics"]["baseline_win_rate"]["value"] == 1.0
    assert "position_consistency" not in unflipped.summary["metrics"]


def test_panel_majority_per_judge_metrics_and_agreement(tmp_path: Path) -> None:
    result = chatjudge.evaluate(
        PAIRS,
        "pairwise-chat-quality",
        [fair_judge, async_fair_judge, first_position_judge],
        tmp_path / "r",
        report=False,
    )
    s = result.summary
    assert s["judges"] == [
        "python/fair_judge",
        "python/async_fair_judge",
        "python/first_position_judge",
    ]
    assert s["metrics"]["candidate_win_rate"]["value"] == 0.75  # two fair judges outvote
    per = s["per_judge"]
    assert per["python/first_position_judge"]["metrics"]["tie_rate"]["value"] == 1.0
    pairs = {tuple(p["judges"]): p["agreement"] for p in per["inter_judge_agreement"]}
    assert pairs[("python/fair_judge", "python/async_fair_judge")] == 1.0
    assert pairs[("python/fair_judge", "python/first_position_judge")] == 0.0


def test_dataframe_input_column_map_and_limit(tmp_path: Path) -> None:
    frame = pd.DataFrame(PAIRS).rename(columns={"response": "candidate"})
    result = chatjudge.evaluate(
        frame,
        "pairwise-chat-quality",
        fair_judge,
        tmp_path / "r",
        column_map={"candidate": "response"},
        limit=2,
        report=False,
    )
    assert result.summary["n_items"] == 2 and list(result.table["id"]) == ["p0", "p1"]


def test_bad_rows_and_unknown_options_fail_before_any_call(tmp_path: Path) -> None:
    calls = []

    def counting(prompt: str) -> str:
        calls.append(prompt)
        return fair_judge(prompt)

    with pytest.raises(DataValidationError, match="row 2, field 'prompt'"):
        chatjudge.evaluate(
            [PAIRS[0], {**PAIRS[1], "prompt": None}],
            "pairwise-chat-quality",
            counting,
            tmp_path / "r",
        )
    with pytest.raises(UsageError, match="concurency"):
        chatjudge.evaluate(PAIRS, "pairwise-chat-quality", counting, tmp_path / "r", concurency=4)
    assert calls == []


def test_a_judge_exception_fails_the_item_not_the_run(tmp_path: Path) -> None:
    def flaky(prompt: str) -> str:
        if "question 1" in prompt:
            raise RuntimeError("model crashed")
        return fair_judge(prompt)

    result = chatjudge.evaluate(PAIRS, "pairwise-chat-quality", flaky, tmp_path / "r", report=False)
    assert result.summary["n_failed"] == 1 and result.summary["n_ok"] == 3
    failed = result.table.set_index("id").loc["p1"]
    assert failed["status"] == "failed" and "model crashed" in failed["error"]


def test_message_values_json_cannot_hold_are_written_as_text(tmp_path: Path) -> None:
    """A date or a Decimal kept inside a message (extra keys pass validation) must not stop
    the run after its judge calls are spent: results.jsonl and the report hold them as text."""
    rows = [dict(PAIRS[0])]
    rows[0]["history"] = [
        {"role": "user", "content": "hello", "sent": datetime.datetime(2026, 1, 2, 3, 4)},
        {"role": "assistant", "content": "hi", "cost": decimal.Decimal("0.25")},
    ]
    result = chatjudge.evaluate(rows, "pairwise-chat-quality", fair_judge, tmp_path / "r")
    assert result.summary["n_ok"] == 1
    line = json.loads((tmp_path / "r" / "results.jsonl").read_text(encoding="utf-8"))
    assert line["fields"]["history"][0]["sent"] == "2026-01-02T03:04:00"
    assert line["fields"]["history"][1]["cost"] == "0.25"
    page = embedded_items((tmp_path / "r" / "report.html").read_text(encoding="utf-8"))
    assert page[0]["fields"]["history"][0]["sent"] == "2026-01-02T03:04:00"


def test_pointwise_samples_mean_and_agreement(tmp_path: Path) -> None:
    replies = iter([1, 3, 3] * 10)

    def wobbly(prompt: str) -> str:
        score = next(replies)
        return json.dumps(
            {
                "interactivity": {"thought": "t", "score": score},
                "accuracy": {"thought": "t", "score": 1},
            }
        )

    rows = [{"chat": "**user**: hi", "question": "q", "answer": "a"}]
    result = chatjudge.evaluate(
        rows,
        "interactivity-accuracy",
        wobbly,
        tmp_path / "r",
        samples=3,
        concurrency=1,
        report=False,
    )
    record = json.loads((tmp_path / "r" / "results.jsonl").read_text())
    assert record["scores"]["interactivity"] == pytest.approx(7 / 3, abs=1e-6)
    assert record["agreement"] == pytest.approx(2 / 3)
    assert result.summary["metrics"]["itr"]["value"] == pytest.approx((7 / 3 - 2.5) * 200, abs=1e-3)


def test_evaluate_inside_a_running_event_loop(tmp_path: Path) -> None:
    import asyncio

    async def notebook_cell() -> dict:
        return chatjudge.evaluate(
            PAIRS, "pairwise-chat-quality", fair_judge, tmp_path / "r", report=False
        ).summary

    assert asyncio.run(notebook_cell())["n_ok"] == 4
