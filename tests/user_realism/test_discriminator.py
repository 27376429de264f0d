"""The discriminator's per-goal accuracy and its reasons grouped."""

from __future__ import annotations

from chatjudge.user_realism.discriminator import goal_accuracies, reason_counts
from chatjudge.user_realism.sample import GoalSample, UserSide

SIDE = UserSide(("hi",), True)


def goal(verdicts: tuple[bool, ...], reasons: tuple[str, ...] = ()) -> GoalSample:
    return GoalSample("g", SIDE, (SIDE,), discriminations=verdicts, reasons=reasons)


def test_accuracy_per_goal_skips_goals_without_a_verdict() -> None:
    found = goal_accuracies([goal((True, False)), goal(()), goal((True,)), goal((True, True))])
    assert found.tolist() == [0.5, 1.0, 1.0]


def test_reasons_grouped_by_text_commonest_first() -> None:
    goals = [
        goal((True,), ("Too polite.", "too  polite", "lowercase")),
        goal((True,), ("TOO POLITE!", "Lowercase.", "asks at once")),
    ]
    found = [(r.reason, r.count) for r in reason_counts(goals)]
    assert found == [("Too polite.", 3), ("lowercase", 2), ("asks at once", 1)]
    assert len(reason_counts(goals, top=1)) == 1
