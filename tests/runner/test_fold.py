"""A call record has one shape: a judge's call and a deterministic scorer's are both written by
`CallOutcome.to_dict`, in `CallRecord`'s field order (issue 42, item 5)."""

from __future__ import annotations

import json

from chatjudge.data import Item
from chatjudge.formats.results import CallRecord, ResultRecord
from chatjudge.runner.aggregate import CallOutcome
from chatjudge.runner.fold import scored_record
from chatjudge.trajectories import Scored
from chatjudge.verdicts import Verdict


def _as_the_model_writes(call: dict) -> str:
    return json.dumps(CallRecord(**call).model_dump(mode="json"))


def test_a_judge_call_is_written_as_the_model_writes_it() -> None:
    ok = CallOutcome("openai/j", 1, True, raw="{}", cached=True, input_tokens=9, latency=0.12345)
    ok.verdict = Verdict({"choice": "A"}, {"choice": "why"}, "A")
    failed = CallOutcome("openai/j", 0, False, raw="no", error="not JSON", output_tokens=2)
    for call in (ok.to_dict(), failed.to_dict()):
        assert json.dumps(call) == _as_the_model_writes(call)
    assert ok.to_dict()["latency"] == 0.1235
    assert (failed.to_dict()["status"], failed.to_dict()["scores"]) == ("failed", {})


def test_a_scored_item_has_one_call_written_as_a_judges() -> None:
    item = Item(index=3, row=4, id="r4", fields={"x": 1}, text={}, data={"y": 2})
    scored = Scored({"trajectory_match": 1.0}, {"trajectory": "matched"}, {"matched": True})
    record = scored_record(item, "tool-trajectory", scored)
    (call,) = record["calls"]
    assert json.dumps(call) == _as_the_model_writes(call)
    assert call == {
        "judge": "tool-trajectory",
        "sample": 0,
        "flipped": False,
        "status": "ok",
        "scores": {"trajectory_match": 1.0},
        "label": None,
        "rationale": {},
        "raw": None,
        "error": None,
        "cached": False,
        "input_tokens": None,
        "output_tokens": None,
        "latency": None,
    }
    assert ResultRecord.model_validate(record).tool_calls == {"matched": True}
