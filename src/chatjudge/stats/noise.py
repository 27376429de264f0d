"""How much of a paired difference's interval the judge's noise costs, and what more calls buy.

A gate's rows each hold several inner measurements (samples x judges); the paired
difference (`chatjudge.stats.paired`) averages them away, and this split of its variance
into the choice of rows and the judge's noise within rows says whether more samples per
row or more rows would narrow the interval more, at equal cost.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from chatjudge.stats.paired import as_column, check_level

_NORMAL = NormalDist()


@dataclass(frozen=True, slots=True)
class NoiseSplit:
    """How much of Var(Δ) is judge noise (within rows), and what more calls would buy.

    Widths are of the normal-approximation interval at the split's level; the
    projections keep the total number of calls doubled either way, so they compare
    spending on samples per row with spending on rows at equal cost.
    """

    judge_share: float
    width: float
    width_double_samples: float
    width_double_rows: float
    width_floor: float
    samples_per_row: float


def noise_split(
    candidate: Sequence[np.ndarray],
    baseline: Sequence[np.ndarray] | None,
    level: float = 0.95,
) -> NoiseSplit | None:
    """Split Var(Δ) into the choice of rows and the judge's noise within rows.

    Each list holds one array per row: that row's inner measurements (one per sample x
    judge, orders already reconciled); `baseline` None means a fixed baseline (a
    pairwise run's 0.5). None when every row has a single measurement (nothing to
    split). Variance components by one-way ANOVA (method of moments) on each side:
    the within-row variance is the pooled variance around row means, the row
    component is the variance of the row differences less the within part's
    expected share of it, truncated at 0.
    """
    check_level(level)
    sides = [candidate] if baseline is None else [candidate, baseline]
    if baseline is not None and len(baseline) != len(candidate):
        raise ValueError(
            f"candidate has {len(candidate)} rows and baseline {len(baseline)}: pair them"
        )
    n = len(candidate)
    if n < 2:
        raise ValueError(f"a noise split needs at least 2 rows, got {n}")
    names = ["candidate", "baseline"]
    rows = [
        [as_column(r, f"{name} row {i}", "measurement") for i, r in enumerate(side)]
        for name, side in zip(names, sides, strict=False)
    ]
    for name, side in zip(names, rows, strict=False):
        for i, r in enumerate(side):
            if r.size == 0:
                raise ValueError(f"{name} row {i} has no measurement")
    if all(r.size == 1 for side in rows for r in side):
        return None
    row_diff = np.array([r.mean() for r in rows[0]])
    if len(rows) == 2:
        row_diff = row_diff - np.array([r.mean() for r in rows[1]])
    judge = 0.0  # expected within-row part of one row difference's variance
    for side in rows:
        sizes = np.array([r.size for r in side], dtype=float)
        dof = float(np.sum(sizes - 1))
        within = sum(float(np.sum((r - r.mean()) ** 2)) for r in side) / dof if dof else 0.0
        judge += within * float(np.mean(1 / sizes))
    rows_part = max(0.0, float(np.var(row_diff, ddof=1)) - judge)
    total = rows_part + judge
    z = float(_NORMAL.inv_cdf(1 - (1 - level) / 2))

    def width(variance: float, n_rows: float) -> float:
        return 2 * z * math.sqrt(variance / n_rows)

    return NoiseSplit(
        judge_share=judge / total if total else 0.0,
        width=width(total, n),
        width_double_samples=width(rows_part + judge / 2, n),
        width_double_rows=width(total, 2 * n),
        width_floor=width(rows_part, n),
        samples_per_row=float(np.mean([r.size for side in rows for r in side])),
    )
