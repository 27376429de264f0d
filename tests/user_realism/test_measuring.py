"""`chatjudge.realism(...)` end to end against Python function models: every file written,
realism.json with the command's fields, the page escaping what the conversations say."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import chatjudge
from chatjudge.chat.types import Reply
from chatjudge.errors import BudgetReachedError
from tests.user_realism.standins import Recorder
from tests.user_realism.test_command import REAL


def test_every_file_is_written_and_realism_json_holds_the_command_fields(tmp_path: Path) -> None:
    rec = Recorder()
    said = [
        {"role": "user", "content": "<script>alert(1)</script>"},
        {"role": "assistant", "content": "ok"},
    ]
    rows = [{"id": "x", "chat": said}, *REAL]
    result = chatjudge.realism(rows, rec.assistant, tmp_path / "r", user=rec.user,
                               goal_model=rec.goal_writer, judge=rec.judge, samples=2)  # fmt: skip
    names = {p.name for p in (tmp_path / "r").iterdir()}
    assert {"goals.jsonl", "simulated.jsonl", "realism.json", "report.html"} <= names
    written = json.loads((tmp_path / "r" / "realism.json").read_text())
    assert (written["goals"], written["samples"], written["cut_share"]) == (4, 2, 0.0)
    assert written["failed"] == {} and result.n_goals == 4 and result.k == 2
    page = (tmp_path / "r" / "report.html").read_text()
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)" in page
    assert 'data-measure="disclosure"' in page and 'id="discriminator-accuracy"' in page


class PricedJudge(Recorder):
    """The judge reports 1,000 input tokens a call: $1 at --price-in 1000."""

    def judge(self, messages: list[dict[str, Any]] | str) -> Any:
        return Reply(super().judge(messages), input_tokens=1000, output_tokens=0)


def _priced(rec: Recorder, out: Path, limit: float) -> Any:
    return chatjudge.realism(REAL, rec.assistant, out, user=rec.user, goal_model=rec.goal_writer,
                             judge=rec.judge, price_in=1000, price_out=0, concurrency=1,
                             max_cost_usd=limit)  # fmt: skip


def test_the_budget_stops_with_what_finished_kept_and_a_rerun_pays_only_the_rest(
    tmp_path: Path,
) -> None:
    fresh = PricedJudge()
    _priced(fresh, tmp_path / "fresh", 1000.0)
    judged = len(fresh.seen["judge"])
    first = PricedJudge()
    with pytest.raises(BudgetReachedError, match="goal\\(s\\) marked.*resumes"):
        _priced(first, tmp_path / "r", 21.0)  # the goals and simulations cost ~$14
    assert 0 < len(first.seen["judge"]) < judged
    assert (tmp_path / "r" / "simulated.jsonl").is_file()
    assert not (tmp_path / "r" / "realism.json").exists()
    second = PricedJudge()
    result = _priced(second, tmp_path / "r", 1000.0)
    # every call the stopped run sent was kept: the rerun sends only the others
    assert len(first.seen["judge"]) + len(second.seen["judge"]) == judged
    assert "goal" not in second.seen and "user" not in second.seen
    assert result.n_goals == 3


def test_failed_simulations_are_counted_and_left_out(tmp_path: Path) -> None:
    rec = Recorder()
    user = rec.user

    def failing_user(messages: list[dict[str, Any]]) -> str:
        if "Which laptop?" in messages[0]["content"]:  # goal c3's simulated user
            raise RuntimeError("the simulated user crashed")
        return user(messages)

    result = chatjudge.realism(REAL, rec.assistant, tmp_path / "r", user=failing_user,
                               goal_model=rec.goal_writer, judge=rec.judge)  # fmt: skip
    assert result.failed == {"simulation": 1} and result.n_goals == 2
