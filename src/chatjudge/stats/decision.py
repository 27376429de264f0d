"""The gate's decision from the interval of a paired difference, and how far it could see.

`decide` reads the two-sided interval of Δ (`chatjudge.stats.paired`) against the
boundary the gate asks about: -margin for "not worse", 0 for "better". The rest says
what a gate of this size could find: the minimum detectable effect at 80% power, the
predicted probability of a pass, and about how many rows would decide an inconclusive
gate. Each keeps to what the small-sample guard (`chatjudge.stats.small_sample`) needs.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Literal

from chatjudge.stats.paired import Difference
from chatjudge.stats.small_sample import equal_distance, equal_units

_NORMAL = NormalDist()  # quantiles without loading scipy on the run's start-up path
Require = Literal["not-worse", "better"]
Outcome = Literal["pass", "fail", "inconclusive"]

_Z80 = 2.80  # z(0.975) + z(0.80), rounded as the gate prints it: MDE = 2.80 x SE


def decide(ci: tuple[float, float], margin: float, require: Require) -> Outcome:
    """The gate's outcome from the two-sided interval [lo, hi] of Δ.

    not-worse: pass if lo > -margin, fail if hi < -margin; better: pass if lo > 0,
    fail if hi < 0; otherwise inconclusive. With a 95% interval each wrong outcome
    has a one-sided error rate of at most 0.025.
    """
    lo, hi = ci
    boundary = _boundary(margin, require)
    if lo > boundary:
        return "pass"
    if hi < boundary:
        return "fail"
    return "inconclusive"


def mde80(
    se: float,
    *,
    n_units: int | None = None,
    lower: float | None = None,
    boundary: float = 0.0,
) -> float:
    """Minimum detectable effect: the distance from the boundary found with 80% power.

    2.80 x SE, for a two-sided 95% interval (z 1.96 + z 0.84). Given `n_units` and
    `lower`, the lowest difference a unit can take, never less than `equal_distance`:
    a small sample's guard passes nothing closer to the boundary, and it is not 0
    where the SE is (every unit equal).
    """
    if se < 0:
        raise ValueError(f"a standard error is >= 0, got {se}")
    if n_units is None or lower is None:
        return _Z80 * se
    return max(_Z80 * se, equal_distance(n_units, boundary - lower))


def power(delta: float, se: float, margin: float, require: Require) -> float:
    """Predicted probability of `pass` when the true difference is `delta`.

    Normal approximation: Δ estimated ~ N(delta, se^2), pass when Δ - 1.96 se clears
    the boundary (-margin for not-worse, 0 for better).
    """
    if se < 0:
        raise ValueError(f"a standard error is >= 0, got {se}")
    distance = delta - _boundary(margin, require)
    if se == 0:
        return 1.0 if distance > 0 else 0.0
    return float(_NORMAL.cdf(distance / se - _NORMAL.inv_cdf(0.975)))


def rows_to_decide(
    diff: Difference,
    margin: float,
    require: Require,
    bounds: tuple[float, float] | None = None,
) -> int | None:
    """About how many rows (same variance, observed Δ) would make the interval exclude the boundary.

    The 95% normal interval's half-width shrinks as 1/sqrt(rows); this is the row
    count where it equals the distance from the observed Δ to the boundary (fewer
    than `n_rows` when already decided). Given `bounds`, the range of a row's
    difference, never fewer than `equal_units` (in rows): what the small-sample guard
    needs even when every unit differs alike. A projection, not a promise: at that size
    the interval decides about half the time, and gating again after adding rows is
    peeking (use a sequential gate). None when Δ is on the boundary.
    """
    boundary = _boundary(margin, require)
    distance = abs(diff.value - boundary)
    if distance == 0:
        return None
    z = float(_NORMAL.inv_cdf(0.975))
    rows = math.ceil(diff.n_rows * (z * diff.se / distance) ** 2)
    if bounds is not None:
        per_unit = diff.n_rows / diff.n_units
        rows = max(rows, math.ceil(per_unit * equal_units(diff.value, boundary, bounds)))
    return max(1, rows)


def _boundary(margin: float, require: Require) -> float:
    if margin < 0:
        raise ValueError(f"the margin is >= 0 (Δ may be that far below 0), got {margin}")
    if require == "not-worse":
        return -margin
    if require == "better":
        return 0.0
    raise ValueError(f"require is 'not-worse' or 'better', got {require!r}")
