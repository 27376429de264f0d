"""The gate's decision on an interval, and the `Gate` record that holds it.

`assemble` decides on the interval (DESIGN.md §8), adds the slices, the judge-noise
split, the MDE and the rows an inconclusive gate would need, and builds the `Gate`
record; the one-shot gate and the sequential gate both record through it.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from chatjudge.__about__ import __version__
from chatjudge.analysis.gate.pair_rows import Paired
from chatjudge.analysis.gate.units import slice_values
from chatjudge.formats.analyses import (
    Gate,
    GateDifference,
    GateNoise,
    GateSlice,
    GateSmallSample,
)
from chatjudge.stats.decision import decide, mde80, rows_to_decide
from chatjudge.stats.noise import noise_split
from chatjudge.stats.paired import Difference
from chatjudge.stats.small_sample import SMALL_UNITS, SmallSample

Require = Literal["not-worse", "better"]
SLICE_MIN_ROWS = 30  # a smaller slice is shown but never fails the gate


@dataclass(frozen=True, slots=True)
class Settings:
    """What the user asked of the gate, beside the runs."""

    metric: str
    margin: float
    require: Require
    cluster: str | None
    by: str | None
    slices_must_not_regress: bool
    seed: int


def assemble(
    paired: Paired,
    counts: dict[str, dict[str, int]],
    diff: Difference,
    settings: Settings,
    *,
    mismatches: list[str],
    runs: dict[str, str],
    project: bool = True,
) -> Gate:
    """The decision on `diff`'s interval, with slices, noise and counts, as a `Gate`.
    `project`: say how many rows would decide an inconclusive gate (not for a
    sequential gate, whose interval already holds at every look)."""
    s = settings
    ci = (float(diff.ci95[0]), float(diff.ci95[1]))
    outcome = decide(ci, s.margin, s.require)
    reason = _reason(outcome, ci, s.margin, s.require)
    unguarded = diff.small is not None and diff.small.rule == "unguarded"
    if unguarded:  # no interval valid at this size: the approximation never decides
        assert diff.small is not None
        outcome = "inconclusive"
        reason = (
            f"a small sample ({diff.small.why}) of a metric with no known range per row: "
            "no interval valid at this size can decide it"
        )
    bound = boundary(s.margin, s.require)
    slices = slice_differences(paired, s.by, s.margin, s.seed) if s.by else []
    if s.slices_must_not_regress and outcome != "fail":
        bad = [x for x in slices if x.counts and x.below_margin]
        if bad:
            outcome = "fail"
            reason = "slice(s) regressed beyond the margin: " + ", ".join(
                f"{s.by}={x.value}" for x in bad
            )
    undecided = outcome == "inconclusive" and project
    return Gate(
        outcome=outcome,
        reason=reason,
        metric=s.metric,
        difference=gate_difference(diff),
        se=round(float(diff.se), 6),
        method=diff.method,
        mde80=round(
            mde80(
                diff.se,
                n_units=diff.n_units,
                lower=paired.bounds[0] if paired.bounds else None,
                boundary=bound,
            ),
            6,
        ),
        rows_to_decide=(
            _rows_to_decide(diff, s.margin, s.require, paired.bounds, unguarded)
            if undecided
            else None
        ),
        small_sample=_small(diff.small, paired.bounds),
        margin=s.margin,
        require=s.require,
        n_pairs=len(paired.ids),
        n_units=int(diff.n_units),
        counts=counts,
        by=s.by,
        cluster=s.cluster,
        slices=slices,
        noise=_noise(paired),
        mismatches=mismatches,
        looks=[],
        runs=runs,
        created=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        chatjudge_version=__version__,
    )


def boundary(margin: float, require: Require) -> float:
    """Where a decision is taken: -margin for not-worse, 0 for better."""
    return -margin if require == "not-worse" else 0.0


def gate_difference(diff: Difference) -> GateDifference:
    """Δ and its interval as gate.json records them, rounded to 6 places."""
    return GateDifference(value=round(diff.value, 6), ci95=[round(float(v), 6) for v in diff.ci95])


def _rows_to_decide(
    diff: Difference,
    margin: float,
    require: Require,
    bounds: tuple[float, float] | None,
    unguarded: bool,
) -> int | None:
    """The projection, and for a metric with no known range no fewer rows than a sample
    that is not small needs (`SMALL_UNITS` units)."""
    rows = rows_to_decide(diff, margin, require, bounds)
    if rows is None or not unguarded:
        return rows
    return max(rows, math.ceil(diff.n_rows / diff.n_units * SMALL_UNITS))


def _reason(outcome: str, ci: tuple[float, float], margin: float, require: str) -> str:
    lo, hi = ci
    bound = f"{-margin:+.4g}" if require == "not-worse" and margin else "0"
    if outcome == "pass":
        return f"the interval's lower end {lo:+.4g} is above {bound}"
    if outcome == "fail":
        return f"the interval's upper end {hi:+.4g} is below {bound}"
    return f"the interval [{lo:+.4g}, {hi:+.4g}] contains {bound}"


def _small(small: SmallSample | None, bounds: tuple[float, float] | None) -> GateSmallSample | None:
    if small is None:
        return None
    return GateSmallSample(
        rule=small.rule,
        why=small.why,
        sign_p=[round(p, 6) for p in small.sign_p] if small.sign_p else None,
        betting_ci=[round(float(v), 6) for v in small.betting] if small.betting else None,
        difference_range=list(bounds) if bounds is not None else None,
    )


def slice_differences(
    paired: Paired, by: str, margin: float, seed: int, n_resamples: int = 10_000
) -> list[GateSlice]:
    """Per value of `by`: the difference with a Bonferroni-adjusted interval (guarded
    for a small slice at that level and at -margin, where a slice regresses), worst
    first; rows without a value are one slice."""
    rows = slice_values(paired.ids, paired.rows, by)
    values = np.array(rows)
    names = sorted(set(rows))
    level = 1 - 0.05 / len(names)
    out = []
    for value in names:
        mask = values == value
        if not paired.defined(mask):
            continue  # a ratio over no call in a run (no precision where none was made)
        n = int(mask.sum())
        clusters = paired.clusters[mask] if paired.clusters is not None else None
        units = len(set(clusters)) if clusters is not None else n
        method = None
        guarded = True  # a small slice with no known range never regresses
        if units < 2:
            delta = paired.point(mask)
            ci: list[float] | None = None
        else:
            d = paired.difference(mask, -margin, level, seed, n_resamples)
            delta, ci, method = float(d.value), [round(float(v), 6) for v in d.ci95], d.method
            guarded = d.small is None or d.small.rule != "unguarded"
        out.append(
            GateSlice(
                value=value,
                n_pairs=n,
                difference=GateDifference(value=round(delta, 6), ci95=ci or []),
                level=round(level, 6),
                below_margin=ci is not None and ci[1] < -margin and guarded,
                counts=n >= SLICE_MIN_ROWS,
                method=method,
            )
        )
    return sorted(out, key=lambda s: (s.difference.value, s.value))


def _noise(paired: Paired) -> GateNoise | None:
    """The judge-noise split, when rows hold several inner measurements."""
    inner = paired.candidate_inner + (paired.baseline_inner or [])
    if paired.ratio or max(len(a) for a in inner) < 2:  # a ratio is no mean of its rows
        return None
    split = noise_split(paired.candidate_inner, paired.baseline_inner)
    if split is None:
        return None
    return GateNoise(
        judge_share=round(float(split.judge_share), 6),
        width=round(float(split.width), 6),
        width_double_samples=round(float(split.width_double_samples), 6),
        width_double_rows=round(float(split.width_double_rows), 6),
        width_floor=round(float(split.width_floor), 6),
        samples_per_row=round(float(split.samples_per_row), 6),
    )
