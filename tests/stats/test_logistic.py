"""The logistic sigmoid written in place of scipy's, bit for bit scipy's."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from scipy import special

from chatjudge.stats import logistic
from chatjudge.stats.logistic import expit


@pytest.mark.parametrize("scale", [1.0, 30.0, 800.0])
@pytest.mark.parametrize("size", [20_000, 300_000])  # computed here, and handed to scipy
def test_expit_is_scipys_bit_for_bit(scale: float, size: int) -> None:
    x = np.random.default_rng(int(scale)).normal(0, scale, size).reshape(-1, 100)
    with np.errstate(over="ignore"):
        assert np.array_equal(expit(x), special.expit(x))


def test_expit_at_the_edges() -> None:
    top = logistic._EXP_MAX  # exp(-x) overflows just past it
    edges = np.array(
        [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 37.0, -37.0, -745.2, 709.9]
        + [-top, np.nextafter(-top, -np.inf), -1000.0, sys.float_info.max]
    )
    ours = expit(edges)
    assert np.array_equal(ours, special.expit(edges), equal_nan=True)
    assert ours[-4] > 0 and ours[-3] == 0.0  # the last finite exp, then 1 / (1 + inf)
    assert float(expit(0.3)) == special.expit(0.3) and expit(np.zeros((2, 3))).shape == (2, 3)


def test_expit_of_a_strided_view_leaves_the_view_alone() -> None:
    """It computes in an array of its own, in place: never in the caller's."""
    x = np.random.default_rng(3).normal(0, 30, (200, 100))
    view = x.T[::2]
    before = view.copy()
    assert np.array_equal(expit(view), special.expit(view)) and np.array_equal(view, before)
