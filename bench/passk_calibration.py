"""Calibration of pass^k and pass@k (`chatjudge.stats.passk`) and of the gate on them, on
synthetic tasks whose success probabilities are known.

    python bench/passk_calibration.py            # about 6 CPU minutes
    python bench/passk_calibration.py --quick    # a quarter of the replications
    python bench/passk_calibration.py --only a,c

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

Figures print beside their targets, with the ratio of each figure to its target; the exit
status is 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass

import numpy as np

from chatjudge.stats import decide, paired_difference
from chatjudge.stats.passk import pass_at, pass_hat, pass_k

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a quarter of the replications")
    parser.add_argument("--only", default="a,b,c", help="parts to run, e.g. a,c")
    parser.add_argument("--seed", type=int, default=2031)
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
    print(f"{len(report.missed)} target(s) missed; {time.perf_counter() - start:.0f} s in all")
    for label in report.missed:
        print(f"  missed: {label}")
    return 1 if report.missed else 0


if __name__ == "__main__":
    sys.exit(main())
