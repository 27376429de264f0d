"""Percentile bootstrap over items, seeded, vectorised for means over many items.

Items (rows) are the resampling unit: everything known about one item is drawn
together, so several metrics resampled in one pass share the same resamples.
`bootstrap_metrics` also gives the studentized (bootstrap-t) interval of a mean, from
the same resamples: for skewed item values (pass^k at a large k) the percentile
interval leans to the long tail's far side and misses the truth on the other; for a mean
in [0, 1] away from its ends, also on the logit scale, where its skew is smaller.

Means are computed from resampled column sums. When items take few distinct
values (choices, 0/1 and 1-3 scores: the usual case), resampling n items is the
same as a multinomial draw of how often each distinct row appears, which costs
O(distinct rows) per resample instead of O(n): 2,000 resamples of 100,000 items
take a fraction of a second. Otherwise item indices are drawn in chunks that
bound memory. Both are exact item bootstraps and deterministic for a seed; which
one runs depends only on the data, so an interval depends on the seed and on the
columns resampled together.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

# Resampled indices (or counts) drawn at once: 64 KB of int64. Any chunk size draws the same
# numbers (the generator's state carries over) for the same CPU; a small chunk's memory is
# reused by the next, where 32 MB ones (and as much again of values taken) added to a run's peak.
_CHUNK_CELLS = 1 << 13
# Rounding leaves a resample of equal values an error of about 1e-10 of their range (the
# variance is a difference of sums of squares); one that differs has far more.
_NO_SPREAD = 1e-9

Method = Literal["percentile", "studentized", "logit-studentized"]


@dataclass(frozen=True, slots=True)
class Estimate:
    """A metric's value over the items where it is defined, its 95% interval and that count.

    `value` is None when no item counts; `ci95` is None when fewer than two do, and
    `too_few` then says why where items do count (`chatjudge.stats.intervals`).
    """

    value: float | None
    ci95: tuple[float, float] | None
    n: int
    too_few: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The `{"value", "ci95", "n"}` object of summary.json (with `too_few` when set)."""
        ci = list(self.ci95) if self.ci95 is not None else None
        out: dict[str, Any] = {"value": self.value, "ci95": ci, "n": self.n}
        if self.too_few is not None:
            out["too_few"] = self.too_few
        return out


