"""Each summary metric's 95% interval by what the metric is, valid at every sample size.

A percentile bootstrap over equal values collapses to a point ([0, 0] for 0 of 8), which
covers the truth with probability 0, and it undercovers on any small sample. So:

- a 0/1 share (a choice's share, a 0/1 score) takes the Clopper-Pearson interval, exact at
  every n (0 of 8: [0, 0.37]); it never collapses;
- a mean of values with a known range (1-3 scores, ratios in [0, 1], a share averaged over
  samples or orders) takes the bootstrap interval, widened on a small sample to hold the
  betting interval valid at every n for that range (`chatjudge.stats.betting`), the guard
  the gate uses: fewer than 30 units, fewer than 3 distinct values, or fewer than 30 units
  off the commonest value (a sample piled on one value, which no bootstrap reads well);
- a metric with no known range (token counts, turns) has no interval on a small sample:
  `too_few` says why, and readers print "too few to say".
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from chatjudge.stats.bootstrap import Estimate
from chatjudge.stats.small_sample import SMALL_DISTINCT, SMALL_UNITS

TOO_FEW = "too few to say"


@dataclass(frozen=True, slots=True)
class Range:
    """What is known of one item's value of a metric: its range, None when unbounded, and
    whether every value is 0 or 1 (a share, when no averaging made it fractional)."""

    lower: float | None = None
    upper: float | None = None
    zero_one: bool = False

    @property
    def bounded(self) -> bool:
        return self.lower is not None and self.upper is not None and self.lower < self.upper


UNBOUNDED = Range()
SHARE = Range(0.0, 1.0, zero_one=True)


def guard(
    estimate: Estimate,
    values: np.ndarray,
    known: Range,
    sizes: np.ndarray | None = None,
    level: float = 0.95,
) -> Estimate:
    """`estimate` (a bootstrap's) with the interval its metric's kind makes valid at its size.

    `values`: one per item, NaN where the item does not count; `sizes`: per item, its
    weight in a ratio of sums (its denominator), so that the ratio is the `sizes`-weighted
    mean of `values` (each item's own ratio)."""
    counted = ~np.isnan(values)
    x = values[counted]
    if x.size == 0 or estimate.value is None:
        return estimate
    if known.zero_one and sizes is None and bool(np.all((x == 0) | (x == 1))):
        ones = int(np.count_nonzero(x))
        return replace(estimate, ci95=clopper_pearson(ones, int(x.size), level))
    why = small_why(x)
    if why is None:
        return estimate
    if not known.bounded:
        return replace(estimate, ci95=None, too_few=f"{TOO_FEW}: {why}, and no known range")
    assert known.lower is not None and known.upper is not None
    from chatjudge.stats.betting import betting_interval  # only for a small sample

    lower, upper = known.lower, known.upper
    slack = 1e-9 * (upper - lower)
    if bool(np.any((x < lower - slack) | (x > upper + slack))):  # not the range declared
        return replace(estimate, ci95=None, too_few=f"{TOO_FEW}: {why}, values out of range")
    weights = None
    if sizes is not None:
        w = sizes[counted]
        if bool(np.any(w <= 0)):
            w, x = w[w > 0], x[w > 0]
        weights = w / w.min()
    bet = betting_interval(np.clip(x, lower, upper), lower, upper, level, sizes=weights)
    if estimate.ci95 is None:
        return replace(estimate, ci95=bet)
    lo, hi = estimate.ci95
    return replace(estimate, ci95=(min(lo, bet[0]), max(hi, bet[1])))


def guard_all(
    found: Mapping[str, Estimate],
    columns: Mapping[str, np.ndarray],
    ranges: Mapping[str, Range],
    sizes: Mapping[str, np.ndarray] | None = None,
) -> dict[str, Estimate]:
    """`guard` for every metric of `found`, from its column of item values (a ratio's
    items' own ratios, with their denominators in `sizes`); a metric not in `ranges` is
    unbounded."""
    weights = sizes or {}
    return {
        name: guard(est, columns[name], ranges.get(name, UNBOUNDED), weights.get(name))
        for name, est in found.items()
    }


def small_why(x: np.ndarray) -> str | None:
    """Why these item values are too few for a bootstrap, or None when they are not."""
    n = int(x.size)
    if n < SMALL_UNITS:
        return f"{n} item{'s' if n != 1 else ''} (fewer than {SMALL_UNITS})"
    values, counts = np.unique(x, return_counts=True)
    if values.size < SMALL_DISTINCT:
        return f"{values.size} distinct value(s) (fewer than {SMALL_DISTINCT})"
    off = n - int(counts.max())
    if off < SMALL_UNITS:
        return f"{off} of {n} items off the commonest value (fewer than {SMALL_UNITS})"
    return None


def range_too_few(
    units: np.ndarray, value: float | None, ends: tuple[float, float], noun: str
) -> str | None:
    """Why a statistic with a known range (kappa, alpha, a rank correlation in [-1, 1]),
    bootstrapped over `units` (one row each), has no interval valid at this size: fewer
    than 30 units, fewer than 3 distinct ones, or a value at an end of its range (perfect
    agreement: every resample gives it too, so the bootstrap collapses there). None when
    the bootstrap may speak; `noun` names the units ("pairs", "items")."""
    n = len(units)
    if n < SMALL_UNITS:
        return f"{TOO_FEW}: {n} {noun} (fewer than {SMALL_UNITS})"
    rows = np.asarray(units, dtype=float).reshape(n, -1)
    distinct = len(np.unique(np.where(np.isnan(rows), np.inf, rows), axis=0))
    if distinct < SMALL_DISTINCT:
        return f"{TOO_FEW}: {distinct} distinct {noun} (fewer than {SMALL_DISTINCT})"
    slack = 1e-12 * (ends[1] - ends[0])  # a coefficient of 1 computed as 0.9999999999999998
    if value is not None and (value <= ends[0] + slack or value >= ends[1] - slack):
        return f"{TOO_FEW}: {value:g} is an end of its range, and so is every resample"
    return None


def clopper_pearson(ones: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of a share of `ones` in `n`: each end the share
    at which the count observed is a (1 - level) / 2 tail; coverage >= level at every n
    and share. Without scipy, which a run would load for nothing else."""
    if not 0 <= ones <= n or n < 1:
        raise ValueError(f"need 0 <= ones <= n and n >= 1, got {ones} of {n}")
    alpha = (1 - level) / 2
    lo = 0.0 if ones == 0 else _lower_end(ones, n, alpha)
    hi = 1.0 if ones == n else 1.0 - _lower_end(n - ones, n, alpha)
    return lo, hi


def _lower_end(k: int, n: int, alpha: float) -> float:
    """The share p in (0, k/n) where P(X >= k) = alpha for X ~ Binomial(n, p), by bisection
    (the tail grows with p)."""
    lo, hi = 0.0, k / n
    for _ in range(60):
        mid = (lo + hi) / 2
        if _upper_tail(k, n, mid) < alpha:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12:
            break
    return lo


def _upper_tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p) with p <= k / n: from the k-th term, each next one
    smaller, so terms past 40 standard deviations add nothing. A few terms are summed in
    plain floats, many in numpy (which costs more to start than a short sum)."""
    if k == 0:
        return 1.0
    if p >= 1.0:
        return 1.0
    stop = min(n, k + 50 + int(40 * math.sqrt(n * p * (1 - p))))
    first = (
        math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
        + k * math.log(p) + (n - k) * math.log1p(-p)
    )  # fmt: skip
    if stop - k <= _SHORT_SUM:
        odds = p / (1 - p)
        term = total = math.exp(first)  # the largest term: if it underflows, so does the sum
        for j in range(k, stop):
            term *= (n - j) / (j + 1) * odds
            total += term
        return total
    at = np.arange(k, stop, dtype=float)
    steps = np.log((n - at) / (at + 1)) + (math.log(p) - math.log1p(-p))
    logs = first + np.concatenate(([0.0], np.cumsum(steps)))
    return float(np.exp(logs).sum())


_SHORT_SUM = 64  # terms summed in plain floats
