"""A confidence interval for a bounded mean that is valid at every sample size, by betting.

The gate's usual intervals (Tango's score interval, the cluster bootstrap) rest on
approximations that fail with a handful of units: five differences that are all +1 have
a bootstrap interval of [1, 1]. This one rests only on the range [L, U] a unit's value
can take (Waudby-Smith and Ramdas, "Estimating means of bounded random variables by
betting", JRSS B 86:1-27, 2024). To test "the mean is at most m", a gambler starts with
1 and, for each unit, multiplies the capital by 1 + lambda (x - m), a fair or losing bet
when the mean is at most m; with lambda in [0, 1/(m - L)] the capital never goes
negative, so by Markov's inequality it reaches 1/alpha with probability at most alpha.
The interval holds every m that neither the bet up nor the mirrored bet down rejects.

The bets here are a fixed grid, not chosen from the data (the "diversified Kelly" form,
section 5.6 of the paper): the capital is a product over units whatever their order,
valid at a fixed n. Most of the weight is on the all-in bet lambda = 1/(m - L), the
bet that gains most when every unit lands far on one side, so that n equal values d
reject m once ALL_IN x ((d - L)/(m - L))^n >= 1/alpha: six all-win pairwise preferences
clear 0, 91 all-tie ones clear -0.02 and ten +1 differences of 1-3 scores clear 0. The
rest of the weight is spread over smaller bets, which keep some power when the values
are mixed (the all-in bet is lost on the first value at L).
"""

from __future__ import annotations

import math

import numpy as np

ALL_IN = 0.98
"""The weight of the all-in bet: 0.98 x (1/0.96)^91 >= 40 > (1/0.96)^90, so 91 all-tie
pairwise rows are the fewest that pass a margin of 0.02 (and 6 all-win rows at 0). Any
weight from 0.974 would do; what is left goes to the smaller bets."""

# Smaller bets, as fractions of the all-in one: each about 1.8 times the next, from what
# suits a few dozen mixed units down to what suits several thousand.
_FRACTIONS = 0.75 * 0.55 ** np.arange(7)
_WEIGHTS = np.concatenate([[ALL_IN], np.full(len(_FRACTIONS), (1 - ALL_IN) / len(_FRACTIONS))])
_BETS = np.concatenate([[1.0], _FRACTIONS])  # each as a fraction of the all-in bet


def betting_interval(
    x: np.ndarray,
    lower: float,
    upper: float,
    level: float = 0.95,
    *,
    sizes: np.ndarray | None = None,
) -> tuple[float, float]:
    """Two-sided `level` interval for the mean of values known to lie in [lower, upper].

    Each side is a one-sided betting test at (1 - level) / 2, inverted over candidate
    means by root finding (the capital is monotone in m). Valid for independent values
    at any n >= 1, with no other assumption on their distribution; the values need not
    share one distribution, only their average mean is estimated.

    `sizes`: rows per unit when `x` holds unit means of unequal clusters; the estimand
    is then the row-weighted mean sum(size x) / sum(size), and each unit bets in
    proportion to its size (conditionally on the sizes, the same guarantee holds).
    Computed on the distinct (value, size) pairs, so 100,000 units of a few distinct
    values cost no more than a few.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")
    lower, upper = float(lower), float(upper)
    if not (math.isfinite(lower) and math.isfinite(upper) and lower < upper):
        raise ValueError(f"the range must be finite with lower < upper, got [{lower}, {upper}]")
    values = np.asarray(x, dtype=float)
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"x must hold one value per unit (1-D, not empty), got {values.shape}")
    outside = np.flatnonzero(~((values >= lower) & (values <= upper)))
    if outside.size:
        k = int(outside[0])
        raise ValueError(f"x: unit {k} is {values[k]}, outside [{lower}, {upper}]")
    weights = np.ones_like(values) if sizes is None else _shares(sizes, values.size)
    pairs, counts = np.unique(np.column_stack([values, weights]), axis=0, return_counts=True)
    v, w, n = pairs[:, 0], pairs[:, 1], counts.astype(float)
    centre = float(np.sum(n * w * v) / np.sum(n * w))
    threshold = math.log(2 / (1 - level))
    lo = _lowest_mean(v, w, n, lower, min(max(centre, lower), upper), threshold)
    hi = -_lowest_mean(-v, w, n, -upper, min(max(-centre, -upper), -lower), threshold)
    return lo, hi


def log_capital(
    m: float, values: np.ndarray, shares: np.ndarray, counts: np.ndarray, lower: float
) -> float:
    """log of the capital betting that the mean exceeds `m`, from distinct values
    (each `counts` times, betting `shares` of a full unit) that lie at or above `lower`."""
    scaled = shares * (values - m) / (m - lower)  # in [-1, ...): all-in loses all at lower
    with np.errstate(divide="ignore"):
        logs = np.log1p(np.outer(_BETS, scaled)) @ counts
    return float(np.logaddexp.reduce(np.log(_WEIGHTS) + logs))


def _lowest_mean(
    v: np.ndarray, w: np.ndarray, n: np.ndarray, lower: float, centre: float, threshold: float
) -> float:
    """The smallest m in [lower, centre] that the bet up does not reject, by bisection (the
    capital falls as m rises): no scipy, whose optimiser a run that guards a small summary
    would load for nothing else (bench/README.md, `fixed_cost.py`)."""

    def excess(m: float) -> float:
        return log_capital(m, v, w, n, lower) - threshold

    span = centre - lower
    start = lower + span * 1e-12
    if span <= 0 or excess(start) < 0:
        return lower
    if excess(centre) >= 0:  # cannot happen (the capital at the mean is at most 1): guard
        return centre
    rejected, kept = start, centre
    while kept - rejected > 1e-13 * max(span, 1.0):
        mid = (rejected + kept) / 2
        if mid in (rejected, kept):  # no float between them
            break
        if excess(mid) >= 0:
            rejected = mid
        else:
            kept = mid
    return float(kept)


def _shares(sizes: np.ndarray, n_units: int) -> np.ndarray:
    rows = np.asarray(sizes, dtype=float)
    if rows.shape != (n_units,):
        raise ValueError(f"sizes has {rows.size} entries for {n_units} units: one per unit")
    if not np.all(rows >= 1):
        raise ValueError("sizes: every unit has at least one row")
    return rows / rows.max()
