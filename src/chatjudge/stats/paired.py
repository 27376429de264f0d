"""The paired difference between two versions of an assistant, with its interval.

A gate compares a candidate with a baseline on the same rows (conversations). Each row
gives one number per side, already averaged over what is nested inside it (samples,
presentation orders, a panel's judges), so the row, or a cluster of rows that move
together, is the unit of every interval here; the inner measurements only feed
`chatjudge.stats.noise`, which says how much of the interval's width the judge's noise costs.

Intervals are two-sided at `level` (95% by default) and each wrong decision keeps its
one-sided error rate at (1 - level) / 2:
- both sides 0/1 and no clusters: Tango's (1998) score interval for paired proportions;
- otherwise: a paired cluster bootstrap of the row-weighted mean difference, read with
  Hesterberg's (2015) expanded percentiles, because the plain percentile interval is
  too narrow with few units (with 20 clusters its one-sided error is about 0.03);
- a ratio metric (micro: ΣN/ΣD over rows): the same bootstrap of the difference of
  the two runs' ratios, numerators and denominators resampled together by unit.
Both are approximations that fail on a small sample; given the range a unit's
difference can take, `chatjudge.stats.small_sample` guards it with a rule valid at
every n (the exact sign test, or the betting interval).
The gate's decision from the interval, and its power, are `chatjudge.stats.decision`'s.
`docs/statistics.md` gives the references and when not to trust each.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from statistics import NormalDist

import numpy as np

from chatjudge.stats.bootstrap import resampled_sums
from chatjudge.stats.small_sample import (
    SmallSample,
    check_three_point,
    guarded_interval,
    small_sample,
)

_NORMAL = NormalDist()  # quantiles without loading scipy on the run's start-up path
_HUGE = 1e12  # stands for an infinite score statistic inside the root finder


@dataclass(frozen=True, slots=True)
class Difference:
    """Δ = mean over rows of (candidate - baseline), its two-sided interval and standard error.

    `se` is the analytic standard error (the cluster-robust one where units are
    clusters); it drives the MDE, the predicted power and the projection of rows, so
    those do not move with the bootstrap's seed. `small`: set when the sample was small
    (see `SmallSample`); `ci95` is then the guarded interval, the one to decide on.
    """

    value: float
    ci95: tuple[float, float]
    se: float
    n_units: int
    n_rows: int
    method: str
    small: SmallSample | None = None


def tango_interval(
    n_baseline_only: int, n_candidate_only: int, n: int, level: float = 0.95
) -> tuple[float, float]:
    """Tango's (1998) score interval for the difference of two paired proportions.

    Δ = p_candidate - p_baseline = (n_candidate_only - n_baseline_only) / n, from the
    discordant counts of the 2x2 table. The interval holds every Δ0 whose score
    statistic, with the variance at the maximum likelihood restricted to Δ = Δ0 (a
    closed form), stays within ±z; each bound is found by root finding. Unlike the
    Wald interval it stays inside [-1, 1], is not degenerate when no pair is
    discordant, and keeps its coverage with few discordant pairs (Agresti and Min 2005).
    """
    check_level(level)
    b, c = n_candidate_only, n_baseline_only
    if n <= 0:
        raise ValueError(f"the 2x2 table needs at least one pair, got n={n}")
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0, got {c} and {b}")
    if b + c > n:
        raise ValueError(f"discordant counts {c} + {b} exceed the {n} pairs")
    from scipy.optimize import brentq  # imported here: scipy.optimize is slow to load

    z = float(_NORMAL.inv_cdf(1 - (1 - level) / 2))
    estimate = (b - c) / n

    def score(d0: float) -> float:
        return _tango_score(b, c, n, d0)

    lo = -1.0 if estimate <= -1 else brentq(lambda d: score(d) - z, -1.0, estimate, xtol=1e-15)
    hi = 1.0 if estimate >= 1 else brentq(lambda d: score(d) + z, estimate, 1.0, xtol=1e-15)
    return float(lo), float(hi)


def _tango_score(b: int, c: int, n: int, d0: float) -> float:
    """Tango's score statistic for H0: Δ = d0, clamped to ±_HUGE where its variance is 0."""
    a_ = 2.0 * n
    b_ = -b - c + (2.0 * n - b + c) * d0
    c_ = -c * d0 * (1.0 - d0)
    q21 = (math.sqrt(max(b_ * b_ - 4.0 * a_ * c_, 0.0)) - b_) / (2.0 * a_)
    variance = n * (2.0 * q21 + d0 * (1.0 - d0))
    numerator = b - c - n * d0
    if variance <= 0.0 or numerator == 0.0:
        return math.copysign(_HUGE, numerator) if numerator else 0.0
    return max(-_HUGE, min(_HUGE, numerator / math.sqrt(variance)))


