"""The rule that guards a small sample's interval, valid at every n.

The Tango and bootstrap intervals of `chatjudge.stats.paired` are approximations that
fail on a small sample (five units that all differ by +1 have a bootstrap interval of
[1, 1]). Given the range a unit's difference can take, a small sample (fewer than 30
units that differ, or fewer than 3 distinct unit differences) is guarded by a rule valid
at every n: the exact sign test at a boundary of 0 for differences of -a, 0 or a, else
the hull with the betting interval of `chatjudge.stats.betting`. The same rule sets the
floors of the MDE and of the rows a decision needs (`equal_distance`, `equal_units`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from chatjudge.stats.betting import ALL_IN, betting_interval

SMALL_UNITS = 30  # fewer units that differ than this is a small sample...
SMALL_DISTINCT = 3  # ...and so are fewer distinct unit differences than this
SmallRule = Literal["sign-test", "betting", "unguarded"]


@dataclass(frozen=True, slots=True)
class SmallSample:
    """Why a sample counted as small, and the rule valid at every n that guarded it.

    `sign-test`: differences of -a, 0 or a at a boundary of 0; on each side the exact
    one-sided sign test does not reject (`sign_p`: its p-values for Δ > 0 and for Δ < 0,
    on the units that differ), the interval keeps 0 and reaches `betting`'s end.
    `betting`: the interval is the hull of the method's own and `betting` (valid at every
    n for the known range).
    `unguarded`: no range was given, so nothing guards the method's interval.
    """

    rule: SmallRule
    why: str
    sign_p: tuple[float, float] | None = None
    betting: tuple[float, float] | None = None


def small_sample(
    means: np.ndarray,
    sizes: np.ndarray,
    level: float,
    bounds: tuple[float, float] | None,
    boundary: float,
    three_point: bool,
) -> SmallSample | None:
    """The rule for these unit differences (unit sizes `sizes`), or None when the sample
    is not small; `unguarded` when no range `bounds` was given."""
    why = _small_why(means)
    if why is None:
        return None
    if bounds is None:
        return SmallSample("unguarded", why)
    lower, upper = bounds
    means = _within(means, lower, upper)
    bet = betting_interval(means, lower, upper, level, sizes=sizes)
    if three_point and boundary == 0:
        up, down = int(np.count_nonzero(means > 0)), int(np.count_nonzero(means < 0))
        return SmallSample("sign-test", why, sign_p=sign_test(up, down), betting=bet)
    return SmallSample("betting", why, betting=bet)


def guarded_interval(
    ci: tuple[float, float], small: SmallSample, level: float = 0.95
) -> tuple[float, float]:
    """`ci` as the small-sample rule lets it decide: widened to hold the betting interval;
    under the sign test, only on a side it does not clear at (1 - level) / 2, where it also
    keeps 0 (no pass, or no fail, without the sign test). A side the sign test clears keeps
    the method's end; one it does not is then valid as an interval too, where the bare sign
    test kept only 0 ([+0, +0] for three ties)."""
    lo, hi = ci
    bet_lo, bet_hi = small.betting if small.betting is not None else (lo, hi)
    if small.sign_p is None:
        return min(lo, bet_lo), max(hi, bet_hi)
    alpha = (1 - level) / 2
    p_up, p_down = small.sign_p
    lo = lo if p_up <= alpha else min(lo, 0.0, bet_lo)
    hi = hi if p_down <= alpha else max(hi, 0.0, bet_hi)
    return lo, hi


def _small_why(means: np.ndarray) -> str | None:
    """Why these unit differences are a small sample, or None when they are not."""
    n = len(means)
    differ = int(np.count_nonzero(means))
    if n < SMALL_UNITS:
        return f"{n} units (fewer than {SMALL_UNITS})"
    if differ < SMALL_UNITS:
        return f"{differ} of {n} units differ (fewer than {SMALL_UNITS})"
    distinct = len(np.unique(means))
    if distinct < SMALL_DISTINCT:
        return f"{distinct} distinct unit differences (fewer than {SMALL_DISTINCT})"
    return None


def sign_test(up: int, down: int) -> tuple[float, float]:
    """The exact one-sided sign test's p-values for Δ > 0 and for Δ < 0, from the counts
    of units with a positive and a negative difference (ties at 0 left out).

    Valid for the mean where every difference is -a, 0 or a: the mean is then a x
    (P(up) - P(down)), so Δ <= 0 makes `up` at most Binomial(up + down, 1/2).
    """
    if up < 0 or down < 0:
        raise ValueError(f"counts must be >= 0, got {up} and {down}")
    from scipy import special  # binomial tails; scipy.special is slow to load

    n = up + down
    return (
        float(special.bdtrc(up - 1, n, 0.5)) if up else 1.0,
        float(special.bdtrc(down - 1, n, 0.5)) if down else 1.0,
    )


def check_three_point(
    diff: np.ndarray, clusters: np.ndarray | None, bounds: tuple[float, float] | None
) -> None:
    """Refuse `three_point` where the sign test would not be valid: it needs single rows
    whose differences are all -a, 0 or a."""
    if clusters is not None or bounds is None or bounds[0] != -bounds[1]:
        raise ValueError("three_point needs no clusters and symmetric bounds (-a, a)")
    a = bounds[1]
    bad = np.flatnonzero(~np.isin(diff, (-a, 0.0, a)))
    if bad.size:
        k = int(bad[0])
        raise ValueError(f"three_point: row {k} differs by {diff[k]}, not -a, 0 or a")


def _within(means: np.ndarray, lower: float, upper: float) -> np.ndarray:
    """Unit means inside [lower, upper], allowing for rounding in their sums."""
    slack = 1e-9 * (upper - lower)
    bad = np.flatnonzero((means < lower - slack) | (means > upper + slack))
    if bad.size:
        k = int(bad[0])
        raise ValueError(
            f"unit {k} differs by {means[k]}, outside the range [{lower}, {upper}] given"
        )
    return np.clip(means, lower, upper)


def equal_distance(n_units: int, room: float, alpha: float = 0.025) -> float:
    """How far above the boundary n equal unit differences must lie to pass the betting
    test: `room` (the boundary minus the lowest possible difference) x
    ((1/(ALL_IN alpha))^(1/n) - 1).

    0.43 for 6 pairwise units at 0 (room 0.5), 0.01997 for 91 at -0.02 (room 0.48: ties
    just clear it), 0.90 for ten 1-3 score differences at 0 (room 2). More than the
    distance to the top of the range means no sample of n units can pass.
    """
    if n_units < 1:
        raise ValueError(f"n_units must be at least 1, got {n_units}")
    return max(room, 0.0) * ((1 / (ALL_IN * alpha)) ** (1 / n_units) - 1)


def equal_units(
    value: float, boundary: float, bounds: tuple[float, float], alpha: float = 0.025
) -> int:
    """The fewest units, all differing by `value`, that the betting test decides on the
    side of `boundary` where `value` lies: ln(1/(ALL_IN alpha)) / ln((d - L)/(b - L))
    above it, mirrored with U below it (6 all-win pairwise units at 0, 91 all-tie ones
    at -0.02, 10 units of +1 on 1-3 scores)."""
    lower, upper = bounds
    if value > boundary:
        room, reach = boundary - lower, value - lower
    elif value < boundary:
        room, reach = upper - boundary, upper - value
    else:
        raise ValueError("no number of units decides a difference on the boundary")
    if room <= 0:  # the boundary lies beyond the range: every sample is on one side
        return 1
    return max(1, math.ceil(math.log(1 / (ALL_IN * alpha)) / math.log(reach / room) - 1e-12))
