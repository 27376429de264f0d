"""Calibration of pass^k and pass@k (`chatjudge.stats.passk`) and of the gate on them, on
synthetic tasks whose success probabilities are known.

    python bench/passk_calibration.py            # parts a-d
    python bench/passk_calibration.py --quick    # a quarter of the replications
    python bench/passk_calibration.py --only d --rules chatjudge,bootstrap,guard-30

Each replication draws T tasks from a known distribution of success probability p (Beta
distributions: every E[p^k] is exact), tries each n times, and estimates with chatjudge's
own functions, as the summary and the gate call them.

(a) bias: the mean over replications of the summary's pass^k and pass@k against the truth,
    E[p^k] and 1 - E[(1 - p)^k], for n = 2..8 and every k <= n; within 3 Monte Carlo SE.
(b) coverage: the share of the summary's 95% intervals (a studentized bootstrap over tasks,
    guarded near the ends) holding the truth, T = 50 and 200 tasks, n = 2, 4, 8: every k
    of both estimators in every case at least 0.93. 3,000 replications put a cell's MC SE
    near 0.004, so that an interval of true coverage 0.95 clears 0.93 by about 5 SE in
    each of the 108 cells (--quick: 750, MC SE near 0.008, and a cell within 2 of them
    below 0.93 passes).
(c) the gate on `<metric>_pass_hat_<k>`, tasks paired between two runs: with no true
    difference, the share of `pass` under require=better and of `fail` under not-worse with
    M = 0; with the true difference exactly at -M, the share of `pass` under not-worse.
    Each at most 0.025 + 2 MC SE, the limit bench/gate_calibration.py holds.

(d) the grid: T = 10, 20, 30, 50, 100 and 200 tasks of n = 2, 4 and 8 tries, the Beta
    families above and a mixture as agent benchmarks have (a third of tasks never solved,
    a fifth always, the rest Beta(2, 2)), tasks redrawn in each replication; every k of
    both estimators. The oracle: the 2.5-97.5% range of the estimate over 10,000 draws.
    Each rule of --rules is measured on the same replications (the studentized bootstrap,
    of the mean and of its logit, computed for all replications at once, as chatjudge
    computes them); the first is held to
    the targets in every cell: coverage >= 0.93, each tail missing <= 0.035, and where the
    truth lies in [0.1, 0.9] with T >= 50, a mean width <= 1.25 x the oracle's.

Figures print beside their targets, with the ratio of each figure to its target; the exit
status is 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from chatjudge.stats import decide, paired_difference
from chatjudge.stats.betting import betting_interval
from chatjudge.stats.bootstrap import Estimate
from chatjudge.stats.passk import (
    GUARD_TASKS,
    GUARD_WEIGHT,
    guarded,
    on_logit,
    pass_at,
    pass_hat,
    pass_k,
    share_interval,
)

ALPHA_SIDE = 0.025
MARGIN = 0.05
COVERAGE_TARGET = 0.93


@dataclass(frozen=True)
class Tasks:
    """Tasks whose success probability is Beta(a, b)."""

    name: str
    a: float
    b: float

    def draw(self, rng: np.random.Generator, size: tuple[int, ...]) -> np.ndarray:
        return rng.beta(self.a, self.b, size)

    def moment(self, k: int, a: float | None = None, b: float | None = None) -> float:
        """E[p^k] of Beta(a, b): the product of (a + i) / (a + b + i) for i < k."""
        a, b = (self.a if a is None else a), (self.b if b is None else b)
        return math.prod((a + i) / (a + b + i) for i in range(k))

    def truth(self, kind: str, k: int) -> float:
        if kind == "pass_hat":
            return self.moment(k)
        return 1.0 - self.moment(k, self.b, self.a)  # 1 - p is Beta(b, a)


TASKS = [
    Tasks("middling tasks, p ~ Beta(2, 2)", 2.0, 2.0),
    Tasks("mostly sure tasks, p ~ Beta(0.5, 0.5)", 0.5, 0.5),
    Tasks("hard tasks, p ~ Beta(1, 3)", 1.0, 3.0),
]


class Mixture(Tasks):
    """Tasks as agent benchmarks have them: a third never solved (p = 0), a fifth always
    (p = 1), the rest Beta(a, b)."""

    def draw(self, rng: np.random.Generator, size: tuple[int, ...]) -> np.ndarray:
        u = rng.random(size)
        return np.where(u < 1 / 3, 0.0, np.where(u < 8 / 15, 1.0, rng.beta(self.a, self.b, size)))

    def truth(self, kind: str, k: int) -> float:
        if kind == "pass_hat":  # 0^k = 0, 1^k = 1
            return 1 / 5 + 7 / 15 * self.moment(k)
        return 1.0 - (1 / 3 + 7 / 15 * self.moment(k, self.b, self.a))


FAMILIES = [*TASKS, Mixture("a third never, a fifth always, Beta(2, 2)", 2.0, 2.0)]


class Report:
    def __init__(self) -> None:
        self.missed: list[str] = []

    def line(self, label: str, figure: str, target: str, ratio: float, ok: bool) -> None:
        print(f"  {label:<44} {figure:<30} target {target:<26} ratio {ratio:6.3f}  "
              f"{'PASS' if ok else 'FAIL'}")  # fmt: skip
        if not ok:
            self.missed.append(label)


def bias(report: Report, runs: int, seed: int) -> None:
    tasks = 50
    print(f"(a) bias: {tasks} tasks, {runs} replications per (distribution, n); "
          "|bias| <= 3 MC SE")  # fmt: skip
    worst = 0.0
    for d, dist in enumerate(TASKS):
        own = 0.0
        for n in range(2, 9):
            rng = np.random.default_rng([seed, d, n])
            p = dist.draw(rng, (runs, tasks))
            c = rng.binomial(n, p).ravel().astype(float)
            tries = np.full(c.shape, float(n))
            for kind, estimator in (("pass_hat", pass_hat), ("pass_at", pass_at)):
                for k in range(1, n + 1):
                    means = estimator(tries, c, k).reshape(runs, tasks).mean(axis=1)
                    se = float(means.std(ddof=1) / math.sqrt(runs))
                    error = float(means.mean()) - dist.truth(kind, k)
                    z = abs(error) / se if se > 0 else 0.0
                    worst = max(worst, z)
                    own = max(own, z)
                    if z > 3:
                        figure = f"bias {error:+.5f} (SE {se:.5f})"
                        report.line(f"{dist.name[:20]}, n={n}, {kind}^{k}", figure, "|z| <= 3",
                                    z / 3, False)  # fmt: skip
        print(f"  {dist.name:<44} n = 2..8, every k, both: worst |bias| / MC SE = {own:.2f}")
    report.line("worst |bias| / MC SE, every case", f"{worst:.2f}", "<= 3", worst / 3, worst <= 3)


def coverage(report: Report, runs: int, seed: int, slack_se: float = 0.0) -> None:
    """Per case, the share of intervals holding the truth, for every k of both estimators:
    each must reach 0.93. Beside the lowest k, how its misses split (the truth below the
    interval, above it: a lopsided split is an interval leaning the wrong way, not noise)
    and its mean width; per case, the mean width over k. `slack_se`: how many MC SE below
    0.93 a cell may lie (0 in the full run)."""
    target = COVERAGE_TARGET
    slack = f" - {slack_se:g} MC SE" if slack_se else ""
    print(f"(b) coverage of the 95% interval: {runs} replications per case; every k of "
          f"every case >= {target}{slack}")  # fmt: skip
    print(f"  {'tasks':<38} {'T':>4} {'n':>2}  lowest k: coverage (MC SE), misses below/"
          "above, width   mean over k: coverage, width")  # fmt: skip
    cells: list[tuple[float, str]] = []
    for d, dist in enumerate(TASKS):
        for size in (50, 200):
            for n in (2, 4, 8):
                rng = np.random.default_rng([seed, 100 + d, size, n])
                start = time.perf_counter()
                keys = [(kind, k) for kind in ("pass_hat", "pass_at") for k in range(1, n + 1)]
                hits, below, above = (dict.fromkeys(keys, 0) for _ in range(3))
                width = dict.fromkeys(keys, 0.0)
                tries = np.full(size, n)
                for _ in range(runs):
                    c = rng.binomial(n, dist.draw(rng, (size,)))
                    found = pass_k(tries, c)
                    assert found is not None
                    for kind, estimates in (("pass_hat", found.pass_hat),
                                            ("pass_at", found.pass_at)):  # fmt: skip
                        for k, estimate in estimates.items():
                            assert estimate.ci95 is not None
                            lo, hi = estimate.ci95
                            truth = dist.truth(kind, k)
                            hits[(kind, k)] += lo <= truth <= hi
                            below[(kind, k)] += truth < lo
                            above[(kind, k)] += truth > hi
                            width[(kind, k)] += hi - lo
                rates = {key: h / runs for key, h in hits.items()}
                for (kind, k), rate in rates.items():
                    se = math.sqrt(max(rate * (1 - rate), 1e-12) / runs)
                    cells.append((rate, f"{dist.name[:24]}, T={size}, n={n}, {kind}^{k}: "
                                        f"{rate:.4f} (MC SE {se:.4f}), misses "
                                        f"{below[(kind, k)]}/{above[(kind, k)]}"))  # fmt: skip
                key = min(rates, key=lambda item: rates[item])
                low = rates[key]
                se = math.sqrt(max(low * (1 - low), 1e-12) / runs)
                ok = low >= target - slack_se * se
                mean = float(np.mean(list(rates.values())))
                mean_width = sum(width.values()) / len(width) / runs
                print(f"  {dist.name[:38]:<38} {size:>4} {n:>2}  {key[0]}^{key[1]}: {low:.4f} "
                      f"({se:.4f}), {below[key]}/{above[key]}, {width[key] / runs:.4f}"
                      f"{'' if ok else ' LOW'}   {mean:.4f}, {mean_width:.4f}  "
                      f"[{time.perf_counter() - start:.0f} s]")  # fmt: skip
                for kind in ("pass_hat", "pass_at"):
                    shares = " ".join(f"{rates[(kind, k)]:.3f}" for k in range(1, n + 1))
                    print(f"      {kind}, k = 1..{n}: {shares}")
                if not ok:
                    report.missed.append(
                        f"coverage: {dist.name}, T={size}, n={n}, {key[0]}^{key[1]}"
                    )
    cells.sort()
    print("  the lowest three of all cells:")
    for _, line in cells[:3]:
        print(f"    {line}")
    lowest = cells[0][0]
    ok = lowest >= target - slack_se * math.sqrt(lowest * (1 - lowest) / runs)
    report.line("coverage: the lowest k of any case", f"{lowest:.4f}", f">= {target}{slack}",
                lowest / target, ok)  # fmt: skip


@dataclass(frozen=True)
class GateCase:
    tasks: Tasks
    size: int
    n: int
    k: int


GATE_CASES = [
    GateCase(TASKS[0], 50, 4, 2),
    GateCase(TASKS[0], 200, 4, 2),
    GateCase(TASKS[1], 100, 8, 4),
]


def gate(report: Report, runs: int, seed: int) -> None:
    limit = ALPHA_SIDE + 2 * math.sqrt(ALPHA_SIDE * (1 - ALPHA_SIDE) / runs)
    print(f"(c) the gate on pass^k, tasks paired: {runs} runs per figure; limit "
          f"{ALPHA_SIDE} + 2 MC SE = {limit:.4f}")  # fmt: skip
    for g, case in enumerate(GATE_CASES):
        rng = np.random.default_rng([seed, 200 + g])
        truth = case.tasks.moment(case.k)
        # at -M: the candidate's p is the baseline task's times s, s^k E[p^k] = E[p^k] - M
        scale = ((truth - MARGIN) / truth) ** (1 / case.k)
        tries = np.full(case.size, case.n)
        start = time.perf_counter()
        counts = {"better": 0, "worse": 0, "margin": 0}
        methods: set[str] = set()
        for _ in range(runs):
            p = case.tasks.draw(rng, (case.size,))
            base = pass_hat(tries, rng.binomial(case.n, p), case.k)
            cand = pass_hat(tries, rng.binomial(case.n, p), case.k)
            diff = paired_difference(cand, base, bounds=(-1.0, 1.0), boundary=0.0)
            methods.add(diff.method)
            counts["better"] += decide(diff.ci95, 0.0, "better") == "pass"
            counts["worse"] += decide(diff.ci95, 0.0, "not-worse") == "fail"
            shifted = pass_hat(tries, rng.binomial(case.n, p * scale), case.k)
            diff = paired_difference(shifted, base, bounds=(-1.0, 1.0), boundary=-MARGIN)
            counts["margin"] += decide(diff.ci95, MARGIN, "not-worse") == "pass"
        name = f"{case.tasks.name[:24]}, T={case.size}, n={case.n}, pass^{case.k}"
        print(f" {name} [{', '.join(sorted(methods))}; {time.perf_counter() - start:.0f} s]")
        for key, label in (("better", "Δ = 0: pass under better"),
                           ("worse", "Δ = 0: fail under not-worse, M = 0"),
                           ("margin", f"Δ = -M: pass under not-worse, M = {MARGIN}")):  # fmt: skip
            rate = counts[key] / runs
            se = math.sqrt(max(rate * (1 - rate), 1e-12) / runs)
            report.line(label, f"{rate:.4f} (MC SE {se:.4f})", f"<= {limit:.4f}",
                        rate / ALPHA_SIDE, rate <= limit)  # fmt: skip


GRID_SIZES = (10, 20, 30, 50, 100, 200)
GRID_TRIES = (2, 4, 8)
WIDTH_TARGET = 1.25
ORACLE_DRAWS = 10_000
TAIL_TARGET = 0.035


def task_values(n: int, kind: str, k: int) -> np.ndarray:
    """A task's estimate for each count of successes 0..n: tasks of n tries take only these."""
    c, tries = np.arange(n + 1.0), np.full(n + 1, float(n))
    return pass_hat(tries, c, k) if kind == "pass_hat" else pass_at(tries, c, k)


