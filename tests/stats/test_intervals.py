"""`stats.intervals`: each metric's interval by its kind, valid at every sample size."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from chatjudge.stats import bootstrap_metrics, bootstrap_ratios
from chatjudge.stats.intervals import SHARE, UNBOUNDED, Range, clopper_pearson, guard


@pytest.mark.parametrize(("ones", "n"), [(0, 1), (1, 1), (0, 8), (3, 10), (7, 7), (31, 100_000)])
def test_clopper_pearson_is_scipys_exact_interval(ones: int, n: int) -> None:
    exact = stats.binomtest(ones, n).proportion_ci(method="exact")
    assert clopper_pearson(ones, n) == pytest.approx((exact.low, exact.high), abs=1e-9)


def _guarded(values: list[float], known: Range) -> tuple[float, float] | None:
    column = np.asarray(values, dtype=float)
    return guard(bootstrap_metrics({"m": column})["m"], column, known).ci95


def test_a_share_takes_the_exact_interval_at_any_size() -> None:
    ones = [1.0] * 300 + [0.0] * 700
    assert _guarded(ones, SHARE) == pytest.approx(clopper_pearson(300, 1000))
    # averaged over samples an item's share is no longer 0 or 1: a bounded mean
    fractional = [0.5, 1.0, 1.0, 0.0]
    lo, hi = _guarded(fractional, SHARE) or (0, 0)
    assert 0.0 <= lo < 0.2 and 0.9 < hi <= 1.0


def test_a_large_spread_sample_keeps_the_bootstrap() -> None:
    rng = np.random.default_rng(1)
    scores = rng.choice([1.0, 2.0, 3.0], size=500, p=[0.4, 0.3, 0.3]).tolist()
    plain = bootstrap_metrics({"m": np.asarray(scores)})["m"].ci95
    assert _guarded(scores, Range(1.0, 3.0)) == plain


def test_scores_piled_on_one_value_are_held_to_the_betting_interval() -> None:
    scores = [1.0] * 90 + [2.0] * 5 + [3.0] * 5  # 10 items off the commonest value
    plain = bootstrap_metrics({"m": np.asarray(scores)})["m"].ci95
    guarded = _guarded(scores, Range(1.0, 3.0))
    assert plain is not None and guarded is not None
    assert guarded[0] <= plain[0] and guarded[1] > plain[1]


def test_no_known_range_on_a_small_sample_has_no_interval_and_says_why() -> None:
    column = np.array([3.0, 40.0, 7.0, 12.0])
    found = guard(bootstrap_metrics({"m": column})["m"], column, UNBOUNDED)
    assert found.ci95 is None and found.value == pytest.approx(15.5)
    assert found.too_few == "too few to say: 4 items (fewer than 30), and no known range"
    assert found.to_dict()["too_few"] == found.too_few
    alike = np.full(50, 7.0)  # 50 equal values: a bootstrap of a point
    found = guard(bootstrap_metrics({"m": alike})["m"], alike, UNBOUNDED)
    assert found.ci95 is None and "1 distinct value(s)" in (found.too_few or "")


def test_a_ratio_is_held_to_the_betting_interval_of_its_items_weighted_by_denominator() -> None:
    top, bottom = np.array([2.0, 0.0, 3.0]), np.array([2.0, 1.0, 3.0])
    found = bootstrap_ratios({"r": (top, bottom)})["r"]
    lo, hi = guard(found, top / bottom, Range(0.0, 1.0), sizes=bottom).ci95 or (0, 0)
    assert found.value == pytest.approx(5 / 6)
    assert lo < 0.5 < 5 / 6 < hi <= 1.0
