"""`realism.json`: written through its model, read back equal, its version checked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatjudge.errors import UsageError
from chatjudge.formats.io import read_model, write_json
from chatjudge.formats.realism import Realism
from chatjudge.user_realism.sample import GoalSample, UserSide
from chatjudge.user_realism.statistics import compare


def realism() -> Realism:
    real = UserSide(("hi", "ok"), True, disclosed=(False,), metrics={"acc": 1.0})
    sim = UserSide(("Hello! Please help?",), False, disclosed=(True,), metrics={"acc": 0.0})
    goals = [
        GoalSample(f"g{i}", real, (sim, sim), discriminations=(True, i % 2 == 0), reasons=("x",))
        for i in range(5)
    ]
    return compare(goals, seed=3).model_copy(
        update={"goals": 6, "samples": 2, "cut_share": 0.1, "failed": {"simulations": 1}}
    )


def test_a_realism_json_round_trips(tmp_path: Path) -> None:
    written = realism()
    path = tmp_path / "realism.json"
    data = write_json(path, written, only_set=True)
    assert data["format"] == Realism.version() == 1
    assert "too_few" not in data["behaviours"]["disclosure"]["real"]  # written only when set
    assert "too_few" in data["behaviours"]["user_turns"]["real"]  # 5 goals, no known range
    assert read_model(path, Realism) == written


def test_a_realism_json_of_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "realism.json"
    data = write_json(path, realism())
    path.write_text(json.dumps({**data, "format": 2}), encoding="utf-8")
    with pytest.raises(UsageError, match=r"has format 2; .* reads format 1 of a realism.json"):
        read_model(path, Realism)
