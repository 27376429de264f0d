"""The judge-change test: exact under no change (its false alarms stay at the level), it
finds a judge that moved, and the within-run disagreement is the share of differing pairs."""

from __future__ import annotations

import numpy as np
import pytest

from chatjudge.stats.judge_change import change_p_value, disagreement


def _noisy(rng: np.random.Generator, centres: np.ndarray, q: np.ndarray, samples: int) -> list:
    """Each item's verdicts: its centre with chance q, else one of the two other verdicts."""
    other = (centres[:, None] + rng.integers(1, 3, (len(centres), samples))) % 3
    keep = rng.random((len(centres), samples)) < q[:, None]
    return np.where(keep, centres[:, None], other).tolist()


def test_no_change_alarms_at_most_at_the_level() -> None:
    rng = np.random.default_rng(3)
    alarms = []
    for trial in range(200):
        q = rng.beta(3.4, 0.6, 30)
        centres = rng.integers(0, 3, 30)
        a, b = (_noisy(rng, centres, q, 3) for _ in range(2))
        alarms.append(change_p_value(a, b, resamples=199, seed=trial) <= 0.05)
    assert np.mean(alarms) <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 200)


def test_a_judge_that_moved_a_fifth_of_the_items_is_found() -> None:
    rng = np.random.default_rng(4)
    q = rng.beta(3.4, 0.6, 100)
    centres = rng.integers(0, 3, 100)
    moved = centres.copy()
    moved[:20] = (centres[:20] + 1) % 3
    a, b = _noisy(rng, centres, q, 3), _noisy(rng, moved, q, 3)
    assert change_p_value(a, b) < 0.001


def test_identical_verdicts_give_one_and_items_missing_a_side_count_for_nothing() -> None:
    same = [["A", "A", "B"], ["B", "B", "B"]]
    assert change_p_value(same, same) == 1.0
    assert change_p_value([[], ["A"]], [["B"], []]) == 1.0
    # the p-value is never below 1 / (1 + resamples)
    assert change_p_value([["A"] * 3] * 5, [["B"] * 3] * 5, resamples=99) == pytest.approx(0.01)


def test_disagreement_is_the_share_of_an_items_pairs_that_differ() -> None:
    assert disagreement([["A", "A", "B"], ["C", "C"]]) == pytest.approx((2 / 3 + 0) / 2)
    assert disagreement([["A"], []]) is None
