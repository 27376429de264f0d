"""Each goal as the statistics read it (`sample.GoalSample`): its real conversation and its
simulated ones reduced to the user's side, with the judge's marks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chatjudge.chat.types import Message
from chatjudge.user_realism.marks import ConversationMarks, Discrimination
from chatjudge.user_realism.real import shown
from chatjudge.user_realism.sample import GoalSample, UserSide


def user_side(
    messages: Sequence[Message],
    *,
    ended_by_user: bool,
    marks: ConversationMarks | None = None,
    metrics: Mapping[str, float] | None = None,
) -> UserSide:
    """A conversation's user side: what the user said (tool messages and empty messages
    left out, as the judge read them), who ended it, the judge's marks."""
    said = tuple(m["content"] for m in shown(messages) if m["role"] == "user")
    return UserSide(
        user_messages=said,
        ended_by_user=ended_by_user,
        disclosed=marks.disclosed if marks else None,
        pushback=marks.pushback if marks else None,
        metrics=dict(metrics or {}),
    )


def simulated_ended_by_user(row: Mapping[str, Any]) -> bool:
    """The simulated user closed the conversation before the turn cap."""
    return row.get("ended") == "user"


def goal_sample(
    goal_id: str,
    real: UserSide,
    simulated: Sequence[UserSide],
    discrimination: Discrimination | None,
) -> GoalSample:
    picked = discrimination.picked_real if discrimination else ()
    reasons = discrimination.reasons if discrimination else ()
    return GoalSample(goal_id, real, tuple(simulated), picked, reasons)
