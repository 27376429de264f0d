"""DIR's outputs checked before the first goal is paid for: another realism's directory,
files no realism wrote, and a simulated.jsonl of other options are refused (unless
--overwrite), and nothing is sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import chatjudge
from chatjudge.errors import UsageError
from tests.user_realism.standins import Recorder
from tests.user_realism.test_command import REAL


def _realism(rec: Recorder, out: Path, **options: object) -> object:
    return chatjudge.realism(REAL, rec.assistant, out, user=rec.user, goal_model=rec.goal_writer,
                             judge=rec.judge, **options)  # fmt: skip


def test_the_record_names_the_data_models_and_options(tmp_path: Path) -> None:
    _realism(Recorder(), tmp_path / "r")
    record = json.loads((tmp_path / "r" / "realism.run.json").read_text())
    assert record["command"] == "realism" and record["data"] == "list"
    assert set(record["models"]) == {"assistant", "simulated_user", "goal_model", "judge"}
    assert record["field"] is None and record["options"]["samples"] == 1


def test_another_realism_in_the_same_dir_is_refused_before_any_call(tmp_path: Path) -> None:
    _realism(Recorder(), tmp_path / "r")
    rec = Recorder()

    def another_judge(messages: list[dict[str, str]]) -> str:
        return rec.judge(messages)

    with pytest.raises(UsageError, match="holds a different realism.*judge"):
        chatjudge.realism(REAL, rec.assistant, tmp_path / "r", user=rec.user,
                          goal_model=rec.goal_writer, judge=another_judge)  # fmt: skip
    assert rec.seen == {}
    chatjudge.realism(REAL, rec.assistant, tmp_path / "r", user=rec.user,
                      goal_model=rec.goal_writer, judge=another_judge, overwrite=True)  # fmt: skip
    assert rec.seen["judge"] and "goal" not in rec.seen  # the goals' store is kept


def test_a_simulated_jsonl_of_other_options_is_refused_before_the_goals(tmp_path: Path) -> None:
    _realism(Recorder(), tmp_path / "r")
    record = tmp_path / "r" / "simulated.run.json"
    held = json.loads(record.read_text())
    held["options"]["user_temperature"] = 0.3
    record.write_text(json.dumps(held))
    (tmp_path / "r" / "goals.calls.sqlite").unlink()  # a goal call would be sent
    rec = Recorder()
    with pytest.raises(UsageError, match="simulated.jsonl holds a different output"):
        _realism(rec, tmp_path / "r")
    assert rec.seen == {}


def test_files_no_realism_wrote_are_refused(tmp_path: Path) -> None:
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "goals.jsonl").write_text("mine\n")
    rec = Recorder()
    with pytest.raises(UsageError, match="goals.jsonl but no realism.run.json"):
        _realism(rec, tmp_path / "r")
    assert rec.seen == {} and (tmp_path / "r" / "goals.jsonl").read_text() == "mine\n"
