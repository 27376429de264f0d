"""Rank correlation between a judge's scores and human scores (Spearman, Kendall tau-b).

Estimates and p-values are scipy's. For the bootstrap, a resample is a count of how
often each distinct (judge, human) pair was drawn, and both coefficients are computed
from those counts for all resamples at once: Spearman as the count-weighted Pearson
correlation of average ranks, Kendall's tau-b from the count-weighted sum of pair
signs. Scores on a scale have few distinct pairs, so this is far cheaper than a scipy
call per resample; time and memory grow with the square of the number of distinct pairs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from chatjudge.stats.bootstrap import percentile_interval, resampled_counts
from chatjudge.stats.intervals import range_too_few


@dataclass(frozen=True, slots=True)
class Correlation:
    """Spearman's rho and Kendall's tau-b over `n` pairs, scipy's p-values, 95% bootstrap CIs."""

    spearman: float
    spearman_p: float
    spearman_ci95: tuple[float, float] | None
    kendall: float
    kendall_p: float
    kendall_ci95: tuple[float, float] | None
    n: int
    too_few: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "spearman": self.spearman,
            "spearman_p": self.spearman_p,
            "kendall": self.kendall,
            "kendall_p": self.kendall_p,
            "n": self.n,
        }
        out["spearman_ci95"] = list(self.spearman_ci95) if self.spearman_ci95 else None
        out["kendall_ci95"] = list(self.kendall_ci95) if self.kendall_ci95 else None
        if self.too_few is not None:
            out["too_few"] = self.too_few
        return out


def correlation(
    judge_scores: Sequence[float] | np.ndarray,
    human_scores: Sequence[float] | np.ndarray,
    *,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Correlation:
    """Rank correlations of paired scores; pairs where either side is NaN/None are dropped.

    The intervals are percentile bootstraps over pairs; resamples in which one side is
    constant (correlation undefined) are left out. With fewer than 30 pairs, fewer than 3
    distinct ones, or a coefficient of -1 or 1 (every resample has it: the bootstrap
    collapses), no bootstrap is valid: both intervals are None and `too_few` says why; a
    range of [-1, 1] would be valid but says nothing the value does not. Raises ValueError
    for different lengths, fewer than 3 complete pairs, or a side with a single distinct
    value.
    """
    judge = np.asarray(judge_scores, dtype=float)
    human = np.asarray(human_scores, dtype=float)
    if judge.ndim != 1 or human.ndim != 1:
        raise ValueError("scores must be 1-D sequences")
    if len(judge) != len(human):
        raise ValueError(f"{len(judge)} judge scores but {len(human)} human scores")
    complete = ~(np.isnan(judge) | np.isnan(human))
    pairs = np.column_stack([judge[complete], human[complete]])
    if len(pairs) < 3:
        raise ValueError(f"need at least 3 complete score pairs, got {len(pairs)}")
    for side, column in (("judge", pairs[:, 0]), ("human", pairs[:, 1])):
        if np.ptp(column) == 0:
            raise ValueError(f"{side} scores are constant ({column[0]:g}): no correlation")
    from scipy import stats  # imported here: scipy.stats costs over a second to load

    rho = stats.spearmanr(pairs[:, 0], pairs[:, 1])
    tau = stats.kendalltau(pairs[:, 0], pairs[:, 1])
    too_few = range_too_few(pairs, float(rho.statistic), (-1, 1), "pairs") or range_too_few(
        pairs, float(tau.statistic), (-1, 1), "pairs"
    )
    if too_few is not None:
        return Correlation(
            float(rho.statistic), float(rho.pvalue), None,
            float(tau.statistic), float(tau.pvalue), None, len(pairs), too_few,
        )  # fmt: skip
    distinct, chunks = resampled_counts(pairs, n_resamples, seed)
    signs = _pair_signs(distinct)
    boot_rho, boot_tau = [], []
    for counts in chunks:
        boot_rho.append(_weighted_spearman(distinct, counts))
        boot_tau.append(_weighted_kendall(distinct, counts, signs))
    return Correlation(
        spearman=float(rho.statistic),
        spearman_p=float(rho.pvalue),
        spearman_ci95=percentile_interval(np.concatenate(boot_rho), 0.95),
        kendall=float(tau.statistic),
        kendall_p=float(tau.pvalue),
        kendall_ci95=percentile_interval(np.concatenate(boot_tau), 0.95),
        n=len(pairs),
    )


def _weighted_spearman(distinct: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Spearman's rho per resample (a row of `counts` over distinct pairs); NaN if constant."""
    rx, ry = _average_ranks(distinct[:, 0], counts), _average_ranks(distinct[:, 1], counts)
    mean = (counts.sum(axis=1, keepdims=True) + 1) / 2
    dx, dy = rx - mean, ry - mean
    cov = (counts * dx * dy).sum(axis=1)
    var = (counts * dx * dx).sum(axis=1) * (counts * dy * dy).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(var > 0, cov / np.sqrt(var), np.nan)


def _average_ranks(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """(resamples, distinct pairs): the 1-based average rank of each pair's value."""
    per_level, code = _per_level(values, counts)
    before = np.cumsum(per_level, axis=1) - per_level
    return (before + (per_level + 1) / 2)[:, code]


def _pair_signs(distinct: np.ndarray) -> np.ndarray:
    """sign(x_i - x_j) * sign(y_i - y_j) for every two distinct pairs (float32: exact)."""
    x, y = distinct[:, 0], distinct[:, 1]
    return (np.sign(x[:, None] - x[None, :]) * np.sign(y[:, None] - y[None, :])).astype(np.float32)


def _weighted_kendall(distinct: np.ndarray, counts: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """Kendall's tau-b per resample: (concordant - discordant) / sqrt(untied x * untied y)."""
    # Sums of at most n items stay exact in float32 below 2**24 items.
    s = ((counts.astype(np.float32) @ signs).astype(float) * counts).sum(axis=1) / 2
    n = counts.sum(axis=1).astype(float)
    pairs = n * (n - 1) / 2
    untied = [
        pairs - (per_level * (per_level - 1) / 2).sum(axis=1)
        for per_level, _ in (_per_level(distinct[:, 0], counts), _per_level(distinct[:, 1], counts))
    ]
    denominator = untied[0] * untied[1]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, s / np.sqrt(denominator), np.nan)


def _per_level(values: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Counts per distinct value (resamples x levels, ascending) and each pair's level."""
    levels, code = np.unique(values, return_inverse=True)
    order = np.argsort(code, kind="stable")
    starts = np.searchsorted(code[order], np.arange(len(levels)))
    return np.add.reduceat(counts[:, order], starts, axis=1).astype(float), code
