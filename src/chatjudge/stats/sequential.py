"""An anytime-valid confidence sequence for the paired difference, for gates that stop early.

A sequential gate judges units (rows, or clusters of rows) in batches and looks at its
interval after each one, stopping as soon as it decides. Recomputing the fixed-sample
interval at every look inflates each error rate far above 0.025 (the more looks, the
worse); a confidence sequence holds the true Δ at every look at once with probability
1 - alpha, so the gate may stop whenever it likes.

Two constructions:
- `bound` known (the largest possible |difference| of one row) and units of equal size:
  the predictable plug-in empirical-Bernstein sequence of Waudby-Smith and Ramdas
  ("Estimating means of bounded random variables by betting", JRSS B 2024, Theorem 2).
  Valid at every sample size for any distribution within the bound: no warm-up; the
  interval reported is the running intersection over every unit so far.
- otherwise: the asymptotic sequence of Waudby-Smith, Arbour, Sinha, Kennedy and Ramdas
  ("Time-uniform central limit theory and asymptotic confidence sequences", Annals of
  Statistics 2024), Robbins' two-sided normal-mixture boundary with the empirical
  variance of the units' linearised values (so clusters of unequal size estimate the
  row-weighted mean, a ratio). Its guarantee is asymptotic: the empirical variance of
  the first units can be far too small (twenty 0/1 differences that are all 0 have
  variance 0), so it reports (-inf, inf) before `min_units` units, and rare
  discordances (a 0/1 metric where the versions disagree on under 10% of rows) still
  mislead it; bench/gate_calibration.py measures both. Pass `bound` where it is known.
"""

from __future__ import annotations

import math

import numpy as np

from chatjudge.stats.paired import Difference

PLANNED_UNITS = 500
"""Where the boundary is tightest when the caller does not say: a few hundred rows is
where a gate of a 0/1 or 1-3 metric usually decides a difference of 0.05-0.15."""

MIN_UNITS = 50
"""The asymptotic sequence's warm-up: before this many units its interval is (-inf, inf)."""

_BET_CAP = 0.75  # the largest bet of the empirical-Bernstein sequence (c in the paper)


def confidence_sequence(
    values: np.ndarray,
    sizes: np.ndarray | None = None,
    *,
    alpha: float = 0.05,
    planned: int | None = None,
    bound: float | None = None,
    min_units: int = MIN_UNITS,
) -> Difference:
    """Anytime-valid two-sided (1 - alpha) interval for the row-weighted mean difference.

    `values`: per unit seen so far, in the order judged (which must not depend on the
    values), the SUM of its rows' differences (candidate - baseline); `sizes`: rows per
    unit (None = one row each). Valid under looks after every unit. `planned`: the
    number of units the boundary is tightest at, fixed before looking (default
    PLANNED_UNITS; pass the total when the data has fewer units). `bound`: the largest possible
    |difference| of one row (1 for a 0/1 metric, 2 for a 1-3 score, 0.5 for a
    preference minus one half); with it and units of equal size the sequence is exact,
    otherwise asymptotic with a (-inf, inf) interval before `min_units` units. `se` is
    the fixed-sample standard error, for the MDE and projections.
    """
    sums = np.asarray(values, dtype=float)
    if sums.ndim != 1:
        raise ValueError(f"values must hold one sum per unit (1-D), got shape {sums.shape}")
    if len(sums) < 2:
        raise ValueError(f"a confidence sequence needs at least 2 units, got {len(sums)}")
    lo, hi = confidence_sequence_path(
        sums, sizes, alpha=alpha, planned=planned, bound=bound, min_units=min_units
    )
    rows = np.ones(len(sums)) if sizes is None else np.asarray(sizes, dtype=float)
    t = len(sums)
    value = float(sums.sum() / rows.sum())
    linear = (sums - value * rows) / rows.mean()
    return Difference(
        value=value,
        ci95=(float(lo[-1]), float(hi[-1])),
        se=math.sqrt(float(np.sum(linear**2)) / (t * (t - 1))),
        n_units=t,
        n_rows=int(rows.sum()),
        method="confidence-sequence",
    )


def confidence_sequence_path(
    values: np.ndarray,
    sizes: np.ndarray | None = None,
    *,
    alpha: float = 0.05,
    planned: int | None = None,
    bound: float | None = None,
    min_units: int = MIN_UNITS,
) -> tuple[np.ndarray, np.ndarray]:
    """The interval `confidence_sequence` gives after each unit: (lo, hi), one entry per unit.

    `values` may also be 2-D, one independent sequence per row (the same `sizes` for
    all), to trace many sequences at once (bench/gate_calibration.py does).
    """
    sums, rows = _check(values, sizes, alpha, planned, bound)
    target = PLANNED_UNITS if planned is None else planned
    if bound is not None and np.all(rows == rows[0]):
        return _bernstein(sums / rows, bound, alpha, target)
    return _asymptotic(sums, rows, alpha, target, min_units)