def _quantiles(t: np.ndarray) -> np.ndarray:
    """Per column, the 2.5 and 97.5% points of t (NaN left out), numpy's linear method:
    `percentile_interval` of chatjudge.stats.bootstrap, for many replications at once."""
    ordered = np.sort(t, axis=0)  # NaN last
    finite = np.count_nonzero(~np.isnan(t), axis=0)
    out = np.full((t.shape[1], 2), np.nan)
    for j, q in enumerate((0.025, 0.975)):
        position = np.maximum(finite - 1, 0) * q
        below = np.floor(position).astype(int)
        above = np.minimum(below + 1, np.maximum(finite - 1, 0))
        low = np.take_along_axis(ordered, below[None], 0)[0]
        high = np.take_along_axis(ordered, above[None], 0)[0]
        out[:, j] = np.where(finite > 0, low + (high - low) * (position - below), np.nan)
    return out


@dataclass
class Cell:
    """One (tasks, T, n, estimator, k) cell: per replication the studentized bootstrap's
    interval (`logit`: of the mean's logit), what a guard keys on; the truth and the oracle's
    width."""

    values: np.ndarray
    counts: np.ndarray  # replications x (n + 1): tasks with each count of successes
    estimate: np.ndarray
    boot: np.ndarray  # replications x 2
    inner: np.ndarray  # tasks away from the nearer end
    rarer: np.ndarray  # tasks at the rarer of one or two values (T when three or more)
    truth: float
    oracle: float
    logit: np.ndarray | None = None  # replications x 2
    distinct: np.ndarray | None = None  # task values taken


