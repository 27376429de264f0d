"""Each behaviour of one conversation against a hand computation."""

from __future__ import annotations

import math

import numpy as np

from chatjudge.user_realism.behaviour import (
    BEHAVIOURS,
    asks,
    behaviour_matrix,
    metric_matrix,
    values,
)
from chatjudge.user_realism.sample import GoalSample, UserSide

SIDE = UserSide(
    user_messages=("Hi, where is my parcel?", "it was order 12", "Thanks! Is it lost？"),
    ended_by_user=True,
    disclosed=(True, False, False, True),
    pushback=(False, True, False),
)


def test_each_behaviour_of_a_conversation_by_hand() -> None:
    found = dict(zip(BEHAVIOURS, values(SIDE), strict=True))
    assert found == {
        "user_turns": 3.0,
        "words_per_message": (5 + 4 + 4) / 3,
        "question_share": 2 / 3,  # the full-width mark counts too
        "disclosure": 2 / 4,
        "ended_by_user": 1.0,
        "pushback_share": 1 / 3,
    }


def test_a_question_is_a_message_with_a_question_mark() -> None:
    assert asks("why?") and asks("لماذا؟") and not asks("tell me why")


def test_no_messages_and_no_marks_are_missing_not_zero() -> None:
    found = dict(zip(BEHAVIOURS, values(UserSide((), ended_by_user=False)), strict=True))
    assert found["user_turns"] == 0.0 and found["ended_by_user"] == 0.0
    missing = ("words_per_message", "question_share", "disclosure", "pushback_share")
    assert all(math.isnan(found[name]) for name in missing)
    assert math.isnan(values(UserSide(("a",), False, disclosed=()))[3])  # a goal with no facts


def test_the_matrix_puts_the_real_first_and_pads_short_goals() -> None:
    one = GoalSample("a", SIDE, (UserSide(("x",), False),))
    two = GoalSample("b", UserSide(("y z",), True), (SIDE, SIDE))
    matrix = behaviour_matrix([one, two])
    assert matrix.shape == (2, 3, len(BEHAVIOURS))
    assert matrix[0, 0, 0] == 3 and matrix[0, 1, 0] == 1 and np.isnan(matrix[0, 2]).all()
    assert matrix[1, 0, 1] == 2 and matrix[1, 2, 0] == 3


def test_metrics_a_conversation_lacks_are_missing() -> None:
    real = UserSide(("a",), False, metrics={"acc": 1.0})
    goal = GoalSample("a", real, (UserSide(("b",), False, metrics={"acc": 0.5, "len": 3.0}),))
    names, matrix = metric_matrix([goal])
    assert names == ["acc", "len"]
    assert matrix[0, 0, 0] == 1.0 and np.isnan(matrix[0, 0, 1]) and matrix[0, 1, 1] == 3.0