def _bernstein(
    means: np.ndarray, bound: float, alpha: float, planned: int
) -> tuple[np.ndarray, np.ndarray]:
    """Running intersection of the empirical-Bernstein sequence for means in [-bound, bound].

    Values are mapped to [0, 1]; each bet lambda_i uses only the units before i and is
    tuned to be tightest at `planned` units.
    """
    x = (means + bound) / (2 * bound)
    i = np.arange(1, x.shape[-1] + 1)
    mu = (0.5 + np.cumsum(x, axis=-1)) / (i + 1)
    sigma2 = (0.25 + np.cumsum((x - mu) ** 2, axis=-1)) / (i + 1)
    mu_before = np.concatenate([np.full_like(x[..., :1], 0.5), mu[..., :-1]], axis=-1)
    sigma2_before = np.concatenate([np.full_like(x[..., :1], 0.25), sigma2[..., :-1]], axis=-1)
    log_term = math.log(2 / alpha)
    bets = np.minimum(np.sqrt(2 * log_term / (sigma2_before * planned)), _BET_CAP)
    penalty = (x - mu_before) ** 2 * (-np.log1p(-bets) - bets)  # v_i psi_E(lambda_i)
    weight = np.cumsum(bets, axis=-1)
    centre = np.cumsum(bets * x, axis=-1) / weight
    half = (log_term + np.cumsum(penalty, axis=-1)) / weight
    lo = np.maximum(np.maximum.accumulate(centre - half, axis=-1), 0.0)
    hi = np.minimum(np.minimum.accumulate(centre + half, axis=-1), 1.0)
    return 2 * bound * lo - bound, 2 * bound * hi - bound


def _asymptotic(
    sums: np.ndarray, rows: np.ndarray, alpha: float, planned: int, min_units: int
) -> tuple[np.ndarray, np.ndarray]:
    """The asymptotic normal-mixture interval after each unit, from the units so far.

    Not intersected with earlier looks: those rest on fewer units, where the plug-in
    variance is least reliable, and intersecting them raised the null error rate.
    """
    t = np.arange(1, sums.shape[-1] + 1, dtype=float)
    total, size = np.cumsum(sums, axis=-1), np.cumsum(rows)
    ratio = total / size
    # sum over each prefix of the squared linearised values S - ratio * m
    squares = (
        np.cumsum(sums**2, axis=-1)
        - 2 * ratio * np.cumsum(sums * rows, axis=-1)
        + ratio**2 * np.cumsum(rows**2)
    )
    sd = np.sqrt(np.maximum(squares, 0.0) / t) / (size / t)
    half = sd * _robbins(t, alpha, planned)
    half[..., : max(min_units, 2) - 1] = math.inf
    return ratio - half, ratio + half


def _robbins(t: np.ndarray, alpha: float, planned: int) -> np.ndarray:
    """Robbins' two-sided normal-mixture boundary for the mean of t unit-variance values.

    The mixing variance rho^2 makes it tightest at t = planned (Waudby-Smith et al. 2024).
    """
    log_term = -2 * math.log(alpha)
    rho2 = (log_term + math.log(log_term + 1)) / planned
    spread = t * rho2 + 1
    return np.sqrt(2 * spread / (t * t * rho2) * np.log(np.sqrt(spread) / alpha))


def _check(
    values: np.ndarray,
    sizes: np.ndarray | None,
    alpha: float,
    planned: int | None,
    bound: float | None,
) -> tuple[np.ndarray, np.ndarray]:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
    if planned is not None and planned < 1:
        raise ValueError(f"planned must be at least 1 unit, got {planned}")
    sums = np.asarray(values, dtype=float)
    if sums.ndim not in (1, 2) or sums.shape[-1] < 1:
        raise ValueError(f"values must hold one sum per unit (1-D), got shape {sums.shape}")
    rows = np.ones(sums.shape[-1]) if sizes is None else np.asarray(sizes, dtype=float)
    if rows.shape != sums.shape[-1:]:
        raise ValueError(f"sizes has {rows.size} entries for {sums.shape[-1]} units: one per unit")
    bad = np.flatnonzero(~np.isfinite(sums).all(axis=0) if sums.ndim == 2 else ~np.isfinite(sums))
    if bad.size:
        raise ValueError(f"values: unit {int(bad[0])} is not a finite number")
    bad = np.flatnonzero(~(rows >= 1) | (rows != np.round(rows)))
    if bad.size:
        raise ValueError(f"sizes: unit {int(bad[0])} has {rows[bad[0]]} rows (a count >= 1)")
    if bound is not None:
        if not bound > 0:
            raise ValueError(f"bound must be > 0, got {bound}")
        per_row = np.max(np.abs(sums), axis=0) if sums.ndim == 2 else np.abs(sums)
        over = np.flatnonzero(per_row / rows > bound * (1 + 1e-12))
        if over.size:
            u = int(over[0])
            raise ValueError(
                f"values: unit {u} differs by {per_row[u] / rows[u]} per row, "
                f"beyond the bound {bound}"
            )
    return sums, rows
