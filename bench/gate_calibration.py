"""Calibration of `chatjudge gate`'s statistics on synthetic runs with a known truth.

    python bench/gate_calibration.py            # full: 4,000 replications per scenario
    python bench/gate_calibration.py --quick    # a tenth of them: a one-minute smoke run
    python bench/gate_calibration.py --only a,d

(a) error rates at the boundary: with no true difference, the share of `pass` under
    require=better, and of `fail` under not-worse with M = 0; with the true difference
    exactly at -M, the share of `pass` under not-worse. Each at most 0.025 + 2 MC SE.
(b) power: at Δ = boundary + MDE and + MDE/2, the share passing against the tool's
    predicted power (the mean of `power(Δ, se)` over the runs, each with its own se).
(c) the sequential gate, a look after every batch of 20 rows: error rates under repeated
    looks, the warm-up the asymptotic sequence needs, and the share of rows judged on a
    clear-cut case.
(e) a ratio metric (micro: matched calls over calls made, summed over rows), whose row
    count of calls varies with the row's difficulty: the error rates of (a) for 400 and
    for 50 rows, the candidate making half as many calls again as the baseline.
(d) small samples, n = 2..30, 50 and 100: the wrong-pass rate under the extremal nulls
    (pairwise wins and losses 1/2 each; ties 1 - 2M and losses 2M; a 1-3 score's +1 with
    probability 2/3 and -2 with 1/3; a 0/1 metric with few discordant pairs), each at most
    0.025 + 2 MC SE at every n, beside the rate of the interval without the small-sample
    rule; then the share passing on a few true effects at small n, with and without it.

Every run is judged through chatjudge.stats exactly as the gate calls it (the default
10,000 bootstrap resamples and seed, the range of a row's difference the protocol gives);
figures print with their Monte Carlo SE and target, and the exit status is 1 when a target
is missed.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from chatjudge.stats import (
    Difference,
    bootstrap_ci,
    confidence_sequence_path,
    decide,
    mde80,
    paired_difference,
    paired_ratio_difference,
    power,
)
from chatjudge.stats.sequential import PLANNED_UNITS

N_ROWS = 400
MARGIN = 0.05
ALPHA_SIDE = 0.025
Draw = Callable[[np.random.Generator, float], tuple[np.ndarray, np.ndarray, np.ndarray | None]]


@dataclass(frozen=True)
class Scenario:
    """A synthetic pair of runs: `draw(rng, shift)` gives (candidate, baseline, clusters) per
    row and `truth(shift)` the exact Δ that shift makes; `bounds`: the range of one row's
    difference, as the gate passes it."""

    name: str
    draw: Draw
    truth: Callable[[float], float]
    bounds: tuple[float, float]

    def gate(
        self, drawn: tuple[np.ndarray, np.ndarray, np.ndarray | None], margin: float, require: str
    ) -> Difference:
        """The interval the gate decides on (never three-point: a sign test needs one vote
        or one 0/1 measurement per row and no clusters, and Tango's rows are many)."""
        boundary = -margin if require == "not-worse" else 0.0
        return paired_difference(*drawn, bounds=self.bounds, boundary=boundary)

    def shift_for(self, delta: float) -> float:
        """The shift whose true Δ is `delta`."""
        return float(optimize.brentq(lambda s: self.truth(s) - delta, -1.5, 1.5, xtol=1e-14))


def _binary(rng: np.random.Generator, shift: float) -> tuple[np.ndarray, np.ndarray, None]:
    # 2x2 cells: 40% both right, 30% both wrong, 30% discordant split by the shift.
    p = np.array([0.4, 0.15 + shift / 2, 0.15 - shift / 2, 0.3])
    cell = np.searchsorted(np.cumsum(p), rng.random(N_ROWS) * p.sum())
    cand = np.isin(cell, (0, 1)).astype(float)
    base = np.isin(cell, (0, 2)).astype(float)
    return cand, base, None


def _ordinal(rng: np.random.Generator, shift: float) -> tuple[np.ndarray, np.ndarray, None]:
    # 1-3 scores cut from latents sharing half their variance (the row's difficulty).
    row = rng.normal(0, math.sqrt(0.5), N_ROWS)
    cand = row + rng.normal(0, math.sqrt(0.5), N_ROWS) + shift
    base = row + rng.normal(0, math.sqrt(0.5), N_ROWS)
    return _cut(cand), _cut(base), None


def _cut(latent: np.ndarray) -> np.ndarray:
    return 1.0 + (latent > -0.5) + (latent > 0.5)


def _ordinal_truth(shift: float) -> float:
    mean = stats.norm.cdf(shift + 0.5) + stats.norm.cdf(shift - 0.5)
    return float(mean - (stats.norm.cdf(0.5) + stats.norm.cdf(-0.5)))


def _pairwise(rng: np.random.Generator, shift: float) -> tuple[np.ndarray, np.ndarray, None]:
    # Each row judged in both orders; 30% ties; the judge favours the response shown
    # first by 10 points; rows differ (the candidate better, equal or worse by 15 points).
    bias, ties = 0.10, 0.30
    row = rng.choice([-0.15, 0.0, 0.15], N_ROWS)
    prefs = []
    for shown_first in (-1.0, 1.0):  # candidate shown second (as B), then first (as A)
        win = (1 - ties) / 2 + row + shift + shown_first * bias
        u = rng.random(N_ROWS)
        prefs.append(np.where(u < win, 1.0, np.where(u < win + ties, 0.5, 0.0)))
    return (prefs[0] + prefs[1]) / 2, np.full(N_ROWS, 0.5), None


def _clustered(
    rng: np.random.Generator, shift: float, n_rows: int = N_ROWS
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    # Clusters of 10 rows, intra-cluster correlation 0.5 on each side, a 0/1 metric.
    g = n_rows // 10
    clusters = np.repeat(np.arange(g), 10)
    side = [
        np.repeat(rng.normal(0, math.sqrt(0.5), g), 10) + rng.normal(0, math.sqrt(0.5), n_rows)
        for _ in range(2)
    ]
    return (side[0] + shift > 0).astype(float), (side[1] > 0).astype(float), clusters


def _few_clusters(
    rng: np.random.Generator, shift: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return _clustered(rng, shift, 200)


def _samples(rng: np.random.Generator, shift: float) -> tuple[np.ndarray, np.ndarray, None]:
    # 3 samples per row and side, correlation 0.5 within a row, a 0/1 metric averaged.
    row = rng.normal(0, 0.5, (N_ROWS, 1))
    means = []
    for s in (shift, 0.0):
        latent = row + rng.normal(0, 0.5, (N_ROWS, 1)) + rng.normal(0, math.sqrt(0.5), (N_ROWS, 3))
        means.append((latent + s > 0).mean(axis=1))
    return means[0], means[1], None


def _normal_truth(shift: float) -> float:
    return float(stats.norm.cdf(shift) - 0.5)


SCENARIOS = [
    Scenario("0/1 metric, two runs (Tango)", _binary, lambda s: s, (-1.0, 1.0)),
    Scenario("1-3 ordinal, two runs", _ordinal, _ordinal_truth, (-2.0, 2.0)),
    Scenario("pairwise, 30% ties, position bias", _pairwise, lambda s: s, (-0.5, 0.5)),
    Scenario("clustered, 10 rows/cluster, ICC 0.5", _clustered, _normal_truth, (-1.0, 1.0)),
    Scenario("20 clusters (200 rows), ICC 0.5", _few_clusters, _normal_truth, (-1.0, 1.0)),
    Scenario("3 samples per row, corr 0.5", _samples, _normal_truth, (-1.0, 1.0)),
]


class Report:
    """Prints each figure beside its target and remembers the misses."""

    def __init__(self) -> None:
        self.missed: list[str] = []

    def share(self, label: str, hits: int, runs: int, target: float = ALPHA_SIDE) -> None:
        """An error rate against `target` + 2 MC SE (the SE of a share at the target)."""
        rate = hits / runs
        se_target = math.sqrt(target * (1 - target) / runs)
        ok = rate <= target + 2 * se_target
        self._line(
            label,
            f"{rate:.4f} (MC SE {math.sqrt(max(rate * (1 - rate), 1e-12) / runs):.4f})",
            f"<= {target} + 2 x {se_target:.4f} = {target + 2 * se_target:.4f}",
            ok,
        )

    def power(self, label: str, passed: np.ndarray, predicted: np.ndarray) -> None:
        observed = float(passed.mean())
        se = math.sqrt(observed * (1 - observed) / len(passed))
        expected = float(predicted.mean())
        # Within 5 points (the target at 2,000 runs, where 2.5 MC SE is under 0.025);
        # fewer runs (--quick) widen it by their own Monte Carlo error.
        tolerance = max(0.05, 2.5 * se)
        ok = abs(observed - expected) <= tolerance
        self._line(
            label,
            f"passed {observed:.4f} (MC SE {se:.4f})",
            f"predicted {expected:.4f} +- {tolerance:.3f}",
            ok,
        )

    def info(self, label: str, figure: str) -> None:
        print(f"  {label:<58} {figure}")

    def check(self, label: str, figure: str, target: str, ok: bool) -> None:
        self._line(label, figure, target, ok)

    def _line(self, label: str, figure: str, target: str, ok: bool) -> None:
        print(f"  {label:<58} {figure:<34} target {target:<30} {'PASS' if ok else 'FAIL'}")
        if not ok:
            self.missed.append(label)


def error_rates(report: Report, runs: int, seed: int) -> None:
    print(f"(a) error rates at the boundary: {N_ROWS} rows, {runs} runs per scenario, M = {MARGIN}")
    for k, scenario in enumerate(SCENARIOS):
        rng = np.random.default_rng([seed, k])
        start = time.perf_counter()
        better_pass = worse_fail = plain_pass = 0
        for _ in range(runs):
            cand, base, clusters = scenario.draw(rng, 0.0)
            diff = scenario.gate((cand, base, clusters), 0.0, "better")
            better_pass += decide(diff.ci95, 0.0, "better") == "pass"
            worse_fail += decide(diff.ci95, 0.0, "not-worse") == "fail"
            if scenario.draw is _few_clusters:  # the plain percentile interval, for contrast
                means = np.bincount(clusters, cand - base) / 10
                plain = bootstrap_ci(means, n_resamples=10_000)
                plain_pass += plain is not None and plain[0] > 0
        at_margin = scenario.shift_for(-MARGIN)
        margin_pass = 0
        for _ in range(runs):
            diff = scenario.gate(scenario.draw(rng, at_margin), MARGIN, "not-worse")
            margin_pass += decide(diff.ci95, MARGIN, "not-worse") == "pass"
        print(f" {scenario.name} [{diff.method}, {time.perf_counter() - start:.0f} s]")
        report.share("Δ = 0: pass under better", better_pass, runs)
        report.share("Δ = 0: fail under not-worse, M = 0", worse_fail, runs)
        report.share(f"Δ = -M: pass under not-worse, M = {MARGIN}", margin_pass, runs)
        if scenario.draw is _few_clusters:
            plain = f"{plain_pass / runs:.4f}"
            report.info("plain percentile instead: Δ = 0, pass under better", plain)


def _calls(
    rng: np.random.Generator, shift: float, n_rows: int
) -> tuple[np.ndarray, np.ndarray, None]:
    # A row's difficulty u moves both its calls made (Poisson, mean 2 e^{0.3u} for the
    # baseline, 3 e^{0.3u} for the candidate) and each call's chance to match (logistic
    # in 0.8 + u, the candidate's shifted), so rows with more calls weigh more.
    u = rng.normal(0, 1, n_rows)
    sides = []
    for calls, move in ((3.0, shift), (2.0, 0.0)):
        made = rng.poisson(calls * np.exp(0.3 * u))
        matched = rng.binomial(made, 1 / (1 + np.exp(-(0.8 + u + move))))
        sides.append(np.column_stack([matched, made]).astype(float))
    return sides[0], sides[1], None


_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(80)


def _ratio_truth(shift: float) -> float:
    """ΣN/ΣD in the limit: E[e^{0.3u} p(u + shift)] / E[e^{0.3u}], by quadrature."""
    weight = _WEIGHTS * np.exp(0.3 * _NODES)

    def share(move: float) -> float:
        return float(np.sum(weight / (1 + np.exp(-(0.8 + _NODES + move)))) / weight.sum())

    return share(shift) - share(0.0)


def ratio_errors(report: Report, runs: int, seed: int) -> None:
    print(f"(e) a ratio metric's error rates at the boundary: {runs} runs, M = {MARGIN}")
    at_margin = float(optimize.brentq(lambda s: _ratio_truth(s) + MARGIN, -3.0, 0.0, xtol=1e-14))
    for n_rows in (N_ROWS, 50):
        rng = np.random.default_rng([seed, 500 + n_rows])
        start = time.perf_counter()
        better_pass = worse_fail = margin_pass = 0
        for _ in range(runs):
            diff = paired_ratio_difference(*_calls(rng, 0.0, n_rows)[:2])
            better_pass += decide(diff.ci95, 0.0, "better") == "pass"
            worse_fail += decide(diff.ci95, 0.0, "not-worse") == "fail"
            diff = paired_ratio_difference(*_calls(rng, at_margin, n_rows)[:2])
            margin_pass += decide(diff.ci95, MARGIN, "not-worse") == "pass"
        print(f" {n_rows} rows [{diff.method}, {time.perf_counter() - start:.0f} s]")
        report.share("Δ = 0: pass under better", better_pass, runs)
        report.share("Δ = 0: fail under not-worse, M = 0", worse_fail, runs)
        report.share(f"Δ = -M: pass under not-worse, M = {MARGIN}", margin_pass, runs)


def power_match(report: Report, runs: int, seed: int) -> None:
    print(f"(b) power: {N_ROWS} rows, {runs} runs per point")
    cases = [
        (SCENARIOS[0], "better", 0.0),
        (SCENARIOS[1], "not-worse", MARGIN),
        (SCENARIOS[3], "better", 0.0),
    ]
    for k, (scenario, require, margin) in enumerate(cases):
        rng = np.random.default_rng([seed, 100 + k])
        boundary = -margin if require == "not-worse" else 0.0
        mde = _true_mde(scenario, boundary, rng)
        print(f" {scenario.name}, require {require}, M = {margin}: true MDE {mde:.4f}")
        for fraction in (1.0, 0.5):
            delta = boundary + fraction * mde
            shift = scenario.shift_for(delta)
            passed, predicted = np.empty(runs, bool), np.empty(runs)
            for r in range(runs):
                diff = scenario.gate(scenario.draw(rng, shift), margin, require)
                passed[r] = decide(diff.ci95, margin, require) == "pass"  # type: ignore[arg-type]
                predicted[r] = power(delta, diff.se, margin, require)  # type: ignore[arg-type]
            label = f"Δ = boundary + {'MDE' if fraction == 1 else 'MDE/2'}"
            report.power(label, passed, predicted)


def _true_mde(scenario: Scenario, boundary: float, rng: np.random.Generator) -> float:
    """The MDE at the true SE of Δ there: a fixed point of Δ = boundary + 2.80 SE(Δ)."""
    delta = boundary
    for _ in range(4):
        shift = scenario.shift_for(delta)
        estimates = [_point(*scenario.draw(rng, shift)) for _ in range(3000)]
        delta = boundary + mde80(float(np.std(estimates, ddof=1)))
    return delta - boundary


def _point(cand: np.ndarray, base: np.ndarray, _: np.ndarray | None) -> float:
    return float(np.mean(cand - base))


def sequential(report: Report, runs: int, seed: int) -> None:
    total, batch = 2000, 20
    print(f"(c) sequential: a 0/1 metric, {total} rows, a look every {batch} rows, {runs} runs")
    rng = np.random.default_rng([seed, 200])

    def gate(
        p_win: float, p_loss: float, margin: float, require: str, n: int = runs, **options: object
    ) -> tuple[int, int, float]:
        """(runs passed, runs failed, mean share of rows judged) under looks every batch."""
        passed = failed = 0
        judged = 0.0
        for start in range(0, n, 500):
            size = min(500, n - start)
            u = rng.random((size, total))
            d = np.where(u < p_win, 1.0, np.where(u < p_win + p_loss, -1.0, 0.0))
            lo, hi = confidence_sequence_path(d, **options)  # type: ignore[arg-type]
            looks = np.arange(batch - 1, total, batch)
            outcome = np.array(
                [
                    [decide((a, b), margin, require) for a, b in zip(lo_r, hi_r, strict=True)]  # type: ignore[arg-type]
                    for lo_r, hi_r in zip(lo[:, looks], hi[:, looks], strict=True)
                ]
            )
            decided = outcome != "inconclusive"
            first = np.where(decided.any(axis=1), decided.argmax(axis=1), len(looks) - 1)
            final = outcome[np.arange(size), first]
            passed += int(np.sum(final == "pass"))
            failed += int(np.sum(final == "fail"))
            judged += float(np.sum((looks[first] + 1) / total))
        return passed, failed, judged / n

    bounded = {"bound": 1.0}
    print(f" empirical-Bernstein sequence (bound 1, planned {PLANNED_UNITS})")
    p, f, _ = gate(0.15, 0.15, 0.0, "better", **bounded)
    report.share("Δ = 0: pass under better", p, runs)
    report.share("Δ = 0: fail under better", f, runs)
    p, _, _ = gate(0.125, 0.175, MARGIN, "not-worse", **bounded)
    report.share(f"Δ = -M: pass under not-worse, M = {MARGIN}", p, runs)
    p, _, _ = gate(0.0, 0.05, MARGIN, "not-worse", **bounded)
    report.share("Δ = -M, 5% discordant rows: pass under not-worse", p, runs)
    for planned in (PLANNED_UNITS, total):
        p, _, judged = gate(
            0.2, 0.1, MARGIN, "not-worse", n=max(runs // 2, 100), bound=1.0, planned=planned
        )
        report.check(
            f"clear-cut Δ = +0.10, M = {MARGIN}, planned {planned}: rows judged",
            f"{judged:.3f} of {total} (passed {p / max(runs // 2, 100):.3f})",
            "<= 0.5",
            judged <= 0.5,
        )
    print(
        " asymptotic sequence (no bound: the empirical variance), planned "
        f"{PLANNED_UNITS}; the warm-up before any decision"
    )
    for warmup in (2, 20, 50, 100):
        p, _, _ = gate(0.15, 0.15, 0.0, "better", min_units=warmup)
        report.share(f"min_units {warmup}: Δ = 0, pass under better", p, runs)
        p, _, _ = gate(0.0, 0.05, MARGIN, "not-worse", min_units=warmup)
        report.info(f"min_units {warmup}: Δ = -M, 5% discordant rows: pass", f"{p / runs:.4f}")
    p, _, _ = gate(0.125, 0.175, MARGIN, "not-worse")
    report.share(f"min_units 50: Δ = -M: pass under not-worse, M = {MARGIN}", p, runs)
    print("  (rare discordances mislead the empirical variance at any warm-up: pass `bound`)")
    p, _, judged = gate(0.2, 0.1, MARGIN, "not-worse", n=max(runs // 2, 100))
    report.info("clear-cut Δ = +0.10: rows judged", f"{judged:.3f} of {total}")
    print(" for contrast: the fixed-sample normal interval read at every look")
    report.info("Δ = 0: pass under better", f"{_peeking(rng, runs, total, batch):.4f}")


def _peeking(rng: np.random.Generator, runs: int, total: int, batch: int) -> float:
    u = rng.random((runs, total))
    d = np.where(u < 0.15, 1.0, np.where(u < 0.3, -1.0, 0.0))
    t = np.arange(batch, total + 1, batch)
    sums = np.cumsum(d, axis=1)[:, t - 1]
    squares = np.cumsum(d**2, axis=1)[:, t - 1]
    mean = sums / t
    sd = np.sqrt(np.maximum(squares / t - mean**2, 0) * t / (t - 1))
    lo, hi = mean - 1.96 * sd / np.sqrt(t), mean + 1.96 * sd / np.sqrt(t)
    decided = (lo > 0) | (hi < 0)
    first = np.where(decided.any(axis=1), decided.argmax(axis=1), len(t) - 1)
    return float(np.mean(lo[np.arange(runs), first] > 0))


SMALL_NS = [*range(2, 31), 50, 100]
SMALL_MARGIN = 0.02


@dataclass(frozen=True)
class Null:
    """Rows of a few kinds, (candidate, baseline) each, drawn with `probs`: a distribution of
    one row's difference whose mean sits exactly on the boundary."""

    name: str
    rows: list[tuple[float, float]]
    probs: list[float]
    bounds: tuple[float, float]
    three_point: bool  # one vote or one 0/1 measurement per row: the sign test applies
    margin: float
    require: str

    def sample(self, counts: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
        """`counts[k]` rows of kind k, in a seeded random order (the gate's row order)."""
        kinds = np.random.default_rng(seed).permutation(np.repeat(np.arange(len(counts)), counts))
        table = np.array(self.rows)
        return table[kinds, 0], table[kinds, 1]

    def passes(self, counts: np.ndarray, seed: int, guarded: bool = True) -> bool:
        cand, base = self.sample(counts, seed)
        boundary = -self.margin if self.require == "not-worse" else 0.0
        if guarded:
            diff = paired_difference(
                cand, base, bounds=self.bounds, boundary=boundary, three_point=self.three_point
            )
        else:
            diff = paired_difference(cand, base)
        return decide(diff.ci95, self.margin, self.require) == "pass"  # type: ignore[arg-type]


M2 = 2 * SMALL_MARGIN
NULLS = [
    Null("pairwise: wins 1/2, losses 1/2 (M=0)", [(1.0, 0.5), (0.0, 0.5)], [0.5, 0.5],
         (-0.5, 0.5), True, 0.0, "better"),
    Null(f"pairwise: ties {1 - M2:g}, losses {M2:g} (M={SMALL_MARGIN:g})",
         [(0.5, 0.5), (0.0, 0.5)], [1 - M2, M2], (-0.5, 0.5), True, SMALL_MARGIN, "not-worse"),
    Null("1-3 scores: +1 w.p. 2/3, -2 w.p. 1/3 (M=0)", [(2.0, 1.0), (1.0, 3.0)], [2 / 3, 1 / 3],
         (-2.0, 2.0), False, 0.0, "better"),
    Null("0/1 metric: 10% discordant (M=0)", [(1.0, 0.0), (0.0, 1.0), (1.0, 1.0)],
         [0.05, 0.05, 0.9], (-1.0, 1.0), True, 0.0, "better"),
    Null("0/1 metric: 4% discordant (M=0)", [(1.0, 0.0), (0.0, 1.0), (1.0, 1.0)],
         [0.02, 0.02, 0.96], (-1.0, 1.0), True, 0.0, "better"),
    # rare, skewed differences among many equal rows: why a sample counts as small by the
    # units that differ, not only by its size
    Null("1-3 scores: 0 w.p. .9, +1 1/15, -2 1/30 (M=0)", [(1.0, 1.0), (2.0, 1.0), (1.0, 3.0)],
         [0.9, 1 / 15, 1 / 30], (-2.0, 2.0), False, 0.0, "better"),
]  # fmt: skip


def _pass_rate(null: Null, n: int, runs: int, rng: np.random.Generator, guarded: bool) -> int:
    """Passes over `runs` draws of n rows; each distinct table of counts is gated once
    (rows in a seeded random order), since the decision depends on little else."""
    draws = rng.multinomial(n, null.probs, size=runs)
    tables, frequency = np.unique(draws, axis=0, return_counts=True)
    return int(sum(f for t, f in zip(tables, frequency, strict=True) if null.passes(t, n, guarded)))


def small_samples(report: Report, runs: int, seed: int) -> None:
    print(f"(d) small samples: wrong passes under extremal nulls, {runs} runs per n")
    limit = ALPHA_SIDE + 2 * math.sqrt(ALPHA_SIDE * (1 - ALPHA_SIDE) / runs)
    header = f"  {'n':>4}  {'null':<44} {'wrong pass':>10} {'MC SE':>7} {'limit':>7}  ok"
    for k, null in enumerate(NULLS):
        print(header + "   (no small-sample rule)")
        start = time.perf_counter()
        for n in SMALL_NS:
            passed = _pass_rate(null, n, runs, np.random.default_rng([seed, 300 + k, n]), True)
            plain = _pass_rate(null, n, runs, np.random.default_rng([seed, 300 + k, n]), False)
            rate = passed / runs
            se = math.sqrt(rate * (1 - rate) / runs)
            ok = rate <= limit
            print(f"  {n:>4}  {null.name:<44} {rate:>10.4f} {se:>7.4f} {limit:>7.4f}  "
                  f"{'yes' if ok else 'NO'}   ({plain / runs:.4f})")  # fmt: skip
            if not ok:
                report.missed.append(f"{null.name}, n = {n}")
        print(f"  [{time.perf_counter() - start:.0f} s]")
    small_power(runs, seed)


POWER_CASES = [
    (Null("pairwise: wins 3/4, losses 1/4 (M=0)", [(1.0, 0.5), (0.0, 0.5)], [0.75, 0.25],
          (-0.5, 0.5), True, 0.0, "better"), (10, 20, 29)),
    (Null("pairwise: wins .4, ties .5, losses .1 (M=0.02)",
          [(1.0, 0.5), (0.5, 0.5), (0.0, 0.5)], [0.4, 0.5, 0.1], (-0.5, 0.5), True,
          SMALL_MARGIN, "not-worse"), (10, 20, 29)),
    (Null("1-3 scores: +1 .5, 0 .4, -1 .1 (M=0)", [(2.0, 1.0), (1.0, 1.0), (1.0, 2.0)],
          [0.5, 0.4, 0.1], (-2.0, 2.0), False, 0.0, "better"), (10, 20, 29)),
    (Null("0/1 metric: 15% vs 5% discordant (M=0)", [(1.0, 0.0), (0.0, 1.0), (1.0, 1.0)],
          [0.15, 0.05, 0.8], (-1.0, 1.0), True, 0.0, "better"), (50, 100, 200)),
]  # fmt: skip


def small_power(runs: int, seed: int) -> None:
    print(f" power at small n: the share passing with and without the rule, {runs} runs")
    for k, (case, sizes) in enumerate(POWER_CASES):
        for n in sizes:
            rates = [
                _pass_rate(case, n, runs, np.random.default_rng([seed, 400 + k, n]), guarded) / runs
                for guarded in (True, False)
            ]
            print(f"  {n:>4}  {case.name:<44} {rates[0]:>10.4f}   (without: {rates[1]:.4f})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the replications")
    parser.add_argument("--only", default="a,b,c,d,e", help="parts to run, e.g. a,d")
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    parts = set(args.only.split(","))
    report = Report()
    start = time.perf_counter()
    if "a" in parts:
        error_rates(report, 4000 // scale, args.seed)
    if "b" in parts:
        power_match(report, 2000 // scale, args.seed)
    if "c" in parts:
        sequential(report, 4000 // scale, args.seed)
    if "d" in parts:
        small_samples(report, 20_000 // scale, args.seed)
    if "e" in parts:
        ratio_errors(report, 4000 // scale, args.seed)
    print(f"{len(report.missed)} target(s) missed; {time.perf_counter() - start:.0f} s in all")
    for label in report.missed:
        print(f"  missed: {label}")
    return 1 if report.missed else 0


if __name__ == "__main__":
    sys.exit(main())
