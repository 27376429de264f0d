"""The betting interval for a bounded mean: the documented sample sizes for equal values,
agreement with the capital computed unit by unit, and exact coverage where it is tightest."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from chatjudge.stats import betting_interval
from chatjudge.stats.betting import _BETS, _WEIGHTS, ALL_IN


@pytest.mark.parametrize(
    ("value", "lower", "upper", "boundary", "fewest"),
    [
        (0.5, -0.5, 0.5, 0.0, 6),  # pairwise, every row a win, against 0
        (0.0, -0.5, 0.5, -0.02, 91),  # pairwise, every row a tie, against -0.02
        (1.0, -2.0, 2.0, 0.0, 10),  # two 1-3 scores, every row +1, against 0
        (1.0, -1.0, 1.0, 0.0, 6),  # two 0/1 metrics, every row discordant one way
    ],
)
def test_equal_values_clear_the_boundary_from_the_documented_count(
    value: float, lower: float, upper: float, boundary: float, fewest: int
) -> None:
    # n >= ln(1/(ALL_IN alpha)) / ln((d - L)/(b - L)): the fewest units that can pass
    assert fewest == math.ceil(
        math.log(1 / (ALL_IN * 0.025)) / math.log((value - lower) / (boundary - lower))
    )
    below = betting_interval(np.full(fewest - 1, value), lower, upper)
    at = betting_interval(np.full(fewest, value), lower, upper)
    assert below[0] <= boundary < at[0] and at[1] >= value
    # mirrored: the same count of values at -d clears -b from above
    lo, hi = betting_interval(np.full(fewest, -value), -upper, -lower)
    assert hi < -boundary


def _capital(x: np.ndarray, m: float, lower: float) -> float:
    """The capital betting that the mean exceeds m, one unit at a time."""
    total = 0.0
    for bet, weight in zip(_BETS, _WEIGHTS, strict=True):
        wealth = 1.0
        for value in x:
            wealth *= 1 + bet * (value - m) / (m - lower)
        total += weight * wealth
    return total


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_each_end_is_where_the_capital_computed_unit_by_unit_reaches_40(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = np.round(rng.beta(5, 2, 25) * 2 - 1, 1)  # repeated values: grouped in the function
    lo, hi = betting_interval(x, -1.0, 1.0)
    assert -1 < lo < x.mean() < hi < 1
    assert _capital(x, lo - 1e-6, -1.0) >= 40 > _capital(x, lo + 1e-6, -1.0)
    # the top end is the bottom end of the mirrored values
    assert _capital(-x, -hi - 1e-6, -1.0) >= 40 > _capital(-x, -hi + 1e-6, -1.0)


@pytest.mark.parametrize("n", [6, 20, 91, 150])
def test_exact_coverage_on_the_two_point_null_where_it_is_tightest(n: int) -> None:
    # Ties (0) with probability 0.96 and losses (-0.5) with 0.04: the mean is -0.02, and
    # only all-tie samples put the lower end above it. Enumerating every count of losses,
    # the chance the interval misses the mean from below is at most 0.025 at every n.
    mean = -0.02
    missed = 0.0
    for losses in range(n + 1):
        x = np.concatenate([np.zeros(n - losses), np.full(losses, -0.5)])
        lo, hi = betting_interval(x, -0.5, 0.5)
        assert hi > mean or losses > 0
        if lo > mean:
            missed += stats.binom.pmf(losses, n, 0.04)
    assert missed <= 0.025
    if n >= 91:
        assert missed == pytest.approx(0.96**n)  # all ties, and only they, pass


def test_coverage_on_a_continuous_distribution() -> None:
    # Beta(2, 5) on [0, 1] has mean 2/7; 2,000 samples of 15: each side misses at most
    # 2.5% (plus Monte Carlo error); the bound holds for any distribution on the range.
    rng = np.random.default_rng(11)
    low = high = 0
    for _ in range(2000):
        lo, hi = betting_interval(rng.beta(2, 5, 15), 0.0, 1.0)
        low += lo > 2 / 7
        high += hi < 2 / 7
    assert low / 2000 <= 0.025 + 3 * math.sqrt(0.025 * 0.975 / 2000)
    assert high / 2000 <= 0.025 + 3 * math.sqrt(0.025 * 0.975 / 2000)


def test_units_of_unequal_size_estimate_the_row_weighted_mean() -> None:
    means = np.array([0.5, -0.25, 0.0, 0.5, 0.25, 1.0])
    assert betting_interval(means, -1.0, 1.0, sizes=np.full(6, 3.0)) == betting_interval(
        means, -1.0, 1.0
    )
    sizes = np.array([1.0, 4.0, 2.0, 1.0, 3.0, 1.0])
    lo, hi = betting_interval(means, -1.0, 1.0, sizes=sizes)
    weighted = float(np.sum(sizes * means) / sizes.sum())
    assert lo < weighted < hi


def test_a_higher_level_widens_it_and_values_at_an_end_stay_inside() -> None:
    x = np.array([0.2, 0.4, -0.1, 0.3, 0.5, 0.1, 0.0, 0.6])
    lo95, hi95 = betting_interval(x, -1.0, 1.0)
    lo99, hi99 = betting_interval(x, -1.0, 1.0, level=0.99)
    assert lo99 < lo95 < hi95 < hi99
    assert betting_interval(np.full(4, -1.0), -1.0, 1.0)[0] == -1.0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((np.array([0.2, 1.5]), -1.0, 1.0), "unit 1 is 1.5, outside"),
        ((np.array([0.2]), 1.0, -1.0), "lower < upper"),
        ((np.array([]), -1.0, 1.0), "not empty"),
    ],
)
def test_bad_input_is_refused(args: tuple[np.ndarray, float, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        betting_interval(*args)
    with pytest.raises(ValueError, match="level"):
        betting_interval(np.zeros(3), -1.0, 1.0, level=1.0)
