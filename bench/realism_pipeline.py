"""One calibration run through the whole command: `chatjudge.realism(...)` end to end on
"real" rows of `realism_scripts.real_rows`, with Python function models in every role (the
stand-in goal writer re-extracts each goal from its real conversation, the scripted
simulated user and assistant, the stand-in judge for disclosure, pushback and the
discriminator), in a temporary directory of its own. No network. Used by
`realism_calibration.py --pipeline`."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from realism_scripts import SimulatedUser, assistant, goal_writer, judge, real_rows

import chatjudge
from chatjudge.formats.realism import Realism


def run_pipeline(n_goals: int, real: str, simulated: str, k: int, seed: int) -> Realism:
    """realism.json of one run: `n_goals` real conversations in style `real`, K simulated
    users in style `simulated` for each goal."""
    rows = real_rows(n_goals, real, seed)
    errors: list[str] = []
    with tempfile.TemporaryDirectory(prefix="realism-calib-") as tmp:
        found = chatjudge.realism(
            rows, loud(assistant, errors), Path(tmp) / "run",
            user=loud(SimulatedUser(simulated, seed), errors),
            goal_model=loud(goal_writer, errors), judge=loud(judge, errors), samples=k,
            concurrency=1,  # one call at a time: the simulated user's draws are the seed's
        )  # fmt: skip
    assert isinstance(found, Realism)  # not a dry run: realism.json's model
    if errors or found.failed:  # a stand-in that cannot read its prompt must not pass (a)
        raise RuntimeError(f"a stand-in failed: {errors[:3]} {found.failed}")
    return found


def loud(model: Callable[[list[dict[str, Any]]], str], errors: list[str]) -> Any:
    """`model`, its faults kept: the command leaves a failed mark out and goes on, which
    would quietly weaken every claim."""

    def call(messages: list[dict[str, Any]]) -> str:
        try:
            return model(messages)
        except Exception as exc:
            errors.append(repr(exc))
            raise

    return call
