"""The user's behaviour in one conversation, as numbers: one value a conversation and a
measure, NaN where the conversation has none (no user message, no marks).

A goal's conversations sit in a row, the real one first, then its simulated ones; rows of
goals with fewer simulated conversations are padded with NaN."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from chatjudge.stats.intervals import SHARE, UNBOUNDED, Range
from chatjudge.user_realism.sample import GoalSample, UserSide

# Each measure and what is known of its range (shares lie in [0, 1]).
BEHAVIOURS: dict[str, Range] = {
    "user_turns": UNBOUNDED,  # user messages in the conversation
    "words_per_message": UNBOUNDED,  # whitespace-separated words, mean over its user messages
    "question_share": SHARE,  # share of its user messages holding a "?"
    "disclosure": SHARE,  # share of the goal's facts marked given in the first user message
    "ended_by_user": SHARE,  # 1 when the user closed the conversation
    "pushback_share": SHARE,  # share of its user messages marked as pushing back
}

_NAN = math.nan


def asks(message: str) -> bool:
    """A message asks something when it holds a question mark (any of ASCII, full-width
    and Arabic). Simple and the same on both sides; a question written without one is not
    counted, on either side."""
    return "?" in message or "？" in message or "؟" in message


def values(side: UserSide) -> tuple[float, ...]:
    """The conversation's value of each measure of BEHAVIOURS, in that order."""
    messages = side.user_messages
    n = len(messages)
    words = sum(len(m.split()) for m in messages) / n if n else _NAN
    questions = sum(map(asks, messages)) / n if n else _NAN
    return (
        float(n),
        words,
        questions,
        _share(side.disclosed),
        1.0 if side.ended_by_user else 0.0,
        _share(side.pushback),
    )


def behaviour_matrix(goals: Sequence[GoalSample]) -> np.ndarray:
    """Goals x conversations (real first) x measures, NaN where a value is missing."""
    width = 1 + max((len(g.simulated) for g in goals), default=0)
    out = np.full((len(goals), width, len(BEHAVIOURS)), _NAN)
    for i, goal in enumerate(goals):
        out[i, 0] = values(goal.real)
        for j, side in enumerate(goal.simulated, start=1):
            out[i, j] = values(side)
    return out


def metric_matrix(goals: Sequence[GoalSample]) -> tuple[list[str], np.ndarray]:
    """The protocol metrics any conversation has, sorted, and their goals x conversations x
    metrics values (NaN where a conversation lacks one)."""
    names = sorted({name for g in goals for s in (g.real, *g.simulated) for name in s.metrics})
    width = 1 + max((len(g.simulated) for g in goals), default=0)
    out = np.full((len(goals), width, len(names)), _NAN)
    if not names:
        return names, out
    for i, goal in enumerate(goals):
        for j, side in enumerate((goal.real, *goal.simulated)):
            for k, name in enumerate(names):
                out[i, j, k] = side.metrics.get(name, _NAN)
    return names, out


def _share(marks: tuple[bool, ...] | None) -> float:
    return sum(marks) / len(marks) if marks else _NAN
