"""The noise split of a paired difference: the judge's share of its variance, and what
more samples per row or more rows would buy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from chatjudge.stats.noise import noise_split

Z95 = stats.norm.ppf(0.975)


def _rows(means: list[float], spread: float, k: int) -> list[np.ndarray]:
    pattern = np.array([spread, -spread] * (k // 2))
    return [m + pattern for m in means]


def test_noise_split_recovers_known_components() -> None:
    # 4 samples per row at ±a around the row mean: within variance 4a^2/3, a mean of 4
    # carries a^2/3 of it. Row means 0, 1, 2, 3: sample variance 5/3.
    a = 0.5
    cand = _rows([0.0, 1.0, 2.0, 3.0], a, 4)
    split = noise_split(cand, None)
    assert split is not None
    judge, total = a**2 / 3, 5 / 3
    assert split.judge_share == pytest.approx(judge / total)
    assert split.width == pytest.approx(2 * Z95 * math.sqrt(total / 4))
    assert split.width_double_samples == pytest.approx(2 * Z95 * math.sqrt((total - judge / 2) / 4))
    assert split.width_double_rows == pytest.approx(split.width / math.sqrt(2))
    assert split.width_floor == pytest.approx(2 * Z95 * math.sqrt((total - judge) / 4))
    assert split.samples_per_row == 4


def test_noise_split_adds_both_sides_and_truncates_at_zero() -> None:
    cand = _rows([1.0, 2.0, 3.0], 0.3, 2)
    base = _rows([0.0, 0.0, 0.0], 0.6, 4)
    split = noise_split(cand, base)
    assert split is not None
    # within: candidate 2*0.09/1 = 0.18 per row / 2 samples; baseline 4*0.36/3 = 0.48 / 4
    judge = 0.18 / 2 + 0.48 / 4
    assert split.judge_share == pytest.approx(judge / 1.0)
    assert split.samples_per_row == pytest.approx(3.0)
    # identical row means: all the variance is the judge's, the floor is 0
    flat = noise_split(_rows([1.0, 1.0, 1.0], 0.5, 2), None)
    assert flat is not None
    assert flat.judge_share == 1.0
    assert flat.width_floor == 0.0


def test_noise_split_needs_inner_measurements() -> None:
    singles = [np.array([v]) for v in (0.0, 1.0, 1.0)]
    assert noise_split(singles, singles) is None
    with pytest.raises(ValueError, match="pair them"):
        noise_split(singles, singles[:2])
    with pytest.raises(ValueError, match="candidate row 1 has no measurement"):
        noise_split([np.ones(2), np.array([]), np.ones(2)], None)
    with pytest.raises(ValueError, match="baseline row 1: measurement 0 is not a finite number"):
        noise_split([np.ones(2), np.ones(2)], [np.ones(2), np.array([np.nan, 1.0])])