def paired_difference(
    candidate: np.ndarray,
    baseline: np.ndarray,
    clusters: np.ndarray | None = None,
    *,
    level: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
    bounds: tuple[float, float] | None = None,
    boundary: float = 0.0,
    three_point: bool = False,
) -> Difference:
    """The paired difference Δ of candidate and baseline, with its interval.

    One value per row for each side (already averaged over the row's samples, orders
    and judges). Both sides 0/1 and no clusters -> Tango's interval; otherwise a paired
    cluster bootstrap over units (clusters, else rows) of the row-weighted mean
    difference, ΣS/Σm over units with row-sum S and size m, drawn as a multinomial
    count matrix. For one pairwise run, pass the candidate's preference per row (1 win,
    0.5 tie, 0 loss) and baseline = 0.5 everywhere.

    `bounds`: the range [L, U] one row's difference can take (a preference minus 1/2:
    [-0.5, 0.5]; two 0/1 metrics: [-1, 1]; two 1-3 scores: [-2, 2]). With it, a small
    sample (fewer than 30 units that differ, or fewer than 3 distinct unit differences)
    gets an interval valid at every n for a decision at `boundary` (-margin, or 0):
    with `three_point` (no clusters, every row's difference -a, 0 or a where a = U = -L)
    and a boundary of 0, the exact sign test; otherwise the hull with the betting
    interval. Without `bounds` a small sample is only flagged (`small.rule` unguarded).
    """
    check_level(level)
    cand = as_column(candidate, "candidate")
    base = as_column(baseline, "baseline")
    if len(cand) != len(base):
        raise ValueError(f"candidate has {len(cand)} rows and baseline {len(base)}: pair them")
    diff = cand - base
    if clusters is None:
        if len(diff) < 2:
            raise ValueError(f"a paired difference needs at least 2 rows, got {len(diff)}")
        sums, sizes = diff, np.ones(len(diff))
    else:
        sums, sizes = _unit_sums(diff, clusters)
        if len(sums) < 2:
            raise ValueError(f"a clustered difference needs at least 2 clusters, got {len(sums)}")
    binary = np.isin(cand, (0.0, 1.0)).all() and np.isin(base, (0.0, 1.0)).all()
    if clusters is None and binary:
        found = _tango_difference(cand, base, level)
    else:
        found = Difference(
            value=float(sums.sum() / sizes.sum()),
            ci95=_expanded_percentile(sums, sizes, level, n_resamples, seed),
            se=_ratio_se(sums, sizes),
            n_units=len(sums),
            n_rows=len(diff),
            method="cluster-bootstrap",
        )
    if three_point:
        check_three_point(diff, clusters, bounds)
    return _guarded(found, sums / sizes, sizes, level, bounds, boundary, three_point)


