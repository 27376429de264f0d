"""Intervals: Student-t over goals, the small-sample guard, the jackknife."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from chatjudge.stats.intervals import SHARE, UNBOUNDED, Range, clopper_pearson
from chatjudge.user_realism.figures import jackknife_figure, mean_figure


def test_a_mean_takes_the_t_interval() -> None:
    x = np.random.default_rng(0).normal(3, 1, size=40)
    lo, hi = stats.t.interval(0.95, 39, loc=x.mean(), scale=stats.sem(x))
    figure = mean_figure(x, UNBOUNDED)
    assert figure.value == pytest.approx(x.mean()) and figure.ci95 == pytest.approx([lo, hi])


def test_a_small_unbounded_sample_has_no_interval_and_says_why() -> None:
    figure = mean_figure(np.array([1.0, 2.0, 4.0]), UNBOUNDED)
    assert figure.ci95 is None and figure.too_few is not None and "3 items" in figure.too_few


def test_zero_one_goals_take_clopper_pearson() -> None:
    x = np.array([1.0] * 7 + [0.0] * 3)
    assert mean_figure(x, SHARE).ci95 == pytest.approx(list(clopper_pearson(7, 10)))


def test_a_small_bounded_sample_is_held_to_its_range() -> None:
    figure = mean_figure(np.array([0.5, 0.75, 1.0, 1.0]), Range(-1.0, 1.0))
    assert figure.ci95 is not None and figure.ci95[1] <= 1.0 and figure.ci95[0] < 0.5


def test_the_jackknife_of_a_mean_is_the_t_interval() -> None:
    """Leave-one-out means give the jackknife the sample's own standard error."""
    x = np.random.default_rng(1).normal(size=50)
    left_out = (x.sum() - x) / 49
    figure = jackknife_figure(float(x.mean()), left_out, UNBOUNDED)
    assert figure.ci95 == pytest.approx(mean_figure(x, UNBOUNDED).ci95)


def test_the_jackknife_needs_30_goals() -> None:
    figure = jackknife_figure(0.2, np.full(29, 0.2), SHARE)
    assert figure.ci95 is None and figure.too_few is not None and "29 goals" in figure.too_few
