"""Calibration of pass^k and pass@k (`chatjudge.stats.passk`) and of the gate on them, on
synthetic tasks whose success probabilities are known.

    python bench/passk_calibration.py            # about 3 minutes on 2 cores
    python bench/passk_calibration.py --quick    # a quarter of the replications
    python bench/passk_calibration.py --only a,c

Each replication draws T tasks from a known distribution of success probability p (Beta
distributions: every E[p^k] is exact), tries each n times, and estimates with chatjudge's
own functions, as the summary and the gate call them.

(a) bias: the mean over replications of the summary's pass^k and pass@k against the truth,
    E[p^k] and 1 - E[(1 - p)^k], for n = 2..8 and every k <= n; within 3 Monte Carlo SE.
(b) coverage: the share of the summary's 95% intervals (a bootstrap over tasks, guarded
    near the ends) holding the truth, T = 50 and 200 tasks, n = 2, 4, 8: per case, the mean
    over k at least 0.93 and no k below 0.93 by more than 2 MC SE.
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


def coverage(report: Report, runs: int, seed: int) -> None:
    """Per case, the share of intervals holding the truth, for every k of both estimators:
    their mean must reach 0.93, and no single k may lie below 0.93 by more than 2 MC SE
    (the lowest of some 20 correlated shares sits below its truth by about that much)."""
    target = COVERAGE_TARGET
    print(f"(b) coverage of the 95% interval: {runs} replications per case; each case's "
          f"mean over k >= {target}, its lowest k >= {target} - 2 MC SE")  # fmt: skip
    print(f"  {'tasks':<44} {'T':>4} {'n':>2}  lowest k: coverage (MC SE)    mean over k")
    lowest, means = 1.0, []
    for d, dist in enumerate(TASKS):
        for size in (50, 200):
            for n in (2, 4, 8):
                rng = np.random.default_rng([seed, 100 + d, size, n])
                start = time.perf_counter()
                hits = {(kind, k): 0 for kind in ("pass_hat", "pass_at") for k in range(1, n + 1)}
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
                            hits[(kind, k)] += lo <= dist.truth(kind, k) <= hi
                rates = {key: h / runs for key, h in hits.items()}
                (kind, k), low = min(rates.items(), key=lambda item: item[1])
                se = math.sqrt(max(low * (1 - low), 1e-12) / runs)
                mean = float(np.mean(list(rates.values())))
                lowest, ok = min(lowest, low), low >= COVERAGE_TARGET - 2 * se
                means.append(mean)
                print(f"  {dist.name[:44]:<44} {size:>4} {n:>2}  {kind}^{k}: {low:.4f} "
                      f"({se:.4f}){'' if ok else ' LOW'}   {mean:.4f}  "
                      f"[{time.perf_counter() - start:.0f} s]")  # fmt: skip
                if not ok or mean < COVERAGE_TARGET:
                    report.missed.append(f"coverage: {dist.name}, T={size}, n={n}")
    report.line("coverage: the lowest case's mean over k", f"{min(means):.4f}",
                f">= {COVERAGE_TARGET}", min(means) / COVERAGE_TARGET,
                min(means) >= COVERAGE_TARGET)  # fmt: skip
    report.line("coverage: the lowest k of any case", f"{lowest:.4f}",
                f"~ {COVERAGE_TARGET} (2 MC SE)", lowest / COVERAGE_TARGET, True)  # fmt: skip


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
        coverage(report, 1000 // scale, args.seed)
    if "c" in parts:
        gate(report, 1000 // scale, args.seed)
    print(f"{len(report.missed)} target(s) missed; {time.perf_counter() - start:.0f} s in all")
    for label in report.missed:
        print(f"  missed: {label}")
    return 1 if report.missed else 0


if __name__ == "__main__":
    sys.exit(main())
