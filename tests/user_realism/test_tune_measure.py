"""`realism --tune`'s held-out proof against hand computations: the accuracies, their paired
difference, the widening test of each behaviour, the decision and overshoot."""

from __future__ import annotations

import numpy as np
import pytest

from chatjudge.formats.realism import Figure, TunedHeldOut
from chatjudge.user_realism.sample import GoalSample, UserSide
from chatjudge.user_realism.tune_measure import gain_shown, held_out, overshoot


def goal(g: str, picked: tuple[bool, ...], real_words: int, sim_words: int) -> GoalSample:
    real = UserSide((" ".join(["w"] * real_words),), True)
    sim = UserSide((" ".join(["w"] * sim_words),), True)
    return GoalSample(g, real, (sim,), picked)


def test_the_figures_are_the_paired_means_of_each_goals_accuracy() -> None:
    ids = [f"g{i}" for i in range(60)]
    before = {g: goal(g, (True, True), 3, 9) for g in ids}
    verdicts = [(False, False), (True, False), (True, True)]  # accuracy 0, 0.5, 1
    after = {g: goal(g, verdicts[k % 3], 3, 3) for k, g in enumerate(ids)}
    del after["g0"]  # failed: left out of the paired difference
    found = held_out(ids, before, after, seed=0)
    after_acc = np.array([(k % 3) / 2 for k in range(1, 60)])
    assert (found.n, found.n_goals, found.ids) == (60, 59, ids)
    assert found.before.value == 1.0 and found.after.value == pytest.approx(after_acc.mean())
    diff = after_acc - 1.0
    half = 2.0017 * diff.std(ddof=1) / np.sqrt(59)  # t(58) at 97.5%
    assert found.difference.value == pytest.approx(diff.mean())
    assert found.difference.ci95 == pytest.approx(
        [diff.mean() - half, diff.mean() + half], abs=1e-3
    )
    words = found.behaviours["words_per_message"]
    assert (words.before, words.after, words.widened) == (6.0, 0.0, False)
    assert words.p == 1.0  # narrowed: no relabelling narrows it more
    assert gain_shown(found) and not overshoot(found)


def test_a_widened_behaviour_forbids_the_claim() -> None:
    ids = [f"g{i}" for i in range(60)]
    before = {g: goal(g, (True, True), 3, 4) for g in ids}
    after = {g: goal(g, (False, False), 3, 20) for g in ids}  # fooled, but far wordier
    found = held_out(ids, before, after, seed=0, resamples=500)
    words = found.behaviours["words_per_message"]
    assert (words.before, words.after) == (1.0, 17.0)
    assert words.p == pytest.approx(1 / 501) and words.widened
    assert found.difference.ci95 is not None and found.difference.ci95[1] < 0
    assert not gain_shown(found)
    assert overshoot(found)  # accuracy 0: the judge always takes the tuned user for real


def test_no_interval_is_no_gain() -> None:
    none = Figure(value=-1.0, ci95=None, too_few="few")
    found = TunedHeldOut(n=1, ids=["g"], before=none, after=none, difference=none, n_goals=1)
    assert not gain_shown(found) and not overshoot(found)
