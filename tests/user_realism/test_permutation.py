"""The permutation tests: exact on cases small enough to enumerate, and Holm."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from chatjudge.user_realism import permutation
from chatjudge.user_realism.permutation import differences, holm, sign_flip_p


def paired_rows(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    rows, counts, _ = permutation.paired_rows(values)
    return rows, counts


def within_goal_p(rows: np.ndarray, counts: np.ndarray, resamples: int, seed: int) -> float:
    """One measure's p-value."""
    return float(permutation.within_goal_p(rows[:, :, None], counts, resamples, seed)[0])


NAN = math.nan
# Three goals: real first, K = 2 simulated (the third goal lost one simulation).
VALUES = np.array([[5.0, 1.0, 2.0], [4.0, 0.0, 3.0], [6.0, 2.0, NAN], [NAN, 1.0, 1.0]])


def test_rows_keep_goals_with_both_sides_and_move_values_forward() -> None:
    values = np.array([[1.0, NAN, 3.0], [NAN, 1.0, 2.0], [2.0, NAN, NAN]])
    rows, counts, kept = permutation.paired_rows(values)
    assert rows.tolist()[0][:2] == [1.0, 3.0] and counts.tolist() == [2]
    assert kept.tolist() == [True, False, False]


def test_measures_tested_together_get_their_own_p() -> None:
    """One drawn labelling serves several measures; each gets the p it gets alone."""
    rng = np.random.default_rng(5)
    rows = rng.normal(size=(30, 4, 3))
    rows[:, 1:, 1] += 1.0  # the second measure differs
    together = permutation.within_goal_p(rows, np.full(30, 4), 999, 0)
    alone = [within_goal_p(rows[:, :, m], np.full(30, 4), 999, 0) for m in range(3)]
    assert together.tolist() == alone and together[1] == 1 / 1000


def test_differences_are_simulated_mean_minus_real() -> None:
    rows, counts = paired_rows(VALUES)
    assert differences(rows, counts).tolist() == [1.5 - 5, 1.5 - 4, 2 - 6]


def hand_p(rows: list[list[float]]) -> float:
    """Every labelling enumerated by hand: the share with |T*| >= |T| (T's own included)."""

    def statistic(labels: tuple[int, ...]) -> float:
        d = [(sum(r) - r[j]) / (len(r) - 1) - r[j] for r, j in zip(rows, labels, strict=True)]
        return abs(sum(d) / len(d))

    observed = statistic((0,) * len(rows))
    every = list(itertools.product(*(range(len(r)) for r in rows)))
    return sum(statistic(lab) >= observed - 1e-12 for lab in every) / len(every)


def test_an_enumerable_case_gives_the_exact_p() -> None:
    rows, counts = paired_rows(VALUES)
    expected = hand_p([[5, 1, 2], [4, 0, 3], [6, 2]])  # 3 * 3 * 2 = 18 labellings
    # |T| = 10/3, reached only by the observed labelling and by its mirror (the real user
    # of each goal being its smallest value: +2.5, +3.5, +4).
    assert expected == 2 / 18
    assert within_goal_p(rows, counts, resamples=18, seed=0) == expected
    drawn = within_goal_p(rows, counts, resamples=10, seed=0)  # fewer than 18: drawn
    assert drawn * 11 == pytest.approx(round(drawn * 11))  # (1 + hits) / (1 + 10)


def test_drawn_labellings_converge_to_the_exact_p() -> None:
    rng = np.random.default_rng(3)
    rows, counts = paired_rows(rng.normal(size=(6, 3)))
    exact = within_goal_p(rows, counts, resamples=3**6, seed=0)
    assert exact == pytest.approx(hand_p(rows.tolist()))
    drawn = within_goal_p(rows, counts, resamples=40_000, seed=1)
    assert abs(drawn - exact) < 4 * math.sqrt(exact * (1 - exact) / 40_000)


def test_the_test_is_exact_over_every_labelling() -> None:
    """Under the null each labelling is equally likely to be the observed one: over all of
    them, p <= alpha happens in at most alpha of them, for every alpha."""
    base = np.array([[3.0, 0.0, 1.0], [2.0, 2.0, 7.0], [1.0, 5.0, 0.5], [0.0, 1.0, 4.0]])
    labellings = list(itertools.product(range(3), repeat=4))
    ps = []
    for labels in labellings:
        rows = base.copy()
        for g, j in enumerate(labels):  # conversation j is the one labelled real
            rows[g, [0, j]] = rows[g, [j, 0]]
        r, c = paired_rows(rows)
        ps.append(within_goal_p(r, c, resamples=81, seed=0))
    for alpha in sorted(set(ps)):
        assert sum(p <= alpha for p in ps) <= alpha * len(labellings) + 1e-9


def test_a_shift_is_found_and_equal_users_are_not() -> None:
    rng = np.random.default_rng(0)
    same = rng.exponential(size=(200, 4))  # skewed, one distribution on both sides
    shifted = same.copy()
    shifted[:, 1:] += 0.5
    assert within_goal_p(*paired_rows(same), 999, 0) > 0.01
    assert within_goal_p(*paired_rows(shifted), 999, 0) == 1 / 1000


def test_the_sign_flip_enumerates_and_matches_by_hand() -> None:
    values = np.array([0.5, 0.5, 0.0, 0.5])
    every = list(itertools.product([1, -1], repeat=4))
    expected = sum(abs(np.dot(s, values)) >= 1.5 for s in every) / 16
    assert sign_flip_p(values, resamples=16, seed=0) == expected == 4 / 16
    assert sign_flip_p(np.full(20, 0.5), resamples=999, seed=0) == 1 / 1000


def test_holm_against_statsmodels() -> None:
    from statsmodels.stats.multitest import multipletests

    p = [0.01, 0.04, 0.03, 0.005, 0.5]
    reference = multipletests(p, alpha=0.05, method="holm")[1]
    assert holm(p) == pytest.approx(list(reference))
    assert holm(p) == pytest.approx([0.04, 0.09, 0.09, 0.025, 0.5])  # by hand


def test_the_sign_flip_matches_the_binomial_on_plus_minus_one() -> None:
    values = np.array([1.0] * 9 + [-1.0] * 3)  # 12 goals: all 4096 sign vectors
    exact = stats.binomtest(9, 12).pvalue
    assert sign_flip_p(values, resamples=4096, seed=0) == pytest.approx(exact)
