"""Percentile bootstrap over items: reproducibility, coverage, shared resamples, speed."""

from __future__ import annotations

import json

import numpy as np
import pytest

import chatjudge.stats.bootstrap as bootstrap_module
from chatjudge.stats import Estimate, bootstrap_ci, bootstrap_metrics, bootstrap_ratios
from chatjudge.stats.bootstrap import percentile_interval, studentized_interval


def test_same_seed_same_interval_and_other_seed_differs() -> None:
    rng = np.random.default_rng(7)
    continuous = rng.normal(size=80)  # many distinct values: item indices are drawn
    binary = (rng.random(400) < 0.3).astype(float)  # two distinct values: multinomial draw
    for values in (continuous, binary):
        first = bootstrap_ci(values, seed=3)
        assert first is not None
        assert bootstrap_ci(values, seed=3) == first
        assert bootstrap_ci(values, seed=4) != first
    median = bootstrap_ci(continuous, np.median, seed=3)
    assert median == bootstrap_ci(continuous, np.median, seed=3)
    assert median != bootstrap_ci(continuous, np.median, seed=4)


def test_rows_of_one_item_stay_together() -> None:
    # Each item is (judge score, the same score again): any resample that split an
    # item's numbers would show a difference.
    scores = np.random.default_rng(3).integers(1, 6, size=60).astype(float)
    rows = np.column_stack([scores, scores])
    assert bootstrap_ci(rows, lambda r: np.abs(r[:, 0] - r[:, 1]).max()) == (0.0, 0.0)
    lo, hi = bootstrap_ci(rows, lambda r: r[:, 0].mean())
    assert lo < scores.mean() < hi


def test_fewer_than_two_values_gives_none() -> None:
    assert bootstrap_ci([]) is None
    assert bootstrap_ci([4.0]) is None
    assert bootstrap_ci([np.nan, 4.0]) is None  # NaN items do not count
    assert bootstrap_ci([4.0], np.median) is None


def test_nan_items_are_skipped_by_the_mean() -> None:
    values = [1.0, np.nan, 3.0, np.nan, 5.0, 7.0]
    lo, hi = bootstrap_ci(values)
    assert 1.0 <= lo < 4.0 < hi <= 7.0
    result = bootstrap_metrics({"x": values})["x"]
    assert result.value == pytest.approx(4.0)
    assert result.n == 4


def _coverage(draw: np.ndarray, true_mean: float) -> float:
    hits = 0
    for i, sample in enumerate(draw):
        lo, hi = bootstrap_ci(sample, seed=i)
        hits += lo <= true_mean <= hi
    return hits / len(draw)


def test_coverage_is_near_nominal_for_continuous_and_binary_data() -> None:
    rng = np.random.default_rng(2024)
    exponential = _coverage(rng.exponential(1.0, size=(300, 50)), 1.0)
    bernoulli = _coverage((rng.random((300, 50)) < 0.3).astype(float), 0.3)
    assert 0.88 <= exponential <= 0.99, exponential
    assert 0.88 <= bernoulli <= 0.99, bernoulli


def test_interval_width_matches_the_normal_approximation() -> None:
    # Bootstrap SE of a mean is sd/sqrt(n); the 95% interval is about +-1.96 SE.
    rng = np.random.default_rng(11)
    p, n = 0.3, 10_000
    binary = (rng.random(n) < p).astype(float)
    lo, hi = bootstrap_ci(binary)
    expected = 2 * 1.96 * np.sqrt(binary.mean() * (1 - binary.mean()) / n)
    assert hi - lo == pytest.approx(expected, rel=0.1)
    assert lo < binary.mean() < hi
    normal = rng.normal(5.0, 2.0, size=2_000)
    lo, hi = bootstrap_ci(normal)
    assert hi - lo == pytest.approx(2 * 1.96 * normal.std() / np.sqrt(2_000), rel=0.1)


def test_multinomial_and_index_resampling_agree() -> None:
    # The same 3-valued column alone (3 distinct rows: multinomial) and next to a
    # column of unique values (as many distinct rows as items: indices drawn).
    rng = np.random.default_rng(5)
    scores = rng.integers(1, 4, size=1_000).astype(float)
    alone = bootstrap_metrics({"s": scores})["s"].ci95
    paired = bootstrap_metrics({"s": scores, "u": np.arange(1_000.0)})["s"].ci95
    assert alone != paired
    width = alone[1] - alone[0]
    assert paired[1] - paired[0] == pytest.approx(width, rel=0.12)
    assert paired[0] == pytest.approx(alone[0], abs=0.15 * width)


