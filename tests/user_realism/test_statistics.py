"""`compare` on small goals: every figure against a hand computation, measures without data
absent, claims by Holm across every measure."""

from __future__ import annotations

import pytest

from chatjudge.formats.realism import Discriminator, Measure
from chatjudge.stats.intervals import Range
from chatjudge.user_realism.sample import GoalSample, UserSide
from chatjudge.user_realism.statistics import compare


def side(*messages: str, ended: bool = True, **marks: object) -> UserSide:
    return UserSide(tuple(messages), ended, **marks)  # type: ignore[arg-type]


GOALS = [
    GoalSample(
        "a",
        side("where is it", "order 5", disclosed=(False, True), metrics={"acc": 1.0}),
        (
            side("Where is my order?", ended=False, disclosed=(True, True), metrics={"acc": 0.0}),
            side("Hello. Where is it?", disclosed=(True, False), metrics={"acc": 1.0}),
        ),
        discriminations=(True, True),
        reasons=("lowercase",),
    ),
    GoalSample(
        "b",
        side("refund pls", disclosed=(False,), metrics={"acc": 0.0}),
        (side("I want a refund, please?", "Thanks!", disclosed=(True,), metrics={"acc": 0.5}),),
        discriminations=(True, False),
        reasons=("Lowercase.", "polite"),
    ),
    GoalSample("c", side("no simulation"), ()),  # left out: nothing to pair with
]


def test_each_behaviour_by_hand() -> None:
    found = compare(GOALS, seed=0)
    assert found.n_goals == 2 and found.k == 2
    b = found.behaviours
    # user turns: real 2, 1; simulated means 1, 2 -> differences -1, +1
    assert (b["user_turns"].real.value, b["user_turns"].simulated.value) == (1.5, 1.5)
    assert b["user_turns"].difference.value == 0.0
    # words per message: real 2.5, 2; simulated (4 + 4) / 2 = 4, (5 + 1) / 2 = 3
    assert b["words_per_message"].real.value == pytest.approx(2.25)
    assert b["words_per_message"].difference.value == pytest.approx((1.5 + 1) / 2)
    # questions: real 0, 0; simulated (1 + 1) / 2, (1 + 0) / 2
    assert b["question_share"].simulated.value == pytest.approx(0.75)
    # disclosure: real 1/2, 0; simulated (1 + 1/2) / 2, 1
    assert b["disclosure"].real.value == pytest.approx(0.25)
    assert b["disclosure"].simulated.value == pytest.approx((0.75 + 1) / 2)
    # ended: real 1, 1; simulated 1/2, 1
    assert b["ended_by_user"].difference.value == pytest.approx(-0.25)
    assert "pushback_share" not in b  # no marks: absent, not zero
    assert "uniformity" not in b  # two goals leave no pair out
    gap = found.metric_gaps["acc"]  # real 1, 0; simulated 1/2, 1/2
    assert (gap.real.value, gap.simulated.value, gap.difference.value) == (0.5, 0.5, 0.0)
    assert found.discriminator is not None
    assert found.discriminator.accuracy.value == pytest.approx(0.75)
    assert found.discriminator.n_verdicts == 4 and found.discriminator.n_goals == 2
    assert [(r.reason, r.count) for r in found.discriminator.reasons][0] == ("lowercase", 2)


def test_two_goals_claim_nothing_and_p_is_exact() -> None:
    """Two goals of 3 and 2 conversations: 6 labellings, so no p below 1/6."""
    found = compare(GOALS, seed=0)
    every = [*found.behaviours.values(), *found.metric_gaps.values()]
    assert all(m.p >= 1 / 6 and not m.claimed for m in every)
    assert found.discriminator is not None and found.discriminator.p == 1.0  # +1/4 and 0


def differing(n: int) -> list[GoalSample]:
    real = side("hi", "ok thx", disclosed=(False, True), pushback=(False, True))
    simulated = side(
        "Hello! I would like some help with my order today, please.",
        ended=False,
        disclosed=(True, True),
        pushback=(False,),
    )
    words = ["alpha", "beta", "gamma", "delta"]
    return [
        GoalSample(
            f"g{i}",
            side(f"hi {words[i % 4]}", "ok thx", disclosed=(False, True), pushback=(True, False))
            if i % 2
            else real,
            (simulated, simulated),
            discriminations=(True, True),
        )
        for i in range(n)
    ]


def test_clear_differences_are_claimed_under_holm() -> None:
    found = compare(differing(40), seed=0, resamples=999)
    b = found.behaviours
    for name in (
        "words_per_message",
        "disclosure",
        "ended_by_user",
        "user_turns",
        "pushback_share",
    ):
        assert b[name].claimed, name
        assert b[name].p == 1 / 1000 and b[name].p_holm <= 9 / 1000
    assert not b["question_share"].claimed  # no question either side
    assert b["question_share"].p == 1.0
    assert b["uniformity"].claimed and b["uniformity"].difference.value > 0
    assert found.discriminator is not None and found.discriminator.claimed
    # Holm: the largest of 8 p-values (question_share's 1.0) is not adjusted down.
    assert b["question_share"].p_holm == 1.0 and len(b) + 1 == 8


def test_a_metric_s_known_range_guards_its_small_sample_interval() -> None:
    goals = [
        GoalSample(
            f"g{i}",
            side("a", metrics={"m": float(i % 3) / 2}),
            (side("b", metrics={"m": 1.0}),),
        )
        for i in range(6)
    ]
    unknown = compare(goals, seed=0).metric_gaps["m"]
    assert unknown.difference.ci95 is None and unknown.difference.too_few
    known = compare(goals, seed=0, metric_ranges={"m": Range(0.0, 1.0)}).metric_gaps["m"]
    assert known.difference.ci95 is not None and known.difference.ci95[1] <= 1.0


def test_nothing_to_compare_measures_nothing() -> None:
    found = compare([GoalSample("a", side("x"), ())], seed=0)
    assert found.n_goals == 0 and found.behaviours == {} and found.discriminator is None
    assert "discriminator" not in found.model_dump(exclude_unset=True)


@pytest.mark.parametrize("bad", [{"level": 0.0}, {"level": 1.0}, {"resamples": 0}])
def test_bad_settings_are_refused(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        compare(GOALS, seed=0, **bad)  # type: ignore[arg-type]


def test_holm_runs_across_behaviours_metric_gaps_and_the_discriminator() -> None:
    """Each p_holm is Holm's over the file's whole family, in whatever section it sits."""
    from chatjudge.user_realism.permutation import holm

    goals = differing(40)
    goals = [
        GoalSample(
            g.goal_id,
            UserSide(g.real.user_messages, True, metrics={"m": 0.0}),
            tuple(UserSide(s.user_messages, False, metrics={"m": 1.0}) for s in g.simulated),
            g.discriminations,
        )
        for g in goals
    ]
    found = compare(goals, seed=0, resamples=999)
    assert found.discriminator is not None
    family: list[Measure | Discriminator] = [
        *found.behaviours.values(),
        *found.metric_gaps.values(),
        found.discriminator,
    ]
    assert [m.p_holm for m in family] == holm([m.p for m in family])
    assert len(family) == 7  # turns, words, questions, ended, uniformity; the gap; discriminator
