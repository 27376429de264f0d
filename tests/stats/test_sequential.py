"""The sequential gate's confidence sequence: wider than a fixed interval, valid under peeking."""

from __future__ import annotations

import math

import numpy as np
import pytest

from chatjudge.stats import confidence_sequence, confidence_sequence_path, decide, paired_difference
from chatjudge.stats.sequential import MIN_UNITS


def _binary_diffs(rng: np.random.Generator, n: int, p_win: float, p_loss: float) -> np.ndarray:
    u = rng.random(n)
    return np.where(u < p_win, 1.0, np.where(u < p_win + p_loss, -1.0, 0.0))


@pytest.mark.parametrize("bound", [None, 1.0])
def test_wider_than_the_fixed_interval_and_shrinking(bound: float | None) -> None:
    d = _binary_diffs(np.random.default_rng(1), 2000, 0.25, 0.15)
    widths = []
    for n in (100, 400, 2000):
        seq = confidence_sequence(d[:n], bound=bound)
        fixed = paired_difference(d[:n], np.zeros(n))
        assert seq.method == "confidence-sequence"
        assert seq.value == pytest.approx(d[:n].mean())
        assert (seq.n_units, seq.n_rows) == (n, n)
        assert seq.se == pytest.approx(fixed.se)
        lo, hi = seq.ci95
        assert lo < fixed.ci95[0] and hi > fixed.ci95[1]
        assert lo < seq.value < hi
        widths.append(hi - lo)
    assert widths[0] > widths[1] > widths[2]


def test_bounded_sequence_holds_its_error_rate_where_peeking_at_a_fixed_interval_does_not() -> None:
    # No true difference, a look after every 20 rows up to 1,000: the fixed interval
    # read at each look declares a winner far more often than 5% of the time.
    rng = np.random.default_rng(7)
    runs, wrong_fixed, wrong_sequence = 300, 0, 0
    for _ in range(runs):
        d = _binary_diffs(rng, 1000, 0.2, 0.2)
        looks = range(20, 1001, 20)
        wrong_fixed += any(
            decide(_normal_ci(d[:t]), 0.0, "better") != "inconclusive" for t in looks
        )
        wrong_sequence += any(
            decide(confidence_sequence(d[:t], bound=1.0).ci95, 0.0, "better") != "inconclusive"
            for t in looks
        )
    assert wrong_fixed / runs > 0.15
    assert wrong_sequence / runs < 0.05


def _normal_ci(d: np.ndarray) -> tuple[float, float]:
    half = 1.96 * d.std(ddof=1) / math.sqrt(len(d))
    return d.mean() - half, d.mean() + half


def test_asymptotic_sequence_waits_for_min_units() -> None:
    d = _binary_diffs(np.random.default_rng(2), 200, 0.3, 0.1)
    assert confidence_sequence(d[: MIN_UNITS - 1]).ci95 == (-math.inf, math.inf)
    lo, hi = confidence_sequence(d[:MIN_UNITS]).ci95
    assert math.isfinite(lo) and math.isfinite(hi)
    assert decide(confidence_sequence(d[:10]).ci95, 0.05, "not-worse") == "inconclusive"
    assert math.isfinite(confidence_sequence(d[:10], min_units=5).ci95[0])
    # a bound makes it exact from the first units: no warm-up
    assert math.isfinite(confidence_sequence(d[:10], bound=1.0).ci95[0])


def test_all_zero_differences_do_not_decide_a_bounded_sequence() -> None:
    # The plug-in variance of 100 zero differences is 0; a bounded sequence knows the
    # next row could still differ by 1 and keeps a margin of 0.05 undecided.
    zeros = np.zeros(100)
    lo, hi = confidence_sequence(zeros, bound=1.0).ci95
    assert lo < -0.05 and hi > 0.05


def test_planned_moves_where_the_sequence_is_tightest() -> None:
    d = _binary_diffs(np.random.default_rng(3), 2000, 0.25, 0.15)
    for bound in (None, 1.0):
        early = confidence_sequence(d[:200], planned=200, bound=bound).ci95
        late = confidence_sequence(d[:200], planned=5000, bound=bound).ci95
        assert early[1] - early[0] < late[1] - late[0]


def test_clusters_of_unequal_size_estimate_the_row_weighted_mean() -> None:
    rng = np.random.default_rng(4)
    sizes = rng.integers(1, 8, 300)
    sums = np.array([rng.choice([-1.0, 0.0, 1.0], p=[0.2, 0.5, 0.3], size=m).sum() for m in sizes])
    seq = confidence_sequence(sums, sizes, bound=1.0)  # unequal sizes: the asymptotic one
    assert seq.value == pytest.approx(sums.sum() / sizes.sum())
    assert (seq.n_units, seq.n_rows) == (300, int(sizes.sum()))
    rows = np.repeat(np.arange(300), sizes)
    per_row = np.concatenate([np.full(m, s / m) for s, m in zip(sums, sizes, strict=True)])
    fixed = paired_difference(per_row, np.zeros(len(rows)), rows)
    assert seq.se == pytest.approx(fixed.se)
    assert seq.ci95[0] < fixed.ci95[0] and seq.ci95[1] > fixed.ci95[1]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"values": [1.0]}, "at least 2 units"),
        ({"values": [1.0, np.nan, 0.0]}, "unit 1 is not a finite number"),
        ({"values": [1.0, 0.0], "sizes": [1, 1, 1]}, "one per unit"),
        ({"values": [1.0, 0.0], "sizes": [1, 0]}, "unit 1 has 0.0 rows"),
        ({"values": [1.0, 0.0], "alpha": 0.0}, "alpha"),
        ({"values": [1.0, 0.0], "planned": 0}, "planned"),
        ({"values": [1.0, -3.0], "bound": 1.0}, "unit 1 differs by 3.0 per row"),
        ({"values": [1.0, 0.0], "bound": 0.0}, "bound"),
        ({"values": [[1.0, 0.0]]}, "1-D"),
    ],
)
def test_bad_input_is_named(kwargs: dict[str, object], message: str) -> None:
    values = np.asarray(kwargs.pop("values"))
    with pytest.raises(ValueError, match=message):
        confidence_sequence(values, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("bound", [None, 1.0])
def test_the_path_is_the_interval_after_each_unit(bound: float | None) -> None:
    rng = np.random.default_rng(9)
    runs = np.stack([_binary_diffs(rng, 120, 0.3, 0.2) for _ in range(3)])
    lo, hi = confidence_sequence_path(runs, bound=bound)
    assert lo.shape == hi.shape == (3, 120)
    for r in range(3):
        one_lo, one_hi = confidence_sequence_path(runs[r], bound=bound)
        np.testing.assert_allclose(one_lo, lo[r], rtol=1e-12, atol=1e-12)
        for t in (2, 30, MIN_UNITS, 77, 120):
            ci = confidence_sequence(runs[r, :t], bound=bound).ci95
            assert ci[0] == pytest.approx(lo[r, t - 1], abs=1e-12)
            assert ci[1] == pytest.approx(hi[r, t - 1], abs=1e-12)