def paired_ratio_difference(
    candidate: np.ndarray,
    baseline: np.ndarray,
    clusters: np.ndarray | None = None,
    *,
    level: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> Difference:
    """The paired difference of two ratio estimators (micro figures: matched calls over
    calls made, summed over rows): Δ = ΣN_c/ΣD_c - ΣN_b/ΣD_b over the paired rows.

    `candidate` and `baseline` hold one (numerator, denominator) per row (n x 2). A mean
    of the rows' own ratios would be another figure (the macro one), so the interval is
    a paired cluster bootstrap over units (clusters, else rows) that resamples each
    unit's four sums together and takes the difference of the resampled ratios, read
    with Hesterberg's expanded percentiles as the mean difference is; `se` is the
    delta-method one from the linearised unit values. No range bounds a ratio's unit,
    so a small sample is only flagged (`small.rule` unguarded).
    """
    check_level(level)
    cand, base = (np.asarray(a, dtype=float) for a in (candidate, baseline))
    if cand.shape != base.shape or cand.ndim != 2 or cand.shape[1] != 2:
        raise ValueError(
            f"candidate {cand.shape} and baseline {base.shape}: one (numerator, "
            "denominator) per row for each, paired"
        )
    rows = np.column_stack([cand, base])
    if not np.isfinite(rows).all():
        raise ValueError("numerators and denominators must be finite numbers")
    units = rows if clusters is None else _unit_rows(rows, np.asarray(clusters))
    g = len(units)
    if g < 2:
        raise ValueError(f"a paired difference needs at least 2 units, got {g}")
    totals = units.sum(axis=0)
    if totals[1] <= 0 or totals[3] <= 0:
        raise ValueError("a ratio needs denominators that sum to more than 0 in both runs")
    ratios = totals[[0, 2]] / totals[[1, 3]]
    # each unit's share of Δ, linearised: (N - R D) / mean D, candidate less baseline
    linear = (units[:, 0] - ratios[0] * units[:, 1]) / (totals[1] / g) - (
        units[:, 2] - ratios[1] * units[:, 3]
    ) / (totals[3] / g)
    resampled = resampled_sums(units, n_resamples, seed)
    with np.errstate(invalid="ignore", divide="ignore"):
        stats = resampled[:, 0] / resampled[:, 1] - resampled[:, 2] / resampled[:, 3]
    stats = stats[np.isfinite(stats)]  # a resample whose calls sum to 0 has no ratio
    q = _expanded_tail(g, level)
    lo, hi = np.quantile(stats, [q, 1 - q])
    found = Difference(
        value=float(ratios[0] - ratios[1]),
        ci95=(float(lo), float(hi)),
        se=float(math.sqrt(float(np.sum(linear**2)) / (g * (g - 1)))),
        n_units=g,
        n_rows=len(rows),
        method="ratio-cluster-bootstrap",
    )
    # the small-sample count reads units that differ: those whose two sides are alike are 0
    differ = (units[:, :2] != units[:, 2:]).any(axis=1)
    return _guarded(found, np.where(differ, linear, 0.0), np.ones(g), level, None, 0.0, False)


def _unit_rows(rows: np.ndarray, clusters: np.ndarray) -> np.ndarray:
    """Each cluster's column sums of `rows`."""
    if clusters.shape != (len(rows),):
        raise ValueError(f"clusters has {clusters.size} labels for {len(rows)} rows: one per row")
    _, index = np.unique(clusters, return_inverse=True)
    return np.column_stack([np.bincount(index, weights=c) for c in rows.T])


def _guarded(
    diff: Difference,
    means: np.ndarray,
    sizes: np.ndarray,
    level: float,
    bounds: tuple[float, float] | None,
    boundary: float,
    three_point: bool,
) -> Difference:
    """`diff` with the small-sample rule applied to its interval, when the sample is small."""
    small = small_sample(means, sizes, level, bounds, boundary, three_point)
    if small is None:
        return diff
    if small.rule == "unguarded":
        return replace(diff, small=small)
    return replace(
        diff,
        ci95=guarded_interval(diff.ci95, small, level),
        method=f"{diff.method}+{small.rule}",
        small=small,
    )


def _tango_difference(cand: np.ndarray, base: np.ndarray, level: float) -> Difference:
    n = len(cand)
    n_candidate_only = int(np.count_nonzero((cand == 1) & (base == 0)))
    n_baseline_only = int(np.count_nonzero((cand == 0) & (base == 1)))
    ci = tango_interval(n_baseline_only, n_candidate_only, n, level)
    return Difference(
        value=(n_candidate_only - n_baseline_only) / n,
        ci95=ci,
        se=_ratio_se(cand - base, np.ones(n)),
        n_units=n,
        n_rows=n,
        method="tango",
    )


def _expanded_percentile(
    sums: np.ndarray, sizes: np.ndarray, level: float, n_resamples: int, seed: int
) -> tuple[float, float]:
    """Hesterberg's expanded percentile interval of ΣS/Σm over resampled units.

    The percentiles are taken at the tail where z = sqrt(G/(G-1)) t_{G-1}: the factor
    undoes the bootstrap's (G-1)/G variance and t its small-sample spread, so that
    with many units the interval is the percentile one and with few it widens like t.
    """
    resampled = resampled_sums(np.column_stack([sums, sizes]), n_resamples, seed)
    stats = resampled[:, 0] / resampled[:, 1]
    q = _expanded_tail(len(sums), level)
    lo, hi = np.quantile(stats, [q, 1 - q])
    return float(lo), float(hi)


def _expanded_tail(g: int, level: float) -> float:
    """The lower percentile (as a probability) of Hesterberg's interval with `g` units."""
    from scipy import special  # t quantiles; scipy.special is slow to load

    tail = float(special.stdtrit(g - 1, (1 - level) / 2)) * math.sqrt(g / (g - 1))
    # the tail probability itself, not 1 - 2 x it: with 2 units it is 1e-72, and the
    # central level it leaves rounds to 1.0
    return float(special.ndtr(tail))


def _ratio_se(sums: np.ndarray, sizes: np.ndarray) -> float:
    """Cluster-robust standard error of ΣS/Σm from the linearised unit values."""
    g = len(sums)
    ratio = sums.sum() / sizes.sum()
    linear = (sums - ratio * sizes) / sizes.mean()
    return float(math.sqrt(float(np.sum(linear**2)) / (g * (g - 1))))


def _unit_sums(diff: np.ndarray, clusters: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    labels = np.asarray(clusters)
    if labels.shape != diff.shape:
        raise ValueError(f"clusters has {labels.size} labels for {diff.size} rows: one per row")
    _, index = np.unique(labels, return_inverse=True)
    return np.bincount(index, weights=diff), np.bincount(index).astype(float)


def as_column(values: np.ndarray, name: str, item: str = "row") -> np.ndarray:
    column = np.asarray(values, dtype=float)
    if column.ndim != 1:
        raise ValueError(f"{name} must hold one value per {item} (1-D), got {column.shape}")
    bad = np.flatnonzero(~np.isfinite(column))
    if bad.size:
        raise ValueError(f"{name}: {item} {int(bad[0])} is not a finite number ({column[bad[0]]})")
    return column


def check_level(level: float) -> None:
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")
