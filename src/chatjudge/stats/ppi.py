"""Human-calibrated means: prediction-powered inference with power tuning (PPI++).

A judge scored every row; humans labelled a few of them, a random sample. The mean of
the human labels alone is unbiased but wide; the judge's mean is narrow but biased.
PPI++ (Angelopoulos, Duchi and Zrnic 2024, "PPI++: efficient prediction-powered
inference") estimates what the humans would say over all judged rows as

    theta = mean_labelled(human - lam * judge) + lam * mean_unlabelled(judge)

which is unbiased for any lam and any judge; lam is tuned to make it as narrow as the
data allow, lam = Cov(human, judge) / ((1 + n / N_u) Var(judge)) (n labelled rows, N_u
unlabelled ones), clipped to [0, 1] as `ppi-python` does, so that a judge unrelated to
the humans costs almost nothing (lam near 0: the humans' own interval) where plain PPI
(lam = 1) could be wider than the humans alone. The interval is the normal one with the
two independent parts' variances added. `effective_labels` is how many human labels
alone would give an interval that narrow.

On a small labelled sample (its rows' `human - lam * judge` too few or too alike for a
normal interval: `chatjudge.stats.intervals.small_why`) the interval is the hull of the
normal one and the humans' own interval of the metric's kind (Clopper-Pearson for a share,
the betting interval for a known range), which is valid for the same mean; with no known
range there is none (`too_few`). The judge-only and human-only figures are guarded alike.

Our own code rather than `ppi-python` 0.2.3: the mean is a few lines, and that package
pulls in numba, llvmlite, scikit-learn, statsmodels and gdown for it. Tests check the
estimate against a hand computation.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from chatjudge.stats.bootstrap import Estimate
from chatjudge.stats.intervals import TOO_FEW, Range, guard, small_why


@dataclass(frozen=True, slots=True)
class Calibrated:
    """A PPI++ estimate of the human mean over all judged rows, beside the judge's and the
    humans' own figures (normal 95% intervals)."""

    value: float
    ci95: tuple[float, float] | None
    n_labels: int  # labelled rows that the judge also judged
    effective_labels: float  # human labels alone needed for an interval this narrow
    lam: float
    judge_only: Estimate
    human_only: Estimate
    too_few: str | None = None  # why `ci95` is None: a small labelled sample, no known range

    def to_dict(self) -> dict[str, Any]:
        """`calibrated.<metric>` of agreement.json (`too_few` only when set)."""
        out: dict[str, Any] = {
            "value": self.value,
            "ci95": list(self.ci95) if self.ci95 is not None else None,
            "n_labels": self.n_labels,
            "effective_labels": self.effective_labels,
            "lam": self.lam,
            "judge_only": self.judge_only.to_dict(),
            "human_only": self.human_only.to_dict(),
        }
        if self.too_few is not None:
            out["too_few"] = self.too_few
        return out


def ppi_mean(
    judge_all: np.ndarray,
    judge_labelled: np.ndarray,
    human_labelled: np.ndarray,
    *,
    level: float = 0.95,
    lam: float | None = None,
    known: Range | None = None,
) -> Calibrated:
    """The PPI++ estimate of the mean human value over the judged rows.

    `judge_all` holds the judge's value on every judged row, the labelled ones included;
    `judge_labelled` and `human_labelled` the judge's and the human value (several
    raters: the mean of their ratings) on each labelled row, in the same order. `lam`
    fixes the power-tuning parameter instead of estimating it (1: plain PPI); `known`:
    what one row's value can be, for the interval on a small labelled sample (None: the
    normal intervals alone, for a caller that guards them itself).
    Raises ValueError for fewer than two labelled rows, mismatched lengths, more
    labelled rows than judged ones, or values that are not finite numbers.
    """
    f_all = _finite(judge_all, "judge_all")
    f_lab = _finite(judge_labelled, "judge_labelled")
    y = _finite(human_labelled, "human_labelled")
    if len(f_lab) != len(y):
        raise ValueError(f"{len(f_lab)} judge values but {len(y)} human values on labelled rows")
    n, total = len(y), len(f_all)
    if n < 2:
        raise ValueError(f"PPI needs at least two labelled rows, got {n}")
    if total < n:
        raise ValueError(f"{n} labelled rows but only {total} judged: judge_all must hold all")
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")
    z = NormalDist().inv_cdf((1 + level) / 2)
    m = total - n  # unlabelled rows
    f_unl_mean = (f_all.sum() - f_lab.sum()) / m if m else 0.0
    f_unl_var = 0.0
    if m >= 2:
        f_unl_var = max((np.square(f_all).sum() - np.square(f_lab).sum() - m * f_unl_mean**2), 0.0)
        f_unl_var /= m - 1
    if lam is None:
        lam = _tuned_lambda(y, f_lab, f_all, n, m)
    if not m:
        lam = 0.0  # every judged row is labelled: the humans' mean is all there is
    rectified = y - lam * f_lab
    value = float(rectified.mean() + lam * f_unl_mean)
    variance = rectified.var(ddof=1) / n + (lam**2 * f_unl_var / m if m else 0.0)
    se = float(np.sqrt(variance))
    human_var = float(y.var(ddof=1))
    effective = float(human_var / variance) if variance > 0 else float(n)
    human_only, judge_only = _normal_estimate(y, z), _normal_estimate(f_all, z)
    ci: tuple[float, float] | None = (value - z * se, value + z * se)
    too_few = None
    why = small_why(rectified) if known is not None else None
    if known is not None:
        human_only = guard(human_only, y, known, level=level)
        judge_only = guard(judge_only, f_all, known, level=level)
    if why is not None and ci is not None:
        if human_only.ci95 is None:
            ci, too_few = None, f"{TOO_FEW}: {why} labelled, and no known range"
        else:
            ci = (min(ci[0], human_only.ci95[0]), max(ci[1], human_only.ci95[1]))
    return Calibrated(
        value=value,
        ci95=ci,
        n_labels=n,
        effective_labels=effective,
        lam=float(lam),
        judge_only=judge_only,
        human_only=human_only,
        too_few=too_few,
    )


def _tuned_lambda(y: np.ndarray, f_lab: np.ndarray, f_all: np.ndarray, n: int, m: int) -> float:
    """PPI++'s variance-minimising lam for the mean, clipped to [0, 1]."""
    var_f = float(f_all.var(ddof=1)) if len(f_all) >= 2 else 0.0
    if m == 0 or var_f <= 0:
        return 0.0
    cov = float(np.cov(y, f_lab, ddof=1)[0, 1])
    return float(np.clip(cov / ((1 + n / m) * var_f), 0.0, 1.0))


def _normal_estimate(values: np.ndarray, z: float) -> Estimate:
    mean = float(values.mean())
    if len(values) < 2:
        return Estimate(mean, None, len(values))
    half = z * float(values.std(ddof=1)) / np.sqrt(len(values))
    return Estimate(mean, (float(mean - half), float(mean + half)), len(values))


def _finite(values: Any, name: str) -> np.ndarray:
    array = np.asarray(values, dtype=float).reshape(-1)
    if not np.isfinite(array).all():
        raise ValueError(f"{name} holds values that are not finite numbers")
    return array
