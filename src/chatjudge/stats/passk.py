"""pass^k and pass@k: does an agent get a task right every time, or at least once?

A task tried n times with c successes gives, for each k up to n, two unbiased estimates:
tau-bench's pass^k, C(c, k) / C(n, k), the chance that k tries drawn from the n all
succeed, and pass@k (Chen et al., 2021, the Codex paper), 1 - C(n - c, k) / C(n, k),
the chance that at least one does. The metric is their mean over tasks; its 95% interval
is a bootstrap over tasks (one resampling shared by every k), as the summary's other
metrics resample items, but studentized (bootstrap-t): at a large k a task's estimate takes
a few skewed values (0, 1/70, ..., 1 for pass^4 of 8 tries), where the percentile interval
lags the long tail (for 200 hard tasks the truth lay above it in 276 of 4,000 draws, below
it in 47: coverage 0.919; `bench/passk_calibration.py`). Where the mean lies in [0.1, 0.9]
and the tasks take three values or more, t is that of the mean's logit (`on_logit`), less skewed
near an end than the mean, where at 50 tasks the plain t cost up to 1.3 times the
needed width (pass@5 of 8 tries, Beta(2, 2) tasks). A task's estimate lies in [0, 1],
and at a large k most tasks sit at one end (hard tasks all at 0 for pass^k, easy ones at 1
for pass@k), where the bootstrap's interval collapses (50 tasks at 0 give [0, 0]); so with
fewer than 10 tasks away from the nearer end, or one or two values with fewer than 10 tasks at
the rarer, the interval is widened to hold the share interval of the tasks' mean
(Clopper-Pearson's, exact for 0/1 task values); and where the mean's distance from an end
rests on fewer than 8 tasks' worth (`resting_on`: a few tasks at 1 among many at 0 or just
above), its far end is. The betting interval that guarded below 30 tasks cost up to 2.4
times the needed width at 50 tasks (`bench/passk_calibration.py` (d) measures both).
Tasks with a single try say nothing about a retry: they are left out and counted. k runs
from 1 to the fewest tries any counted task has, so that every task counts at every k.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from chatjudge.stats.bootstrap import Estimate, Method, bootstrap_metrics

GUARD_TASKS = 10
"""Fewer tasks than this away from the nearer end (or at the rarer of two values) take the
share interval beside the bootstrap's: `bench/passk_calibration.py` (d) finds the bootstrap-t
valid from there, where 30, the gate's small sample, cost up to twice the width at 50 tasks."""
GUARD_WEIGHT = 8.0
"""...and a mean resting on fewer tasks' worth than this (`resting_on`) takes its far end:
at 100 hard tasks pass^4 of 8 tries has 20 or so tasks above 0, yet its truth lay above the
bootstrap-t in 4 to 5% of draws (bench part (d))."""
LOGIT_RANGE = (0.1, 0.9)
"""Means in this range, of tasks taking three values or more, take the bootstrap-t of their
logit (bench part (d)); nearer an end the guards below decide."""
ALPHA_SIDE = 0.025


def pass_hat(n: np.ndarray, c: np.ndarray, k: int) -> np.ndarray:
    """Per task, C(c, k) / C(n, k): the product of (c - i) / (n - i) for i < k, which is
    exactly 0 when c < k (one factor is 0) and needs no large binomials."""
    n, c = _checked(n, c, k)
    factors = (c[:, None] - np.arange(k)) / (n[:, None] - np.arange(k))
    return np.prod(np.maximum(factors, 0.0), axis=1)


def pass_at(n: np.ndarray, c: np.ndarray, k: int) -> np.ndarray:
    """Per task, 1 - C(n - c, k) / C(n, k): one minus the chance that k tries all fail."""
    n, c = _checked(n, c, k)
    return 1.0 - pass_hat(n, n - c, k)


