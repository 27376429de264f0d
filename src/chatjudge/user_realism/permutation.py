"""The claims: exact within-goal permutation tests and Holm's correction across them.

Under the null hypothesis that the simulator writes like the real users, a goal's K + 1
conversations are exchangeable: which of them is the real one is a uniform draw. So the
statistic recomputed with a uniformly drawn "real" conversation in each goal has the
observed statistic's distribution, and p = (1 + #{T* >= T}) / (1 + B) over B draws is
exact for any number of goals, any K (even varying by goal) and any distribution of the
measure. When the labellings number no more than B they are all enumerated instead and p
is their exact share with T* >= T. Both tests are two-sided (|T|).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

import numpy as np

RESAMPLES = 2000
_CHUNK = 1 << 20  # random labels drawn at a time (goals x draws)
# T* equal to T up to rounding counts as >= T: sums of the same values in another order.
_TIES = 1e-9


def paired_rows(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A goals x conversations matrix (real first, NaN where missing) cut to the goals with
    a real value and at least one simulated one, each row's values moved to its front (the
    real first); returns them, each row's count of values and which goals were kept."""
    present = ~np.isnan(values)
    keep = present[:, 0] & present[:, 1:].any(axis=1)
    rows, present = values[keep], present[keep]
    order = np.argsort(~present, axis=1, kind="stable")
    return np.take_along_axis(rows, order, axis=1), present.sum(axis=1), keep


def differences(rows: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Per goal, the mean of its simulated values minus its real value."""
    total = np.nansum(rows, axis=1)
    return (total - rows[:, 0]) / (counts - 1) - rows[:, 0]


def within_goal_p(rows: np.ndarray, counts: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """The exact permutation p-values of the mean over goals of `differences`, relabelling
    which conversation of each goal is real: `rows` is goals x conversations x measures,
    measures whose goals and counts (from `paired_rows`) are the same, so that one drawn
    labelling serves them all.

    With label j, a goal's difference is (S - n x_j) / (n - 1) for its n values summing to
    S, so T* = A - mean(w x_j) with w = n / (n - 1): one gathered value a goal and draw."""
    g, width, _ = rows.shape
    weights = counts / (counts - 1) / g
    base = (np.nansum(rows, axis=1) / (counts - 1)[:, None]).sum(axis=0) / g
    flat = rows.reshape(g * width, -1)
    starts = np.arange(g) * width  # each goal's first row in `flat`
    observed = np.abs(base - weights @ rows[:, 0])
    at_least = observed - _TIES * (np.nanmax(np.abs(rows), axis=(0, 1)) + 1.0)
    total = math.prod(int(c) for c in counts)
    hits = np.zeros(len(base), dtype=np.int64)
    if total <= resamples:
        for labels in _all_labellings(counts):
            hits += _counts(base - _weighted(flat, starts + labels, weights), at_least)
        return np.asarray(hits / total)
    rng = np.random.default_rng(seed)
    same = bool(np.all(counts == counts[0]))
    for size in _chunks(resamples, g):
        if same:  # the usual case: every goal has its K + 1 conversations
            labels = rng.integers(0, counts[0], size=(size, g), dtype=np.intp)
        else:
            labels = (rng.random((size, g)) * counts).astype(np.intp)
        hits += _counts(base - _weighted(flat, starts + labels, weights), at_least)
    return np.asarray((1 + hits) / (1 + resamples))


def _weighted(flat: np.ndarray, index: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per draw and measure, the weighted sum over goals of the drawn values."""
    return np.einsum("dgm,g->dm", flat[index], weights)


def _counts(statistics: np.ndarray, at_least: np.ndarray) -> np.ndarray:
    return np.count_nonzero(np.abs(statistics) >= at_least, axis=0)


def sign_flip_p(values: np.ndarray, resamples: int, seed: int) -> float:
    """The exact p-value of |sum(values)| when each goal's value may have either sign (a
    goal's two labellings: which of its pair is real); all 2^G sign vectors when they
    number no more than `resamples`."""
    g = len(values)
    observed = abs(float(values.sum()))
    scale = _TIES * (float(np.abs(values).sum()) + 1.0)
    hits = 0
    if 2**g <= resamples:
        for signs in _all_labellings(np.full(g, 2)):
            hits += int(np.count_nonzero(np.abs((1 - 2 * signs) @ values) >= observed - scale))
        return hits / 2**g
    rng = np.random.default_rng(seed)
    for size in _chunks(resamples, g):
        signs = rng.integers(0, 2, size=(size, g), dtype=np.int8) * 2 - 1
        hits += int(np.count_nonzero(np.abs(signs @ values) >= observed - scale))
    return (1 + hits) / (1 + resamples)


def holm(p: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values: a hypothesis is rejected at family-wise level
    alpha when its adjusted p is <= alpha (valid under any dependence between the tests)."""
    m = len(p)
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(sorted(range(m), key=lambda i: p[i])):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adjusted[i] = running
    return adjusted


def _chunks(resamples: int, goals: int) -> Iterator[int]:
    per = max(1, _CHUNK // max(goals, 1))
    for start in range(0, resamples, per):
        yield min(per, resamples - start)


def _all_labellings(counts: np.ndarray) -> Iterator[np.ndarray]:
    """Every choice of one index below counts[i] for each i, as (chunk, goals) arrays."""
    total = math.prod(int(c) for c in counts)
    radix = np.concatenate([[1], np.cumprod(counts[:-1])]).astype(np.int64)
    for start in range(0, total, _CHUNK):
        index = np.arange(start, min(start + _CHUNK, total), dtype=np.int64)[:, None]
        yield ((index // radix) % counts).astype(np.intp)
