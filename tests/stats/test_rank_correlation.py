"""Rank correlations against scipy, with NaN pairs dropped and bootstrap intervals."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from chatjudge.stats import correlation
from chatjudge.stats.bootstrap import resampled_counts
from chatjudge.stats.rank_correlation import _pair_signs, _weighted_kendall, _weighted_spearman

JUDGE = [1, 2, 2, 3, np.nan, 4, 5, 3, 1, 4, 2]
HUMAN = [2, 1, 3, 3, 5, 5, 4, np.nan, 1, 4, 2]


def test_matches_scipy_on_complete_pairs() -> None:
    keep = [0, 1, 2, 3, 5, 6, 8, 9, 10]  # pairs 4 and 7 have a NaN
    x = [JUDGE[i] for i in keep]
    y = [HUMAN[i] for i in keep]
    result = correlation(JUDGE, HUMAN)
    rho, tau = stats.spearmanr(x, y), stats.kendalltau(x, y)
    assert result.n == 9
    assert result.spearman == pytest.approx(rho.statistic)
    assert result.spearman_p == pytest.approx(rho.pvalue)
    assert result.kendall == pytest.approx(tau.statistic)
    assert result.kendall_p == pytest.approx(tau.pvalue)
    assert result.spearman > 0.7  # a clearly positive example


def noisy_pairs(n: int = 40, seed: int = 5) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, size=n).astype(float)
    return truth, np.clip(truth + rng.integers(-1, 2, size=n), 1, 5)


def test_bootstrap_intervals_bracket_the_estimate_and_are_seeded() -> None:
    judge, human = noisy_pairs()
    result = correlation(judge, human)
    assert result.too_few is None and "too_few" not in result.to_dict()
    for value, (lo, hi) in (
        (result.spearman, result.spearman_ci95),
        (result.kendall, result.kendall_ci95),
    ):
        assert -1 <= lo <= value <= hi <= 1
        assert lo < hi
    assert correlation(judge, human) == result
    assert correlation(judge, human, seed=1).spearman_ci95 != result.spearman_ci95
    assert json.loads(json.dumps(result.to_dict()))["n"] == 40


def test_few_pairs_are_too_few_to_say() -> None:
    result = correlation(JUDGE, HUMAN)  # 9 complete pairs
    assert result.spearman_ci95 is None and result.kendall_ci95 is None
    assert result.too_few == "too few to say: 9 pairs (fewer than 30)"
    assert json.loads(json.dumps(result.to_dict()))["too_few"] == result.too_few


def test_a_perfect_correlation_is_too_few_to_say_not_a_point() -> None:
    # 40 pairs in the same order: every resample's rho is 1 too, so the bootstrap gave [1, 1].
    x = np.arange(40) % 5
    result = correlation(x, 2 * x + 1)
    assert result.spearman == pytest.approx(1.0) and result.spearman_ci95 is None
    assert "an end of its range" in result.too_few


@pytest.mark.parametrize("distinct_values", [4, 10_000])  # scale scores; continuous scores
def test_vectorised_resample_statistics_equal_scipy_on_each_resample(distinct_values: int) -> None:
    rng = np.random.default_rng(distinct_values)
    x = rng.integers(0, distinct_values, size=120).astype(float)
    y = x + rng.integers(0, distinct_values, size=120)
    distinct, chunks = resampled_counts(np.column_stack([x, y]), 30, seed=0)
    counts = next(chunks)
    rho = _weighted_spearman(distinct, counts)
    tau = _weighted_kendall(distinct, counts, _pair_signs(distinct))
    for r in range(30):
        drawn = np.repeat(distinct, counts[r], axis=0)  # the resampled pairs themselves
        assert len(drawn) == 120
        assert rho[r] == pytest.approx(stats.spearmanr(drawn[:, 0], drawn[:, 1]).statistic)
        assert tau[r] == pytest.approx(stats.kendalltau(drawn[:, 0], drawn[:, 1]).statistic)


def test_constant_resamples_are_left_out() -> None:
    # One judge score of 2 among 30: about 1 resample in 3 misses it (the judge constant).
    judge = [1.0] * 29 + [2.0]
    human = [float(1 + i % 3) for i in range(29)] + [3.0]
    result = correlation(judge, human)
    assert 0 < result.spearman < 1
    lo, hi = result.spearman_ci95
    assert -1 <= lo < hi <= 1


def test_none_counts_as_missing() -> None:
    assert correlation([1, None, 2, 3, 4], [1, 9, 2, 4, 3]).n == 4


def test_clear_errors() -> None:
    with pytest.raises(ValueError, match="at least 3"):
        correlation([1, 2, np.nan], [1, 2, 3])
    with pytest.raises(ValueError, match="human scores are constant"):
        correlation([1, 2, 3, 4], [2, 2, 2, 2])
    with pytest.raises(ValueError, match="4 judge scores but 3 human scores"):
        correlation([1, 2, 3, 4], [1, 2, 3])