def _checked(n: np.ndarray, c: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    n, c = np.asarray(n, dtype=float), np.asarray(c, dtype=float)
    if k < 1 or (n.size and k > n.min()):
        raise ValueError(f"k must be from 1 to the fewest tries ({n.min():g}), got {k}")
    if np.any(c < 0) or np.any(c > n):
        raise ValueError("successes must be from 0 to the task's tries")
    return n, c


def succeeded(values: np.ndarray) -> np.ndarray:
    """A try's 0/1 outcome from its value, the mean of its judge samples: 1 when most of
    them say 1. A tie (as many 0s as 1s) is a failure: a try succeeds only when its
    judges mostly say it did."""
    return (np.asarray(values, dtype=float) > 0.5).astype(float)


def count_tries(tasks: Sequence[Hashable], outcomes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per task, in order of its first try, its tries n and successes c."""
    keys: dict[Hashable, int] = {}
    index = np.fromiter((keys.setdefault(t, len(keys)) for t in tasks), np.int64, len(tasks))
    n = np.bincount(index, minlength=len(keys)).astype(float)
    c = np.bincount(index, weights=np.asarray(outcomes, dtype=float), minlength=len(keys))
    return n, c


@dataclass(frozen=True, slots=True)
class PassK:
    """pass^k and pass@k for k = 1..`max_k` (keys of both dicts), over `n_tasks` tasks of 2
    tries or more; `single_try`: the tasks left out for having only one."""

    pass_hat: dict[int, Estimate]
    pass_at: dict[int, Estimate]
    n_tasks: int
    single_try: int
    min_tries: int
    max_tries: int

    @property
    def max_k(self) -> int:
        return max(self.pass_hat, default=0)


def pass_k(n: np.ndarray, c: np.ndarray, *, n_resamples: int = 2000, seed: int = 0) -> PassK | None:
    """pass^k and pass@k over the tasks of `n` tries and `c` successes (in a fixed order:
    the interval depends on it through the seed), each with a 95% studentized bootstrap
    interval over tasks (of the mean's logit where `on_logit`), `guarded`; None when no task
    has 2 tries."""
    n, c = np.asarray(n, dtype=float), np.asarray(c, dtype=float)
    kept = n >= 2
    if not kept.any():
        return None
    n, c = n[kept], c[kept]
    max_k = int(n.min())
    columns: dict[str, np.ndarray] = {}
    for k in range(1, max_k + 1):
        columns[f"hat{k}"] = pass_hat(n, c, k)
        columns[f"at{k}"] = pass_at(n, c, k)
    methods: dict[str, Method] = {
        name: "logit-studentized" if on_logit(values) else "studentized"
        for name, values in columns.items()
    }
    found = {
        name: guarded(columns[name], estimate)
        for name, estimate in bootstrap_metrics(
            columns, n_resamples=n_resamples, seed=seed, method=methods
        ).items()
    }
    return PassK(
        pass_hat={k: found[f"hat{k}"] for k in range(1, max_k + 1)},
        pass_at={k: found[f"at{k}"] for k in range(1, max_k + 1)},
        n_tasks=int(kept.sum()),
        single_try=int((~kept).sum()),
        min_tries=max_k,
        max_tries=int(n.max()),
    )


def on_logit(values: np.ndarray) -> bool:
    """Whether the tasks' mean takes the bootstrap-t of its logit: in LOGIT_RANGE, over
    three task values or more (with two, the share interval's domain, the plain t)."""
    return bool(LOGIT_RANGE[0] <= values.mean() <= LOGIT_RANGE[1]) and np.unique(values).size >= 3


def guarded(values: np.ndarray, estimate: Estimate) -> Estimate:
    """`estimate`'s interval widened to hold the share interval of the tasks' mean where the
    bootstrap cannot see the side it has few tasks on: both its ends with fewer than
    GUARD_TASKS tasks away from the nearer end of [0, 1] (or one or two values with fewer than
    GUARD_TASKS at the rarer); its far end when the mean rests on fewer than GUARD_WEIGHT
    tasks' worth of distance from the nearer end, the few far tasks the bootstrap undersells."""
    if estimate.ci95 is None:
        return estimate
    inner = min(int(np.count_nonzero(values > 0)), int(np.count_nonzero(values < 1)))
    counts = np.unique(values, return_counts=True)[1]
    rarer = len(values) - int(counts.max()) if len(counts) < 3 else len(values)
    from_zero, from_one = resting_on(values), resting_on(1.0 - values)
    few = min(inner, rarer) < GUARD_TASKS
    if not few and min(from_zero, from_one) >= GUARD_WEIGHT:
        return estimate
    share = share_interval(float(values.mean()), len(values))
    lo, hi = estimate.ci95
    if few or from_zero > from_one:  # near 1: the far end is the lower one
        lo = min(lo, share[0])
    if few or from_zero <= from_one:
        hi = max(hi, share[1])
    return Estimate(estimate.value, (lo, hi), estimate.n)


def resting_on(distance: np.ndarray) -> float:
    """How many tasks a sum of distances from an end rests on: (sum d)^2 / sum d^2, the count
    of tasks away from the end when each is 0 or 1 from it, and fewer when a few far tasks
    carry the sum (pass^5 of 8 tries, C(c, 5) / 56: 1 at c = 8, 1/56 at c = 5)."""
    square = float(np.dot(distance, distance))
    return float(distance.sum()) ** 2 / square if square > 0 else 0.0


def share_interval(mean: float, n_tasks: int) -> tuple[float, float]:
    """The 95% Clopper-Pearson interval of a share of `mean` x `n_tasks` successes, that
    count continuous: exact for 0/1 task values, and a task value in [0, 1] with a given
    mean spreads its sum less than a 0/1 one does (Hoeffding, 1963)."""
    from scipy.special import betaincinv  # imported here: only a guarded interval needs it

    x = mean * n_tasks
    lo = 0.0 if x <= 0 else float(betaincinv(x, n_tasks - x + 1, ALPHA_SIDE))
    hi = 1.0 if x >= n_tasks else float(betaincinv(x + 1, n_tasks - x, 1 - ALPHA_SIDE))
    return lo, hi