@pytest.mark.parametrize("cells", [7, 1 << 13, 1 << 22])
def test_the_intervals_do_not_depend_on_the_chunk_size(
    cells: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chunks only bound memory: the draws, hence every digit, are those of one draw."""
    rng = np.random.default_rng(11)
    columns = {
        "continuous": rng.normal(size=300),  # item indices are drawn
        "binary": np.where(rng.random(300) < 0.1, np.nan, rng.integers(0, 2, 300)),
    }
    few = {"score": rng.integers(1, 4, 300).astype(float)}  # multinomial draws
    whole = bootstrap_metrics(columns), bootstrap_metrics(few), bootstrap_ci(columns["continuous"])
    monkeypatch.setattr(bootstrap_module, "_CHUNK_CELLS", cells)
    assert (bootstrap_metrics(columns), bootstrap_metrics(few)) == whole[:2]
    assert bootstrap_ci(columns["continuous"]) == whole[2]


def test_metrics_share_the_same_resamples() -> None:
    rng = np.random.default_rng(1)
    wins = (rng.random(500) < 0.4).astype(float)
    out = bootstrap_metrics({"win": wins, "copy": wins.copy(), "loss": 1 - wins})
    assert out["win"].ci95 == out["copy"].ci95
    lo, hi = out["win"].ci95
    assert out["loss"].ci95 == pytest.approx((1 - hi, 1 - lo), abs=1e-12)


def test_metrics_with_items_that_do_not_count() -> None:
    out = bootstrap_metrics(
        {
            "score": [1.0, 2.0, 3.0, 2.0],
            "consistent": [1.0, np.nan, 0.0, np.nan],
            "one": [np.nan, np.nan, 5.0, np.nan],
            "none": [np.nan] * 4,
        }
    )
    assert out["score"] == Estimate(value=2.0, ci95=out["score"].ci95, n=4)
    assert out["consistent"].value == 0.5 and out["consistent"].n == 2
    assert out["consistent"].ci95 is not None
    assert out["one"] == Estimate(value=5.0, ci95=None, n=1)
    assert out["none"] == Estimate(value=None, ci95=None, n=0)
    assert json.loads(json.dumps(out["consistent"].to_dict())) == {
        "value": 0.5,
        "ci95": list(out["consistent"].ci95),
        "n": 2,
    }


def test_studentized_intervals_lean_to_the_tail() -> None:
    # A squared exponential sample is skewed right: the bootstrap-t interval of its mean
    # reaches further above the mean than below, and further than the percentile one
    # (2.62 against 2.60 above a mean of 2.20, 1.85 alike below); a column of
    # every value alike has the one point; items that do not count are skipped alike.
    rng = np.random.default_rng(3)
    skewed = rng.exponential(1.0, size=400) ** 2
    mixed = np.where(rng.random(400) < 0.25, np.nan, skewed)
    columns = {"skewed": skewed, "mixed": mixed, "flat": np.full(400, 0.25)}
    out = bootstrap_metrics(columns, method="studentized")
    plain = bootstrap_metrics(columns)
    mean = skewed.mean()
    lo, hi = out["skewed"].ci95
    p_lo, p_hi = plain["skewed"].ci95
    assert hi - mean > 1.15 * (mean - lo) and hi > p_hi + 0.01
    assert out["mixed"].n == plain["mixed"].n == int(np.count_nonzero(~np.isnan(mixed)))
    assert out["mixed"].ci95[0] < np.nanmean(mixed) < out["mixed"].ci95[1]
    assert out["flat"] == Estimate(value=0.25, ci95=(0.25, 0.25), n=400)
    assert {name: e.value for name, e in out.items()} == {n: e.value for n, e in plain.items()}


def test_the_logit_bootstrap_t_maps_its_interval_back() -> None:
    # values 0.5, 0.75, 1, 1 (mean 0.8125, error 0.1197) and four resamples by hand: means
    # 0.75, 0.875, 1 (no logit: left out) and 0.8125, errors 0.14, 0.07, 0, 0.11; each t is
    # (logit m* - logit m) m* (1 - m*) / error*, the interval expit(logit m - t * error /
    # (m (1 - m))) at t's 97.5 and 2.5 percentiles, numpy's linear ones of the three
    values = np.array([0.5, 0.75, 1.0, 1.0])
    means = np.array([0.75, 0.875, 1.0, 0.8125])
    errors = np.array([0.14, 0.07, 0.0, 0.11])
    mean, error = 0.8125, float(np.std(values, ddof=1)) / 2

    def logit(m: np.ndarray | float) -> np.ndarray:
        return np.log(np.divide(m, np.subtract(1, m)))

    t = (logit(means[[0, 1, 3]]) - logit(mean)) * means[[0, 1, 3]] * (1 - means[[0, 1, 3]])
    t /= errors[[0, 1, 3]]
    low, high = np.percentile(t, [2.5, 97.5])
    scale = error / (mean * (1 - mean))
    expected = [1 / (1 + np.exp(-(logit(mean) - q * scale))) for q in (high, low)]
    found = studentized_interval(values, means, errors, 0.95, logit=True)
    assert found == pytest.approx(expected, rel=1e-12)
    assert bootstrap_metrics({"x": values}, method={"x": "logit-studentized"})["x"].ci95


def test_a_studentized_resample_without_spread_is_left_out() -> None:
    # 2 of 200 items differ: one resample in 7 holds neither and has no error; its t
    # (infinite) would stretch the interval to the values' range, 0.5
    values = np.repeat([1 / 6, 1 / 2], [198, 2])
    lo, hi = bootstrap_metrics({"x": values}, method="studentized")["x"].ci95
    assert 1 / 6 <= lo < values.mean() < hi < 0.2


def test_metrics_reject_columns_of_different_length() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        bootstrap_metrics({"a": [1.0, 2.0], "b": [1.0]})
    assert bootstrap_metrics({}) == {}


def test_level_and_resample_count_are_checked() -> None:
    values = np.arange(20.0)
    narrow, wide = bootstrap_ci(values, level=0.5), bootstrap_ci(values, level=0.99)
    assert wide[0] < narrow[0] < narrow[1] < wide[1]
    with pytest.raises(ValueError, match="level"):
        bootstrap_ci(values, level=95)
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_ci(values, n_resamples=0)


def test_every_metric_of_100k_items_in_one_pass() -> None:
    """Four columns of 100,000 items, one with NaN for items that do not count, in one call
    (its time is measured by bench/run_engine.py's summaries, not asserted here: a timed
    test fails on a loaded machine)."""
    rng = np.random.default_rng(0)
    n = 100_000
    interactivity = rng.integers(1, 4, size=n).astype(float)
    consistent = np.where(rng.random(n) < 0.5, np.nan, rng.integers(0, 2, size=n))
    columns = {
        "interactivity": interactivity,
        "itr": (interactivity - 2.5) * 200,
        "accuracy": rng.integers(0, 2, size=n).astype(float),
        "position_consistency": consistent,
    }
    out = bootstrap_metrics(columns)
    for name, column in columns.items():
        lo, hi = out[name].ci95
        assert lo < np.nanmean(column) < hi
    assert out["position_consistency"].n == int(np.count_nonzero(~np.isnan(consistent)))


@pytest.mark.parametrize("n", [1, 2, 3, 7, 40, 1_000, 2_001])
def test_percentile_interval_is_numpys_percentile_bit_for_bit(n: int) -> None:
    """The interval's own percentile (which spares a run `numpy.ma`) gives the very floats
    `np.percentile` gives, so summaries stay byte-identical."""
    rng = np.random.default_rng(n)
    samples = [
        rng.normal(size=n),
        rng.integers(0, 3, size=n) / 3,  # ties, as resampled shares have
        rng.exponential(size=n) * 1e6,
        np.full(n, 0.1),
    ]
    for stats in samples:
        for level in (0.95, 0.9, 0.5, 0.8):
            tail = (1 - level) / 2 * 100
            expected = np.percentile(stats, [tail, 100 - tail])
            got = percentile_interval(stats, level)
            assert got is not None
            assert [x.hex() for x in got] == [float(x).hex() for x in expected]


def test_ratios_weigh_items_by_their_denominator() -> None:
    rng = np.random.default_rng(3)
    made = rng.integers(0, 6, size=400).astype(float)
    matched = np.floor(made * rng.uniform(0, 1, size=400))
    found = bootstrap_ratios({"precision": (matched, made)})["precision"]
    assert found.value == pytest.approx(matched.sum() / made.sum())
    assert found.n == int(np.count_nonzero(made))
    lo, hi = found.ci95
    # about two standard errors of the ratio estimator either side (delta method)
    ratio = matched.sum() / made.sum()
    residual = matched - ratio * made
    se = np.sqrt(np.sum(residual**2)) / made.sum()
    assert lo == pytest.approx(ratio - 1.96 * se, abs=0.4 * se)
    assert hi == pytest.approx(ratio + 1.96 * se, abs=0.4 * se)
    nothing = bootstrap_ratios({"r": ([0.0, 0.0], [0.0, 0.0])})["r"]
    assert (nothing.value, nothing.ci95, nothing.n) == (None, None, 0)


@pytest.mark.parametrize(
    "rows",
    [
        np.random.default_rng(5).integers(0, 4, size=(5_000, 6)).astype(float),  # few distinct
        np.random.default_rng(6).normal(size=(300, 3)),  # every row distinct
        np.array([[2.0, 1.0], [1.0, 3.0], [2.0, 0.5], [1.0, 3.0]]),  # the first column leads
        np.array([[1.0, np.nan], [1.0, np.nan], [0.0, 2.0]]),  # NaN: numpy's own
        np.array([[-0.0, 1.0], [0.0, 1.0], [1.0, 1.0]]),  # -0.0: numpy's own
        np.array([[4.0, 2.0]]),
        np.empty((0, 2)),
    ],
)
def test_distinct_rows_are_numpys_unique_rows_in_its_order(rows: np.ndarray) -> None:
    """The resampled sums draw over the distinct rows in order: any other order, or count,
    would change every interval."""
    distinct, counts = bootstrap_module.distinct_rows(rows)
    expected, expected_counts = np.unique(rows, axis=0, return_counts=True)
    np.testing.assert_array_equal(distinct, expected)
    np.testing.assert_array_equal(counts, expected_counts)
    assert counts.sum() == len(rows)
