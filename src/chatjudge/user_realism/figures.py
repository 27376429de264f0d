"""Each figure's 95% interval, honest at its size.

A mean over goals (a side's value, a paired difference) takes the Student-t interval over
goals; on a small sample (fewer than 30 goals, fewer than 3 distinct values, or fewer than
30 off the commonest) it is the guard of the summary's intervals (`stats.intervals.guard`):
a 0/1 value per goal takes Clopper-Pearson, a bounded one the hull with the betting
interval valid at every n, and an unbounded one (turns, words) none, with `too_few`.
Uniformity is no mean of goal values: it takes the jackknife over goals, and none below 30
goals, where the jackknife's variance of a mean of pairs is not to be trusted."""

from __future__ import annotations

import math

import numpy as np

from chatjudge.formats.realism import Figure
from chatjudge.stats.bootstrap import Estimate
from chatjudge.stats.intervals import TOO_FEW, Range, guard
from chatjudge.stats.small_sample import SMALL_UNITS

LEVEL = 0.95


def mean_figure(values: np.ndarray, known: Range) -> Figure:
    """The mean of one value a goal, with its interval."""
    n = len(values)
    mean = float(values.mean())
    half = _t(n) * float(values.std(ddof=1)) / math.sqrt(n) if n > 1 else math.nan
    ci = (mean - half, mean + half) if n > 1 else None
    # The betting interval's root finding evaluates its capital at the range's ends too,
    # where it divides by zero on the way to a valid end.
    with np.errstate(divide="ignore", invalid="ignore"):
        found = guard(Estimate(mean, ci, n), values, known, level=LEVEL)
    return _figure(mean, found.ci95, known, found.too_few)


def jackknife_figure(value: float, left_out: np.ndarray, known: Range) -> Figure:
    """`value` with the jackknife interval from its values with each goal left out."""
    g = len(left_out)
    if g < SMALL_UNITS:
        why = f"{TOO_FEW}: {g} goals (fewer than {SMALL_UNITS}) for the jackknife"
        return _figure(value, None, known, why)
    se = math.sqrt((g - 1) / g * float(((left_out - left_out.mean()) ** 2).sum()))
    half = _t(g) * se
    return _figure(value, (value - half, value + half), known, None)


def _figure(
    value: float, ci: tuple[float, float] | None, known: Range, too_few: str | None
) -> Figure:
    if ci is not None and known.bounded:
        assert known.lower is not None and known.upper is not None
        ci = (max(ci[0], known.lower), min(ci[1], known.upper))
    figure = Figure(value=value, ci95=list(ci) if ci is not None else None)
    if too_few is not None:  # written only then
        figure.too_few = too_few
    return figure


def _t(n: int) -> float:
    """The two-sided 95% Student-t quantile on n - 1 degrees of freedom."""
    from scipy import special  # imported here: scipy.special takes a while to load

    return float(special.stdtrit(n - 1, 0.5 + LEVEL / 2))
