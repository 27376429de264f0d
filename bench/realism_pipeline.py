"""One calibration run through the whole command: `chatjudge.realism(...)` end to end on
"real" rows of `realism_scripts.real_rows`, with Python function models in every role (the
stand-in goal writer re-extracts each goal from its real conversation, the scripted
simulated user and assistant, the stand-in judge for disclosure, pushback and the
discriminator), in a temporary directory of its own. No network. Used by
`realism_calibration.py --pipeline`."""

from __future__ import annotations

import tempfile
from pathlib import Path

from realism_scripts import SimulatedUser, assistant, goal_writer, judge, real_rows

import chatjudge
from chatjudge.formats.realism import Realism


def run_pipeline(n_goals: int, real: str, simulated: str, k: int, seed: int) -> Realism:
    """realism.json of one run: `n_goals` real conversations in style `real`, K simulated
    users in style `simulated` for each goal."""
    rows = real_rows(n_goals, real, seed)
    with tempfile.TemporaryDirectory(prefix="realism-calib-") as tmp:
        found = chatjudge.realism(
            rows, assistant, Path(tmp) / "run", user=SimulatedUser(simulated, seed),
            goal_model=goal_writer, judge=judge, samples=k, concurrency=1,
        )  # fmt: skip
    assert isinstance(found, Realism)  # not a dry run: realism.json's model
    return found