def bootstrap_ci(
    values: Sequence[Any] | np.ndarray,
    statistic: Callable[[np.ndarray], float] = np.nanmean,
    *,
    n_resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of `statistic` over items; None for fewer than 2 items.

    `values` holds one entry per item, or one row per item (shape (n, ...)) when an
    item carries several numbers that must stay together. The default statistic is
    the mean skipping NaN (items that do not count), computed without a Python loop;
    any other statistic is called once per resample with the resampled rows.
    Resamples where the statistic is NaN are left out of the percentiles.
    """
    data = np.asarray(values)
    if data.ndim == 0:
        raise ValueError("values must be a sequence with one entry per item")
    if statistic is np.nanmean or (statistic is np.mean and not _has_nan(data)):
        if data.ndim != 1:
            raise ValueError("the mean statistic needs one value per item (a 1-D sequence)")
        column = np.asarray(data, dtype=float)
        if np.count_nonzero(~np.isnan(column)) < 2:
            return None
        stats = _nanmeans(column[:, None], n_resamples, seed)[:, 0]
    else:
        if len(data) < 2:
            return None
        stats = resample_statistic(data, lambda rows: (statistic(rows),), n_resamples, seed)[:, 0]
    return percentile_interval(stats, level)


def bootstrap_metrics(
    columns: Mapping[str, Sequence[float] | np.ndarray],
    *,
    n_resamples: int = 2000,
    seed: int = 0,
    method: Method | Mapping[str, Method] = "percentile",
) -> dict[str, Estimate]:
    """Every metric's mean and 95% interval from one shared item resampling.

    Each column has one value per item (all the same length); a metric is the mean
    of its column skipping NaN, so an item that does not count for a metric (a
    failed call, no flipped order) is NaN there and still counts for the others.
    Transform scores before passing them (`itr` is the mean of `(score - 2.5) * 200`).

    `method`: the percentile interval, or the studentized one (`studentized_interval`),
    second-order accurate where item values are skewed, of the mean or of its logit (values
    in [0, 1]); all from the same resamples, and one per column when a mapping by name.
    """
    names = list(columns)
    if not names:
        return {}
    arrays = [np.asarray(columns[name], dtype=float) for name in names]
    if any(a.ndim != 1 for a in arrays):
        raise ValueError("every column must be a 1-D sequence with one value per item")
    if len({len(a) for a in arrays}) > 1:
        lengths = {name: len(a) for name, a in zip(names, arrays, strict=True)}
        raise ValueError(f"columns differ in length: {lengths}")
    methods = [method if isinstance(method, str) else method[name] for name in names]
    matrix = np.column_stack(arrays)
    counted = ~np.isnan(matrix)
    n = counted.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where(counted, matrix, 0.0).sum(axis=0) / n
    stats, errors = (None, None)
    if len(matrix) >= 2:
        errors_needed = any(m != "percentile" for m in methods)
        stats, errors = _resampled_means(matrix, n_resamples, seed, errors_needed)
    result = {}
    for j, name in enumerate(names):
        ci = None
        if stats is not None and n[j] >= 2:
            if errors is None or methods[j] == "percentile":
                ci = percentile_interval(stats[:, j], 0.95)
            else:
                logit = methods[j] == "logit-studentized"
                ci = studentized_interval(matrix[:, j], stats[:, j], errors[:, j], 0.95, logit)
        value = float(values[j]) if n[j] else None
        result[name] = Estimate(value=value, ci95=ci, n=int(n[j]))
    return result


def bootstrap_ratios(
    parts: Mapping[str, tuple[Sequence[float] | np.ndarray, Sequence[float] | np.ndarray]],
    *,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict[str, Estimate]:
    """Ratio estimators (micro figures: matched calls over calls made, summed over items)
    with 95% intervals from one shared item resampling: each resample's ratio is its
    numerators' sum over its denominators' sum, so an item weighs by its denominator.

    `parts[name]` holds one numerator and one denominator per item; an item whose
    numerator is NaN does not count. `n` counts the items with a denominator other than
    0 (the others add nothing to either sum); `value` is None when the denominators sum
    to 0.
    """
    names = list(parts)
    if not names:
        return {}
    columns = []
    for name in names:
        top, bottom = (np.asarray(p, dtype=float) for p in parts[name])
        counted = ~np.isnan(top)
        columns += [np.where(counted, top, 0.0), np.where(counted, bottom, 0.0)]
    matrix = np.column_stack(columns)
    totals = matrix.sum(axis=0)
    sums = resampled_sums(matrix, n_resamples, seed) if len(matrix) >= 2 else None
    result = {}
    for k, name in enumerate(names):
        n = int(np.count_nonzero(matrix[:, 2 * k + 1]))
        value = float(totals[2 * k] / totals[2 * k + 1]) if totals[2 * k + 1] else None
        ci = None
        if sums is not None and n >= 2:
            with np.errstate(invalid="ignore", divide="ignore"):
                ci = percentile_interval(sums[:, 2 * k] / sums[:, 2 * k + 1], 0.95)
        result[name] = Estimate(value=value, ci95=ci, n=n)
    return result


def percentile_interval(stats: np.ndarray, level: float) -> tuple[float, float] | None:
    """The central `level` percentile interval of resampled statistics, NaN left out."""
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")
    finite = stats[~np.isnan(stats)]
    if finite.size == 0:
        return None
    tail = (1 - level) / 2 * 100
    ordered = np.sort(finite)
    return _percentile(ordered, tail), _percentile(ordered, 100 - tail)


def studentized_interval(
    values: np.ndarray, means: np.ndarray, errors: np.ndarray, level: float, logit: bool = False
) -> tuple[float, float] | None:
    """The bootstrap-t interval of the mean of `values` (NaN skipped), from resampled means
    and their standard errors: the mean minus the percentiles of t = (resampled mean -
    mean) / its error, times the values' own error (Efron and Tibshirani, "An
    Introduction to the Bootstrap", 1993, ch. 12). It corrects the skewness that the
    percentile interval carries over from the values, and is cut to their range, where a
    percentile interval always lies.

    A resample whose values all agree has no error and no t: it is left out, as a NaN
    mean is. It is rare unless a few items differ from the rest (one resample in 3,500
    when 8 of 200 do), a sample no bootstrap reads well: guard it (pass^k takes the
    betting interval there), as a t of +-infinity would stretch the interval to the
    values' range.

    `logit` (values in [0, 1]): t and the interval of log(m / (1 - m)), its error by the delta
    method, error / (m (1 - m)); a resample whose mean is 0 or 1 has no t. The logit of a mean
    near an end is less skewed than the mean, and the interval's side toward the end shorter."""
    counted = values[~np.isnan(values)]
    mean = float(counted.mean())
    error = float(counted.std(ddof=1)) / np.sqrt(counted.size)
    if error == 0:  # every value alike: so is every resample
        return mean, mean
    with np.errstate(invalid="ignore", divide="ignore"):
        spread_out = errors > _NO_SPREAD * (counted.max() - counted.min())
        if logit:
            t = (_logit(means) - _logit(mean)) * means * (1 - means) / errors
            spread_out &= np.isfinite(t)
        else:
            t = (means - mean) / errors
        t = np.where(spread_out, t, np.nan)
    spread = percentile_interval(t, level)
    if spread is None:
        return None
    if logit:
        centre, scale = _logit(mean), error / (mean * (1 - mean))
        lo, hi = _expit(centre - spread[1] * scale), _expit(centre - spread[0] * scale)
    else:
        lo, hi = mean - spread[1] * error, mean - spread[0] * error
    return float(max(lo, counted.min())), float(min(hi, counted.max()))


def _logit(m: Any) -> Any:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(m) - np.log1p(-m)


def _expit(x: float) -> float:
    return float(1 / (1 + np.exp(-x)))


def _percentile(ordered: np.ndarray, q: float) -> float:
    """`np.percentile(ordered, q)` (its default, linear method), bit for bit, of sorted
    values: numpy's own loads `numpy.ma` (start-up CPU and memory) to check for masks."""
    position = (len(ordered) - 1) * (q / 100)
    below = int(position)  # position >= 0: the floor
    if below >= len(ordered) - 1:
        return float(ordered[-1])
    low, high = float(ordered[below]), float(ordered[below + 1])
    weight = position - below
    # numpy's lerp: from the nearer end, so that a weight of 1 gives `high` exactly.
    return high - (high - low) * (1 - weight) if weight >= 0.5 else low + (high - low) * weight


def resampled_sums(rows: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """Column sums of `rows` (n items x k numbers) in each of `n_resamples` item resamples.

    Returns an (n_resamples, k) array. Ratios of these sums give means, shares and
    any statistic built from them (Cohen's kappa from label indicators).
    """
    _check_resamples(n_resamples)
    n = len(rows)
    rng = np.random.default_rng(seed)
    distinct, frequency = distinct_rows(rows)
    sums = np.empty((n_resamples, rows.shape[1]))
    if len(distinct) * 8 <= n:
        start = 0
        for counts in _multinomial_chunks(rng, frequency, n_resamples):
            sums[start : start + len(counts)] = counts @ distinct
            start += len(counts)
        return sums
    for start, stop in _chunks(n_resamples, n):
        index = rng.integers(0, n, size=(stop - start, n))
        for j in range(rows.shape[1]):
            sums[start:stop, j] = np.take(rows[:, j], index).sum(axis=1)
    return sums


def distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`np.unique(rows, axis=0, return_counts=True)`, the same rows in the same order: by a
    sort of the columns as keys, faster than numpy's sort of whole rows (which is a large
    summary's slowest step). Rows with NaN or -0.0, whose order or representative numpy
    decides its own way, are left to numpy."""
    if len(rows) < 2 or np.isnan(rows).any() or (np.signbit(rows) & (rows == 0)).any():
        return np.unique(rows, axis=0, return_counts=True)
    ordered = rows[np.lexsort(rows.T[::-1])]  # the first column the first key, as numpy's
    starts = np.flatnonzero(np.r_[True, (ordered[1:] != ordered[:-1]).any(axis=1)])
    return ordered[starts], np.diff(np.r_[starts, len(ordered)])


def resampled_counts(
    rows: np.ndarray, n_resamples: int, seed: int
) -> tuple[np.ndarray, Iterator[np.ndarray]]:
    """The distinct rows, and chunk by chunk how often each appears in each item resample.

    Drawing n items with replacement is a multinomial draw over the distinct rows
    weighted by their frequency; each chunk is a (resamples, distinct rows) array.
    """
    _check_resamples(n_resamples)
    distinct, frequency = distinct_rows(rows)
    rng = np.random.default_rng(seed)
    return distinct, _multinomial_chunks(rng, frequency, n_resamples)


def resample_statistic(
    rows: np.ndarray,
    statistic: Callable[[np.ndarray], Sequence[float]],
    n_resamples: int,
    seed: int,
) -> np.ndarray:
    """Call `statistic` (returning k numbers) on each item resample: an (n_resamples, k) array."""
    _check_resamples(n_resamples)
    n = len(rows)
    rng = np.random.default_rng(seed)
    out: list[Sequence[float]] = []
    for index in _index_rows(rng, n, n_resamples):
        out.append(statistic(rows[index]))
    return np.asarray(out, dtype=float).reshape(n_resamples, -1)


def _nanmeans(matrix: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """Resampled means of each column skipping NaN: (n_resamples, k); NaN where none counts."""
    return _resampled_means(matrix, n_resamples, seed, False)[0]


def _resampled_means(
    matrix: np.ndarray, n_resamples: int, seed: int, errors: bool
) -> tuple[np.ndarray, np.ndarray | None]:
    """Resampled means of each column skipping NaN, (n_resamples, k), and with `errors`
    their standard errors (sd / sqrt(count)) from the squares' sums in the same resamples:
    the squares are functions of the rows, so the distinct rows, and the draws, are the
    same as without them."""
    counted = ~np.isnan(matrix)
    partial = ~counted.all(axis=0)  # only columns with NaN need their count resampled
    zeroed = np.where(counted, matrix, 0.0)
    parts = [zeroed, counted[:, partial]] + ([zeroed * zeroed] if errors else [])
    sums = resampled_sums(np.column_stack(parts), n_resamples, seed)
    k, p = matrix.shape[1], int(partial.sum())
    n = np.full((n_resamples, k), float(len(matrix)))
    n[:, partial] = sums[:, k : k + p]
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums[:, :k] / n
        if not errors:
            return means, None
        variance = (sums[:, k + p :] - n * means * means) / (n - 1)
        return means, np.sqrt(np.maximum(variance, 0.0) / n)


def _multinomial_chunks(
    rng: np.random.Generator, frequency: np.ndarray, n_resamples: int
) -> Iterator[np.ndarray]:
    n = frequency.sum()
    for start, stop in _chunks(n_resamples, len(frequency)):
        yield rng.multinomial(n, frequency / n, size=stop - start)


def _check_resamples(n_resamples: int) -> None:
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")


def _chunks(n_resamples: int, width: int) -> Iterator[tuple[int, int]]:
    step = max(1, _CHUNK_CELLS // max(width, 1))
    for start in range(0, n_resamples, step):
        yield start, min(start + step, n_resamples)


def _index_rows(rng: np.random.Generator, n: int, n_resamples: int) -> Iterator[np.ndarray]:
    for start, stop in _chunks(n_resamples, n):
        yield from rng.integers(0, n, size=(stop - start, n))


def _has_nan(data: np.ndarray) -> bool:
    return data.dtype.kind in "fc" and bool(np.isnan(data).any())