def grid_cells(dist: Tasks, size: int, n: int, runs: int, resamples: int,
               seed: int) -> dict[tuple[str, int], Cell]:  # fmt: skip
    """Every k of both estimators for T = `size` tasks of `n` tries, on the same `runs`
    replications. The bootstrap is chatjudge's (`bootstrap_metrics(method="studentized")`):
    tasks of n tries take n + 1 values, so a resample is a multinomial draw of the counts,
    as the library draws it where values are few, for all replications at once."""
    rng = np.random.default_rng([seed, 400, size, n, int(dist.a * 10), int(dist.b * 10),
                                 isinstance(dist, Mixture)])  # fmt: skip
    grid = np.arange(n + 1)
    counts = (rng.binomial(n, dist.draw(rng, (runs, size)))[..., None] == grid).sum(axis=1)
    draws = rng.binomial(n, dist.draw(rng, (ORACLE_DRAWS, size)))
    oracle_counts = (draws[..., None] == grid).sum(axis=1)
    keys = [(kind, k) for kind in ("pass_hat", "pass_at") for k in range(1, n + 1)]
    values = {key: task_values(n, *key) for key in keys}
    present = counts > 0
    spread_t = {key: np.empty((runs, 2)) for key in keys}
    spread_logit = {key: np.empty((runs, 2)) for key in keys}
    chunk = max(1, 4_000_000 // (resamples * (n + 1)))
    for start in range(0, runs, chunk):
        part = counts[start : start + chunk]
        drawn = rng.multinomial(size, part / size, size=(resamples, len(part)))
        for key in keys:
            v = values[key]
            mean = part @ v / size
            means = drawn @ v / size
            error = np.sqrt(
                np.maximum(drawn @ (v * v) / size - means**2, 0) * size / (size - 1) / size
            )
            span = (np.where(present[start : start + chunk], v, -np.inf).max(1)
                    - np.where(present[start : start + chunk], v, np.inf).min(1))  # fmt: skip
            with np.errstate(invalid="ignore", divide="ignore"):
                t = np.where(error > 1e-9 * span, (means - mean) / error, np.nan)
                on = (_logit(means) - _logit(mean)) * means * (1 - means) / error
                on = np.where((error > 1e-9 * span) & np.isfinite(on), on, np.nan)
            spread_t[key][start : start + chunk] = _quantiles(t)
            spread_logit[key][start : start + chunk] = _quantiles(on)
    cells = {}
    for key in keys:
        v = values[key]
        mean = counts @ v / size
        error = np.sqrt(np.maximum(counts @ (v * v) / size - mean**2, 0) / (size - 1))
        low = np.where(present, v, np.inf).min(1)
        high = np.where(present, v, -np.inf).max(1)
        lo = np.maximum(mean - spread_t[key][:, 1] * error, low)
        hi = np.minimum(mean - spread_t[key][:, 0] * error, high)
        flat = (error == 0) | np.isnan(lo) | np.isnan(hi)
        boot = np.column_stack([np.where(flat, mean, lo), np.where(flat, mean, hi)])
        with np.errstate(invalid="ignore", divide="ignore"):
            centre, scale = _logit(mean), error / (mean * (1 - mean))
            lo = np.maximum(_expit(centre - spread_logit[key][:, 1] * scale), low)
            hi = np.minimum(_expit(centre - spread_logit[key][:, 0] * scale), high)
        flat = (error == 0) | np.isnan(lo) | np.isnan(hi)
        logit = np.column_stack([np.where(flat, mean, lo), np.where(flat, mean, hi)])
        _, kinds = np.unique(v, return_inverse=True)
        by_value = counts @ (kinds[:, None] == np.arange(kinds.max() + 1))
        distinct = np.count_nonzero(by_value, axis=1)
        rarer = np.where(distinct < 3, size - by_value.max(axis=1), size)
        inner = np.minimum(counts @ (v > 0), counts @ (v < 1))
        spread = np.quantile(oracle_counts @ v / size, [0.025, 0.975])
        cells[key] = Cell(v, counts, mean, boot, inner, rarer, dist.truth(*key),
                          float(spread[1] - spread[0]), logit, distinct)  # fmt: skip
    return cells


def _logit(m: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(m) - np.log1p(-m)


def _expit(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def _on_logit(cell: Cell) -> np.ndarray:
    """Per replication, `on_logit` of chatjudge.stats.passk."""
    assert cell.distinct is not None
    return (cell.estimate >= 0.1) & (cell.estimate <= 0.9) & (cell.distinct >= 3)


def _hybrid(cell: Cell) -> Cell:
    """The cell with the bootstrap-t of the logit where chatjudge takes it."""
    assert cell.logit is not None
    return dataclasses.replace(cell, boot=np.where(_on_logit(cell)[:, None], cell.logit, cell.boot))


def _short(dist: Tasks) -> str:
    return "mixture" if isinstance(dist, Mixture) else f"Beta({dist.a:g}, {dist.b:g})"


def _union(cell: Cell, guarded: np.ndarray, fallback: Callable[[Cell, int], tuple[float, float]]
           ) -> np.ndarray:  # fmt: skip
    out = cell.boot.copy()
    cache: dict[bytes, tuple[float, float]] = {}
    for r in np.flatnonzero(guarded):
        key = cell.counts[r].tobytes()
        if key not in cache:
            cache[key] = fallback(cell, r)
        out[r] = min(out[r, 0], cache[key][0]), max(out[r, 1], cache[key][1])
    return out


def _resting(cell: Cell, distance: np.ndarray) -> np.ndarray:
    """Per replication, `resting_on` of chatjudge.stats.passk: (sum d)^2 / sum d^2."""
    s1, s2 = cell.counts @ distance, cell.counts @ (distance * distance)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(s2 > 0, s1 * s1 / s2, 0.0)


def _weight(cell: Cell) -> np.ndarray:
    """How many tasks' worth of distance from the nearer end the mean rests on."""
    return np.minimum(_resting(cell, cell.values), _resting(cell, 1 - cell.values))


def _share(cell: Cell, r: int) -> tuple[float, float]:
    return share_interval(float(cell.estimate[r]), int(cell.counts[r].sum()))


def _betting(cell: Cell, r: int) -> tuple[float, float]:
    return betting_interval(np.repeat(cell.values, cell.counts[r]), 0.0, 1.0)


RULES: dict[str, Callable[[Cell], np.ndarray]] = {
    # chatjudge's: the bootstrap-t of the logit in [0.1, 0.9] over 3 values or more, and
    # guarded: fewer than GUARD_TASKS away from an end or at the rarer of two values
    "chatjudge": lambda c: _one_sided(_hybrid(c), GUARD_TASKS, GUARD_WEIGHT),
    "plain-t-guarded": lambda c: _one_sided(c, GUARD_TASKS, GUARD_WEIGHT),  # before
    "bootstrap": lambda c: c.boot,  # the studentized bootstrap alone
    "logit-bootstrap": lambda c: _hybrid(c).boot,  # chatjudge's unguarded
    "guard-30": lambda c: _union(c, np.minimum(c.inner, c.rarer) < 30, _betting),  # before
    "guard-10-betting": lambda c: _union(c, np.minimum(c.inner, c.rarer) < 10, _betting),
    "guard-5-share": lambda c: _union(c, np.minimum(c.inner, c.rarer) < 5, _share),
    "guard-15-share": lambda c: _union(c, np.minimum(c.inner, c.rarer) < 15, _share),
    # keyed on how many tasks' worth the values away from the nearer end rest on
    "weight-10-share": lambda c: _union(c, np.minimum(_weight(c), c.rarer) < 10, _share),
    "weight-15-share": lambda c: _union(c, np.minimum(_weight(c), c.rarer) < 15, _share),
    "weight-20-share": lambda c: _union(c, np.minimum(_weight(c), c.rarer) < 20, _share),
    "guard-10-weight-8": lambda c: _union(c, _small(c, 10, 8), _share),  # both ends
    "guard-10-share": lambda c: _union(c, np.minimum(c.inner, c.rarer) < 10, _share),
    "guard-10-weight-6": lambda c: _union(c, _small(c, 10, 6), _share),
}


def _check_rule(cell: Cell, replications: int = 10) -> None:
    """The bench's "chatjudge" rule is chatjudge's: on the first replications, both take the
    logit's bootstrap-t at the same ones (`on_logit`) and, from the same bootstrap interval,
    `guarded` gives the same interval."""
    mine = RULES["chatjudge"](cell)
    assert cell.logit is not None
    for r in range(min(replications, len(mine))):
        values = np.repeat(cell.values, cell.counts[r])
        base = cell.logit if on_logit(values) else cell.boot
        boot = (float(base[r, 0]), float(base[r, 1]))
        found = guarded(values, Estimate(float(cell.estimate[r]), boot, len(values))).ci95
        assert found is not None and np.allclose(found, mine[r]), (found, mine[r])


def _one_sided(cell: Cell, tasks: int, weight: float) -> np.ndarray:
    """Few tasks away from an end: the share interval's both ends; a mean resting on few
    tasks' worth of distance from an end: only the far end of it."""
    counted = np.minimum(cell.inner, cell.rarer) < tasks
    out = _union(cell, counted, _share)
    from_zero, from_one = _resting(cell, cell.values), _resting(cell, 1 - cell.values)
    light = ~counted & (np.minimum(from_zero, from_one) < weight)
    at_zero = from_zero <= from_one
    share = _union(cell, light, _share)
    out[light & at_zero, 1] = share[light & at_zero, 1]
    out[light & ~at_zero, 0] = share[light & ~at_zero, 0]
    return out


def _small(cell: Cell, tasks: int, weight: float) -> np.ndarray:
    return (np.minimum(cell.inner, cell.rarer) < tasks) | (_weight(cell) < weight)


def grid(report: Report, runs: int, resamples: int, seed: int, rules: list[str],
         sizes: tuple[int, ...]) -> None:  # fmt: skip
    """(d) every rule on the grid; the first rule's figures are held to the targets."""
    se_cov = math.sqrt(0.95 * 0.05 / runs)
    se_tail = math.sqrt(0.025 * 0.975 / runs)
    print(
        f"(d) the grid: {runs} replications per cell, {resamples} resamples, oracle from "
        f"{ORACLE_DRAWS} draws; MC SE {se_cov:.4f} at coverage 0.95, {se_tail:.4f} at a "
        f"tail of 0.025. Targets: coverage >= {COVERAGE_TARGET}, each tail <= {TAIL_TARGET}, "
        f"width <= {WIDTH_TARGET} x the oracle's where the truth is in [0.1, 0.9] and T >= 50"
    )
    print(f"  {'rule':<16} {'tasks':<12} {'T':>4} {'n':>2}  {'lowest coverage':<22} "
          f"{'largest tail':<24} {'width / oracle: worst target, mean'}")  # fmt: skip
    worst: dict[str, list[tuple[float, str]]] = {name: [] for name in rules}
    ratios: dict[str, dict[int, list[float]]] = {name: {} for name in rules}
    for dist in FAMILIES:
        for size in sizes:
            for n in GRID_TRIES:
                start = time.perf_counter()
                cells = grid_cells(dist, size, n, runs, resamples, seed)
                for cell in cells.values():
                    _check_rule(cell)
                for name in rules:
                    rows = []
                    for (kind, k), cell in cells.items():
                        lo, hi = RULES[name](cell).T
                        below = float(np.mean(cell.truth < lo))
                        above = float(np.mean(cell.truth > hi))
                        ratio = float(np.mean(hi - lo)) / cell.oracle
                        target = 0.1 <= cell.truth <= 0.9 and size >= 50
                        rows.append((1 - below - above, below, above, ratio, target, f"{kind}^{k}"))
                        ratios[name].setdefault(size, []).append(ratio)
                    cov = min(rows)
                    tail = max(rows, key=lambda row: max(row[1], row[2]))
                    targeted = [row for row in rows if row[4]]
                    wide = max(targeted, key=lambda row: row[3]) if targeted else None
                    label = f"{_short(dist):<12} {size:>4} {n:>2}"
                    worst[name] += [(cov[0], f"coverage {cov[0]:.4f} ({cov[5]}, {label})"),
                                    (-max(tail[1], tail[2]), f"tail {max(tail[1], tail[2]):.4f} "
                                     f"({tail[5]}, {label})")]  # fmt: skip
                    if wide:
                        worst[name].append((-wide[3] - 10, f"width {wide[3]:.3f} x oracle "
                                            f"({wide[5]}, {label})"))  # fmt: skip
                    print(
                        f"  {name[:16]:<16} {label}  {cov[0]:.4f} {cov[5]:<12} "
                        f"{tail[1]:.4f}/{tail[2]:.4f} {tail[5]:<10} "
                        f"{(f'{wide[3]:.3f} {wide[5]}') if wide else '-':<18} "
                        f"{np.mean([row[3] for row in rows]):.3f}"
                        f"{'' if name != rules[0] else f'  [{time.perf_counter() - start:.0f} s]'}"
                    )
                    if name != rules[0]:
                        continue
                    for row in rows:
                        if (
                            row[0] < COVERAGE_TARGET
                            or max(row[1], row[2]) > TAIL_TARGET
                            or (row[4] and row[3] > WIDTH_TARGET)
                        ):
                            report.missed.append(f"grid: {label}, {row[5]}: coverage "
                                                 f"{row[0]:.4f}, tails {row[1]:.4f}/{row[2]:.4f}, "
                                                 f"width {row[3]:.3f}")  # fmt: skip
    for name in rules:
        print(f"  {name}: worst cells")
        by_kind = {"coverage": [], "tail": [], "width": []}
        for key, line in worst[name]:
            by_kind[line.split()[0]].append((key, line))
        for lines in by_kind.values():
            for _, line in sorted(lines)[:3]:
                print(f"    {line}")
        means = ", ".join(f"T={size}: {np.mean(r):.2f}" for size, r in sorted(ratios[name].items()))
        print(f"    mean width / oracle over every cell, by T: {means}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a quarter of the replications")
    parser.add_argument("--only", default="a,b,c,d", help="parts to run, e.g. a,c")
    parser.add_argument("--seed", type=int, default=2031)
    parser.add_argument("--grid-runs", type=int, default=3000, help="(d): replications per cell")
    parser.add_argument("--resamples", type=int, default=1000, help="(d): bootstrap resamples")
    parser.add_argument(
        "--rules",
        default="chatjudge,bootstrap",
        help=f"(d): rules to measure, the first held to the targets: {', '.join(RULES)}",
    )
    parser.add_argument("--sizes", default=",".join(map(str, GRID_SIZES)), help="(d): task counts")
    args = parser.parse_args()
    scale = 4 if args.quick else 1
    parts = set(args.only.split(","))
    report = Report()
    start = time.perf_counter()
    if "a" in parts:
        bias(report, 20_000 // scale, args.seed)
    if "b" in parts:
        coverage(report, 3000 // scale, args.seed, slack_se=2.0 if args.quick else 0.0)
    if "c" in parts:
        gate(report, 1000 // scale, args.seed)
    if "d" in parts:
        sizes = tuple(int(size) for size in args.sizes.split(","))
        grid(
            report, args.grid_runs // scale, args.resamples, args.seed, args.rules.split(","), sizes
        )
    print(f"{len(report.missed)} target(s) missed; {time.perf_counter() - start:.0f} s in all")
    for label in report.missed:
        print(f"  missed: {label}")
    return 1 if report.missed else 0


if __name__ == "__main__":
    sys.exit(main())
