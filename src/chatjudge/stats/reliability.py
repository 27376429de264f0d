"""Krippendorff's alpha: agreement among several raters (humans or judges) with gaps.

Computed by the maintained `krippendorff` package. Alpha only uses values that
share an item, so which row a rating sits in does not matter, only its column.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import krippendorff
import numpy as np

from chatjudge.stats.bootstrap import Estimate, percentile_interval, resample_statistic
from chatjudge.stats.intervals import range_too_few

Level = Literal["nominal", "ordinal", "interval", "ratio"]


def krippendorff_alpha(
    ratings: Sequence[Sequence[Any]] | np.ndarray, level: Level = "ordinal"
) -> float:
    """Alpha for a raters x items matrix; None or NaN marks a missing rating.

    Ordinal, interval and ratio levels need numbers; nominal accepts any labels.
    Raises ValueError when alpha is undefined (a single value overall, or no item
    rated twice).
    """
    matrix = _matrix(ratings, level)
    return float(krippendorff.alpha(reliability_data=matrix, level_of_measurement=level))


def krippendorff_alpha_ci(
    ratings: Sequence[Sequence[Any]] | np.ndarray,
    level: Level = "ordinal",
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of alpha over items (columns); None for fewer than 2 items.

    Resamples in which alpha is undefined (a single value drawn) are left out.
    """
    matrix = _matrix(ratings, level)
    if matrix.shape[1] < 2:
        return None
    domain = np.unique(matrix[~np.isnan(matrix)])

    def alpha(items: np.ndarray) -> tuple[float]:
        try:
            value = krippendorff.alpha(
                reliability_data=items.T, value_domain=domain, level_of_measurement=level
            )
        except ValueError:  # undefined in this resample
            return (np.nan,)
        return (float(value),)

    stats = resample_statistic(matrix.T, alpha, n_resamples, seed)[:, 0]
    return percentile_interval(stats, confidence)


def krippendorff_alpha_estimate(
    ratings: Sequence[Sequence[Any]] | np.ndarray, level: Level = "ordinal"
) -> Estimate:
    """Alpha over `n` items with its bootstrap interval where one can be valid: with fewer
    than 30 items, fewer than 3 distinct items (rows of ratings), or alpha at 1 (perfect
    agreement in every resample too), `too_few` says why and there is no interval.
    Raises ValueError where alpha is undefined, as `krippendorff_alpha`."""
    value = krippendorff_alpha(ratings, level)
    items = _matrix(ratings, level).T
    too_few = range_too_few(items, value, (-1, 1), "items")
    ci = None if too_few is not None else krippendorff_alpha_ci(ratings, level)
    return Estimate(value, ci, len(items), too_few)


def _matrix(ratings: Sequence[Sequence[Any]] | np.ndarray, level: Level) -> np.ndarray:
    """Ratings as floats with NaN for missing; nominal labels coded 0, 1, ... ."""
    table = np.asarray(ratings, dtype=object)
    if table.ndim != 2:
        raise ValueError("ratings must be a raters x items matrix")
    missing = np.array([_is_missing(v) for v in table.ravel()], dtype=bool).reshape(table.shape)
    given = table[~missing].tolist()
    if level == "nominal":
        code = {label: float(i) for i, label in enumerate(sorted(set(given), key=str))}
        values = [code[label] for label in given]
    else:
        bad = [v for v in given if not _is_number(v)]
        if bad:
            raise ValueError(
                f"{level} alpha needs numeric ratings, got {bad[0]!r}; "
                "mark missing ones with None or NaN"
            )
        values = [float(v) for v in given]
    if len(set(values)) < 2:
        raise ValueError("alpha is undefined: fewer than two distinct values were given")
    matrix = np.full(table.shape, np.nan)
    matrix[~missing] = values
    return matrix


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float | np.floating) and bool(np.isnan(value)))


def _is_number(value: Any) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True
