"""What the report shows beside realism.json: each behaviour's per-conversation values, real
and simulated, and one goal's real and simulated conversation side by side."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chatjudge.user_realism.command import Outcome
from chatjudge.user_realism.real import shown
from chatjudge.user_realism.sample import UserSide

BEHAVIOURS = ("user_turns", "words_per_message", "question_share", "disclosure", "ended_by_user",
              "pushback_share")  # fmt: skip


def spreads(outcome: Outcome) -> dict[str, dict[str, list[float]]]:
    """Per behaviour, the values of every real and every simulated conversation."""
    out: dict[str, dict[str, list[float]]] = {b: {"real": [], "simulated": []} for b in BEHAVIOURS}
    for sample in outcome.samples:
        for side, sides in (("real", [sample.real]), ("simulated", sample.simulated)):
            for one in sides:
                for name, value in _values(one).items():
                    if value is not None:
                        out[name][side].append(value)
    return out


def _values(side: UserSide) -> dict[str, float | None]:
    said = side.user_messages
    return {
        "user_turns": float(len(said)),
        "words_per_message": _mean([len(m.split()) for m in said]),
        "question_share": _mean([float("?" in m) for m in said]),
        "disclosure": _mean([float(d) for d in side.disclosed or ()]),
        "ended_by_user": float(side.ended_by_user),
        "pushback_share": _mean([float(p) for p in side.pushback or ()]),
    }


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def example(outcome: Outcome) -> dict[str, Any] | None:
    """The first goal with a finished simulated conversation: its goal and both sides."""
    for goal in outcome.goals:
        sims = [s for s in outcome.simulated.get(goal["id"], []) if s.get("status") == "ok"]
        if sims and goal["id"] in outcome.reals:
            real = outcome.reals[goal["id"]].messages
            return {
                "goal": goal["question"],
                "real": shown(real),
                "simulated": shown(sims[0]["chat"]),
            }
    return None
