"""The gate's paired difference: Tango's interval, the cluster bootstrap, the small-sample
guard; the decision from it: tests/stats/test_decision.py."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from chatjudge.stats import (
    Difference,
    decide,
    mde80,
    paired_difference,
    paired_ratio_difference,
    rows_to_decide,
    sign_test,
    tango_interval,
)

Z95 = stats.norm.ppf(0.975)


def _restricted_p21(b: int, c: int, n: int, d0: float) -> float:
    """Maximise the multinomial likelihood with p12 - p21 = d0 over p21, numerically.

    Independent of the closed form: the log-likelihood's derivative in p21 is solved by
    root finding on the feasible range, or the maximum sits at an end of it.
    """
    lo, hi = max(0.0, -d0), (1.0 - d0) / 2
    rest = n - b - c

    def slope(p: float) -> float:
        total = 0.0
        if b:
            total += b / (p + d0)
        if c:
            total += c / p
        if rest:
            total -= 2 * rest / (1 - 2 * p - d0)
        return total

    eps = 1e-15
    if hi - lo < 1e-14:
        return lo
    if slope(lo + eps) <= 0:
        return lo
    if slope(hi - eps) >= 0:
        return hi
    return optimize.brentq(slope, lo + eps, hi - eps, xtol=1e-16, rtol=9e-16)


def _score(b: int, c: int, n: int, d0: float) -> float:
    p21 = _restricted_p21(b, c, n, d0)
    variance = n * (2 * p21 + d0 * (1 - d0))
    return (b - c - n * d0) / math.sqrt(variance)


def _crossing(b: int, c: int, n: int, target: float, start: float, stop: float) -> float:
    """Where the score crosses `target` between start and stop: a 1e-4 grid, then bisection."""
    grid = np.linspace(start, stop, int(abs(stop - start) / 1e-4) + 2)[1:-1]
    above = [(_score(b, c, n, d) - target) > 0 for d in grid]
    k = next(i for i in range(1, len(grid)) if above[i] != above[i - 1])
    left, right = grid[k - 1], grid[k]
    for _ in range(200):
        mid = (left + right) / 2
        if ((_score(b, c, n, mid) - target) > 0) == above[k - 1]:
            left = mid
        else:
            right = mid
    return (left + right) / 2


@pytest.mark.parametrize(
    ("n", "candidate_only", "baseline_only"),
    [(50, 5, 2), (20, 0, 3), (30, 7, 7), (15, 1, 11), (12, 9, 3)],
)
def test_tango_matches_the_restricted_likelihood_computed_numerically(
    n: int, candidate_only: int, baseline_only: int
) -> None:
    b, c = candidate_only, baseline_only
    estimate = (b - c) / n
    expected_lo = _crossing(b, c, n, Z95, -1.0, estimate)
    expected_hi = _crossing(b, c, n, -Z95, estimate, 1.0)
    lo, hi = tango_interval(baseline_only, candidate_only, n)
    assert lo == pytest.approx(expected_lo, abs=1e-9)
    assert hi == pytest.approx(expected_hi, abs=1e-9)
    assert lo < estimate < hi


def test_tango_matches_a_published_value() -> None:
    # Fagerland, Lydersen and Laake, "Statistical Analysis of Contingency Tables" (2017),
    # chapter 8, Cavo et al. (2012): 59 / 6 / 16 / 80 pairs, Δ = (6 - 16)/161 = -0.0621,
    # Tango's score interval -0.1240 to -0.0054 (R package contingencytables).
    lo, hi = tango_interval(16, 6, 161)
    assert round(lo, 4) == -0.1240
    assert round(hi, 4) == -0.0054


def test_tango_with_no_discordant_pair_has_its_closed_form() -> None:
    # b = c = 0: the restricted MLE of p21 is max(0, -d), and the score reaches z at
    # d = z^2 / (n + z^2) on each side.
    for n in (1, 10, 200):
        half = Z95**2 / (n + Z95**2)
        lo, hi = tango_interval(0, 0, n)
        assert lo == pytest.approx(-half, abs=1e-12)
        assert hi == pytest.approx(half, abs=1e-12)


def test_tango_when_every_pair_is_discordant_one_way_reaches_the_end() -> None:
    lo, hi = tango_interval(0, 10, 10)
    assert hi == 1.0
    assert lo == pytest.approx(_crossing(10, 0, 10, Z95, -1.0, 1.0), abs=1e-9)
    lo, hi = tango_interval(10, 0, 10)
    assert lo == -1.0
    assert -1 < hi < 0


def test_tango_level_widens_the_interval() -> None:
    lo95, hi95 = tango_interval(4, 9, 60)
    lo99, hi99 = tango_interval(4, 9, 60, level=0.99)
    assert lo99 < lo95 and hi99 > hi95


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((0, 0, 0), "at least one pair"),
        ((-1, 2, 10), ">= 0"),
        ((6, 5, 10), "exceed"),
    ],
)
def test_tango_refuses_impossible_tables(args: tuple[int, int, int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        tango_interval(*args)


def test_binary_rows_without_clusters_use_tango() -> None:
    cand = np.array([1, 1, 0, 1, 0, 1, 1, 1, 0, 1] * 4, dtype=float)
    base = np.array([1, 0, 0, 1, 1, 0, 1, 0, 0, 1] * 4, dtype=float)
    diff = paired_difference(cand, base)
    assert diff.method == "tango"
    assert diff.value == pytest.approx((12 - 4) / 40)
    assert diff.ci95 == tango_interval(4, 12, 40)
    d = cand - base
    assert diff.se == pytest.approx(d.std(ddof=1) / math.sqrt(40))
    assert (diff.n_units, diff.n_rows) == (40, 40)


def test_bootstrap_matches_the_t_interval_on_a_large_sample() -> None:
    # With many units the expanded percentile interval of a mean is the t interval.
    rng = np.random.default_rng(5)
    cand = rng.normal(0.3, 1.0, 2000)
    base = rng.normal(0.2, 1.0, 2000)
    diff = paired_difference(cand, base)
    d = cand - base
    half = stats.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / math.sqrt(len(d))
    assert diff.method == "cluster-bootstrap"
    assert diff.value == pytest.approx(d.mean())
    assert diff.ci95[0] == pytest.approx(d.mean() - half, abs=0.005)
    assert diff.ci95[1] == pytest.approx(d.mean() + half, abs=0.005)


def test_clustered_bootstrap_matches_the_t_interval_of_cluster_means() -> None:
    rng = np.random.default_rng(8)
    g, m = 400, 5
    effect = np.repeat(rng.normal(0, 1, g), m)
    d = effect + rng.normal(0.1, 0.5, g * m)
    clusters = np.repeat(np.arange(g), m)
    diff = paired_difference(d, np.zeros_like(d), clusters)
    means = d.reshape(g, m).mean(axis=1)
    half = stats.t.ppf(0.975, g - 1) * means.std(ddof=1) / math.sqrt(g)
    assert (diff.n_units, diff.n_rows) == (g, g * m)
    assert diff.ci95[0] == pytest.approx(means.mean() - half, abs=0.005)
    assert diff.ci95[1] == pytest.approx(means.mean() + half, abs=0.005)
    assert diff.se == pytest.approx(means.std(ddof=1) / math.sqrt(g), rel=1e-9)


def test_bootstrap_at_10000_resamples_is_within_0005_of_200000() -> None:
    # Few clusters of unequal size, a skewed 1-3 score difference: no closed form.
    rng = np.random.default_rng(13)
    sizes = rng.integers(1, 12, 25)
    clusters = np.repeat(np.arange(25), sizes)
    level = np.repeat(rng.normal(0, 0.6, 25), sizes)
    cand = np.clip(np.round(2.2 + level + rng.normal(0, 0.7, len(clusters))), 1, 3)
    base = np.clip(np.round(2.0 + level + rng.normal(0, 0.7, len(clusters))), 1, 3)
    reference = paired_difference(cand, base, clusters, n_resamples=200_000, seed=99)
    for seed in (0, 1, 2):
        diff = paired_difference(cand, base, clusters, seed=seed)
        assert diff.ci95[0] == pytest.approx(reference.ci95[0], abs=0.005)
        assert diff.ci95[1] == pytest.approx(reference.ci95[1], abs=0.005)


def test_few_units_widen_the_interval_like_t() -> None:
    # 12 rows: the plain percentile interval is about z * sqrt((G-1)/G) * s/sqrt(G);
    # the expanded one is t(11) * s/sqrt(G), 17% wider.
    d = np.array([-0.9, -0.5, -0.3, -0.1, 0.0, 0.2, 0.3, 0.4, 0.6, 0.8, 1.0, 1.3])
    diff = paired_difference(d, np.zeros(12), n_resamples=200_000)
    t_half = stats.t.ppf(0.975, 11) * d.std(ddof=1) / math.sqrt(12)
    plain_half = Z95 * d.std(ddof=0) / math.sqrt(12)
    half = (diff.ci95[1] - diff.ci95[0]) / 2
    assert half == pytest.approx(t_half, rel=0.05)
    assert half > 1.15 * plain_half


def test_ignoring_clusters_would_be_too_narrow() -> None:
    # 30 clusters of 10 rows that move together: the rows are not 300 independent units.
    rng = np.random.default_rng(21)
    clusters = np.repeat(np.arange(30), 10)
    # the candidate is better on some topics and worse on others: the gain moves by cluster
    gain = np.repeat(rng.normal(0, 1, 30), 10)
    cand = (gain + rng.normal(0, 1, 300) > 0).astype(float)
    base = (rng.normal(0, 1, 300) > 0).astype(float)
    naive = paired_difference(cand, base)
    clustered = paired_difference(cand, base, clusters)
    assert naive.method == "tango" and clustered.method == "cluster-bootstrap"
    assert clustered.value == pytest.approx(naive.value)
    assert clustered.n_units == 30
    naive_width = naive.ci95[1] - naive.ci95[0]
    assert clustered.ci95[1] - clustered.ci95[0] > 1.3 * naive_width
    assert clustered.se > 1.3 * naive.se


def test_pairwise_preferences_against_one_half() -> None:
    prefs = np.array([1.0, 0.5, 0.0, 1.0, 1.0, 0.5, 1.0, 0.0, 1.0, 0.5] * 10)
    diff = paired_difference(prefs, np.full(100, 0.5))
    assert diff.method == "cluster-bootstrap"
    assert diff.value == pytest.approx(prefs.mean() - 0.5)
    assert diff.ci95[0] < diff.value < diff.ci95[1]


def test_same_seed_same_interval() -> None:
    rng = np.random.default_rng(3)
    cand, base = rng.normal(size=200), rng.normal(size=200)
    first = paired_difference(cand, base, seed=4)
    assert paired_difference(cand, base, seed=4) == first
    assert paired_difference(cand, base, seed=5).ci95 != first.ci95


def test_bad_rows_are_named() -> None:
    with pytest.raises(ValueError, match="pair them"):
        paired_difference(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="baseline: row 2 is not a finite number"):
        paired_difference(np.ones(4), np.array([1.0, 0.0, np.nan, 1.0]))
    with pytest.raises(ValueError, match="one per row"):
        paired_difference(np.ones(4), np.ones(4), np.array([1, 2, 3]))
    with pytest.raises(ValueError, match="at least 2 rows"):
        paired_difference(np.ones(1), np.zeros(1))
    with pytest.raises(ValueError, match="at least 2 clusters"):
        paired_difference(np.ones(4), np.zeros(4), np.zeros(4))
    with pytest.raises(ValueError, match="level"):
        paired_difference(np.ones(4), np.zeros(4), level=1.5)


def _diff(value: float, se: float, n_rows: int) -> Difference:
    return Difference(value, (value - 2 * se, value + 2 * se), se, n_rows, n_rows, "tango")


# --- small samples: a rule valid at every n -----------------------------------------------

PAIRWISE = {"bounds": (-0.5, 0.5), "three_point": True}  # one vote per row against 1/2


def _wins(n: int) -> Difference:
    return paired_difference(np.ones(n), np.full(n, 0.5), **PAIRWISE)  # type: ignore[arg-type]


def test_two_rows_give_an_interval() -> None:
    # with 2 units the expanded percentiles sit 1e-72 from each end: their central level
    # once rounded to 1.0 and was refused
    diff = paired_difference(np.array([0.8, 0.3]), np.array([0.5, 0.5]))
    assert diff.ci95 == pytest.approx((-0.2, 0.3))
    guarded = paired_difference(np.array([1.0, 1.0]), np.full(2, 0.5), **PAIRWISE)  # type: ignore[arg-type]
    assert decide(guarded.ci95, 0.0, "better") == "inconclusive"


def test_all_wins_pass_from_six_units_by_the_sign_test() -> None:
    three = _wins(3)
    # not the bootstrap's [0.5, 0.5]: the side the sign test does not clear keeps 0 and
    # reaches the betting interval's end, valid as an interval at 3 units
    assert three.small is not None and three.small.betting is not None
    assert three.value == 0.5 and three.ci95 == (three.small.betting[0], 0.5)
    assert three.ci95[0] < 0.0
    assert three.method == "cluster-bootstrap+sign-test"
    assert three.small is not None and three.small.sign_p == (0.125, 1.0)
    assert three.small.why == "3 units (fewer than 30)"
    assert decide(_wins(5).ci95, 0.0, "better") == "inconclusive"  # p = 1/32
    assert decide(_wins(6).ci95, 0.0, "better") == "pass"  # p = 1/64
    losses = paired_difference(np.zeros(6), np.full(6, 0.5), **PAIRWISE)  # type: ignore[arg-type]
    assert decide(losses.ci95, 0.0, "not-worse") == "fail"
    assert decide(paired_difference(np.zeros(5), np.full(5, 0.5), **PAIRWISE).ci95,  # type: ignore[arg-type]
                  0.0, "not-worse") == "inconclusive"  # fmt: skip


def test_tango_with_four_discordant_pairs_one_way_does_not_pass() -> None:
    # Tango's lower end is 0.020 > 0, but the exact one-sided McNemar p is 1/16
    assert tango_interval(0, 4, 4)[0] > 0
    cand, base = np.ones(4), np.zeros(4)
    diff = paired_difference(cand, base, bounds=(-1.0, 1.0), three_point=True)
    assert diff.method == "tango+sign-test" and diff.small is not None
    assert diff.small.betting is not None and diff.ci95[0] == diff.small.betting[0] < 0.0
    assert decide(diff.ci95, 0.0, "better") == "inconclusive"
    # 6 of 6 among 40 rows: p = 1/64, a pass; the rows that agree do not count
    cand = np.r_[np.ones(6), np.ones(20), np.zeros(14)]
    base = np.r_[np.zeros(6), np.ones(20), np.zeros(14)]
    diff = paired_difference(cand, base, bounds=(-1.0, 1.0), three_point=True)
    assert diff.small is not None and diff.small.why == "6 of 40 units differ (fewer than 30)"
    assert decide(diff.ci95, 0.0, "better") == "pass"


@pytest.mark.parametrize(
    ("n", "outcome"), [(3, "inconclusive"), (90, "inconclusive"), (91, "pass")]
)
def test_all_ties_clear_a_margin_of_002_from_91_units(n: int, outcome: str) -> None:
    diff = paired_difference(np.full(n, 0.5), np.full(n, 0.5), boundary=-0.02, **PAIRWISE)  # type: ignore[arg-type]
    assert diff.method == "cluster-bootstrap+betting"
    assert diff.small is not None and diff.small.betting is not None
    assert diff.ci95[0] < 0 < diff.ci95[1]  # never the bootstrap's [0, 0]
    assert decide(diff.ci95, 0.02, "not-worse") == outcome


@pytest.mark.parametrize(
    ("n", "step", "outcome"),
    [(3, 2.0, "inconclusive"), (9, 1.0, "inconclusive"), (10, 1.0, "pass")],
)
def test_equal_score_differences_need_the_bounded_mean_count(
    n: int, step: float, outcome: str
) -> None:
    # two 1-3 scores: a row's difference lies in [-2, 2]; +1 on every row passes from 10
    diff = paired_difference(np.full(n, 1.0 + step), np.ones(n), bounds=(-2.0, 2.0))
    assert diff.method == "cluster-bootstrap+betting"
    assert decide(diff.ci95, 0.0, "better") == outcome


def test_a_large_varied_sample_keeps_its_method() -> None:
    rng = np.random.default_rng(5)
    cand, base = rng.integers(1, 4, 200).astype(float), rng.integers(1, 4, 200).astype(float)
    plain = paired_difference(cand, base)
    guarded = paired_difference(cand, base, bounds=(-2.0, 2.0))
    assert guarded == plain and guarded.small is None


def test_a_small_sample_without_a_range_is_flagged_not_guarded() -> None:
    diff = paired_difference(np.full(4, 2.0), np.ones(4))
    assert diff.ci95 == (1.0, 1.0)
    assert diff.small is not None and diff.small.rule == "unguarded"
    assert diff.method == "cluster-bootstrap"


def test_few_distinct_differences_are_a_small_sample_at_any_size() -> None:
    cand = np.r_[np.ones(300), np.zeros(100)]
    diff = paired_difference(cand, np.full(400, 0.5), boundary=-0.05, **PAIRWISE)  # type: ignore[arg-type]
    assert diff.small is not None and diff.small.why == "2 distinct unit differences (fewer than 3)"
    assert diff.small.betting is not None and diff.ci95[0] <= diff.small.betting[0]


def test_the_sign_test_by_hand() -> None:
    assert sign_test(3, 0) == (0.125, 1.0)
    assert sign_test(6, 0) == pytest.approx((1 / 64, 1.0))
    assert sign_test(9, 1)[0] == pytest.approx(11 / 1024)
    assert sign_test(0, 0) == (1.0, 1.0)


def test_claims_the_data_contradict_are_refused() -> None:
    with pytest.raises(ValueError, match="three_point: row 0 differs by 0.25"):
        paired_difference(np.array([0.75, 1.0]), np.full(2, 0.5), **PAIRWISE)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="outside the range"):
        paired_difference(np.full(3, 3.0), np.ones(3), bounds=(-1.0, 1.0))


def test_mde_and_rows_to_decide_never_zero_on_equal_differences() -> None:
    three = _wins(3)
    assert three.se == 0.0
    mde = mde80(three.se, n_units=3, lower=-0.5, boundary=0.0)
    # 3 equal units would need to lie 0.5 x ((1/(0.98 x 0.025))^(1/3) - 1) above 0
    assert mde == pytest.approx(0.5 * ((1 / (0.98 * 0.025)) ** (1 / 3) - 1))
    assert mde > 0.5  # more than any pairwise difference can be: 3 rows cannot pass
    assert mde80(0.0, n_units=91, lower=-0.5, boundary=-0.02) < 0.02  # 91 ties clear it
    assert rows_to_decide(three, 0.0, "better", (-0.5, 0.5)) == 6
    ties = paired_difference(np.full(3, 0.5), np.full(3, 0.5), boundary=-0.02, **PAIRWISE)  # type: ignore[arg-type]
    assert rows_to_decide(ties, 0.02, "not-worse", (-0.5, 0.5)) == 91
    scores = paired_difference(np.full(3, 2.0), np.ones(3), bounds=(-2.0, 2.0))
    assert rows_to_decide(scores, 0.0, "better", (-2.0, 2.0)) == 10
    # below the boundary: the count that makes a fail, mirrored against the top of the range
    assert rows_to_decide(_diff(-0.5, 0.0, 3), 0.0, "better", (-0.5, 0.5)) == 6


def _calls(rng: np.random.Generator, n: int, p: float) -> np.ndarray:
    """Per row (matched, made): 0 to 6 calls made, each matched with probability `p`."""
    made = rng.integers(0, 7, n).astype(float)
    return np.column_stack([rng.binomial(made.astype(int), p), made])


def test_a_ratio_difference_is_the_difference_of_the_runs_ratios_by_hand() -> None:
    cand = np.array([[2, 4], [2, 2], [2, 2], [1, 1], [1, 1]], dtype=float)
    base = np.array([[2, 2], [1, 4], [1, 1], [0, 1], [0, 0]], dtype=float)
    diff = paired_ratio_difference(cand, base)
    assert diff.value == pytest.approx(8 / 10 - 4 / 8)  # not the rows' ratios' mean
    assert diff.method == "ratio-cluster-bootstrap" and (diff.n_units, diff.n_rows) == (5, 5)
    assert diff.small is not None and diff.small.rule == "unguarded"  # nothing bounds a row
    # the delta method's SE, from each row's linearised share of Δ
    linear = (cand[:, 0] - 0.8 * cand[:, 1]) / 2 - (base[:, 0] - 0.5 * base[:, 1]) / 1.6
    assert diff.se == pytest.approx(math.sqrt(np.sum(linear**2) / (5 * 4)))
    swapped = paired_ratio_difference(base, cand)
    assert swapped.value == pytest.approx(-diff.value)
    assert swapped.ci95 == pytest.approx((-diff.ci95[1], -diff.ci95[0]))


def test_a_ratio_difference_resamples_clusters_whole() -> None:
    rng = np.random.default_rng(3)
    cand, base = _calls(rng, 120, 0.7), _calls(rng, 120, 0.6)
    clusters = np.repeat(np.arange(40), 3)
    whole = paired_ratio_difference(cand, base, clusters)
    summed = paired_ratio_difference(
        cand.reshape(40, 3, 2).sum(axis=1), base.reshape(40, 3, 2).sum(axis=1)
    )
    assert (whole.n_units, whole.n_rows) == (40, 120)
    assert whole.value == pytest.approx(summed.value)
    assert whole.ci95 == pytest.approx(summed.ci95)
    assert whole.se == pytest.approx(summed.se)


def test_a_ratio_difference_on_a_large_sample_is_the_delta_method_interval() -> None:
    rng = np.random.default_rng(11)
    cand, base = _calls(rng, 3000, 0.72), _calls(rng, 3000, 0.7)
    diff = paired_ratio_difference(cand, base)
    half = stats.norm.ppf(0.975) * diff.se
    assert diff.ci95[0] == pytest.approx(diff.value - half, abs=0.002)
    assert diff.ci95[1] == pytest.approx(diff.value + half, abs=0.002)


def test_a_ratio_with_no_denominator_in_a_run_is_refused() -> None:
    with pytest.raises(ValueError, match="sum to more than 0"):
        paired_ratio_difference(np.array([[1.0, 1.0], [0.0, 1.0]]), np.zeros((2, 2)))
