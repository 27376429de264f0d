"""Benchmark: do the corrected figures cover the truth they claim to estimate?

Synthetic runs with a known truth, many of them, each figure with its Monte Carlo
standard error and its target:

(a) style control. A judge prefers the candidate with probability
    sigmoid(q_i + gamma * d_i): q_i the item's true-quality term (normal around mu,
    sd 0.5), d_i the normalized length difference (a - b) / (a + b), drawn independently
    of quality, on both sides of 0 (normal, mean 0.2, sd 0.3, clipped to +-0.95).
    gamma is solved for so that length moves the raw rate 10 points above the
    true-quality rate E[sigmoid(q)] (what the judge would say at equal length). 2,000
    rows a run. Targets: the raw 95% interval misses the true-quality rate in most runs;
    the length-controlled one covers it in 93-97% of runs; with gamma = 0 (no length
    effect) the controlled interval still covers 93-97% and the width it costs against
    the raw interval is stated.
    Intervals: the raw one is the normal interval of a mean; the controlled one is the
    sandwich interval of the intercept, all runs fitted at once (a bootstrap of every run
    would take hours). The sandwich is checked against the item bootstrap that
    `summary.json` uses (`chatjudge.stats.style.controlled_fits`, 1,000 resamples) on a
    subset of runs: same coverage within Monte Carlo error, widths within a few percent.
(b) human calibration. Each row's human label is Bernoulli(0.5): 0.5 is the human value
    to estimate. The judge agrees with the label on 75% of rows and over-rates the
    candidate by 10 points (it says "candidate" with probability 0.85 when the human
    does and 0.35 when not). 200 of 2,000 rows are labelled, at random. Targets: the
    PPI++ interval (`chatjudge.stats.ppi_mean`) covers 0.5 in 93-97% of runs, the
    judge-only interval rarely (under 10%), and PPI++ is narrower than the humans alone
    (theory: widths 0.121 vs 0.139, worth about 262 labels).

    python bench/bias_calibration.py            # 1,000 runs per scenario, a few minutes
    python bench/bias_calibration.py --quick    # 200 runs: checks the chain in seconds
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from chatjudge.stats import ppi_mean
from chatjudge.stats.logistic import fit_logistic
from chatjudge.stats.style import controlled_fits

Z = 1.959963984540054
ROWS = 2000
LABELS = 200
SHIFT = 0.10  # points the length bonus moves the raw rate
MU = special.logit(0.55)
QUALITY_SD = 0.5


@dataclass
class Figure:
    name: str
    value: float
    se: float | None
    target: str
    ok: bool | None  # None: reported, no target

    def line(self) -> str:
        se = f" ± {self.se:.3f}" if self.se is not None else ""
        verdict = "" if self.ok is None else ("PASS" if self.ok else "FAIL")
        return f"  {self.name:<62} {self.value:8.3f}{se:<9} {self.target:<22} {verdict}"


def share(hits: np.ndarray) -> tuple[float, float]:
    """A share of runs and its Monte Carlo standard error."""
    p = float(np.mean(hits))
    return p, math.sqrt(p * (1 - p) / len(hits))


def draw_lengths(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return np.clip(rng.normal(0.2, 0.3, shape), -0.95, 0.95)


def length_bonus(rng: np.random.Generator) -> tuple[float, float]:
    """gamma moving the raw rate SHIFT above the true-quality rate, and that rate."""
    q = rng.normal(MU, QUALITY_SD, 400_000)
    d = draw_lengths(rng, (400_000,))
    truth = float(special.expit(q).mean())
    gamma = optimize.brentq(lambda g: special.expit(q + g * d).mean() - truth - SHIFT, 0, 20)
    return float(gamma), truth


def style_runs(rng: np.random.Generator, runs: int, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    """Outcomes (runs, rows) and length differences (runs, rows) of simulated runs."""
    q = rng.normal(MU, QUALITY_SD, (runs, ROWS))
    d = draw_lengths(rng, (runs, ROWS))
    y = (rng.random((runs, ROWS)) < special.expit(q + gamma * d)).astype(float)
    return y, d


def controlled_sandwich(y: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per run: sigmoid(intercept) and its 95% sandwich interval (runs, 2); all runs at once."""
    runs, n = y.shape
    x = np.stack([np.ones_like(d), d / d.std(axis=1, keepdims=True)], axis=2)
    beta = fit_logistic(x, y, np.ones((runs, n)), ridge=0.0)
    p = special.expit(np.einsum("knd,kd->kn", x, beta))
    bread = np.linalg.inv(np.einsum("kn,kni,knj->kij", p * (1 - p), x, x))
    g = (p - y)[:, :, None] * x
    meat = np.einsum("kni,knj->kij", g, g)
    se = np.sqrt((bread @ meat @ bread)[:, 0, 0])
    b0 = beta[:, 0]
    ci = special.expit(np.column_stack([b0 - Z * se, b0 + Z * se]))
    return special.expit(b0), ci


def raw_interval(y: np.ndarray) -> np.ndarray:
    m = y.mean(axis=1)
    half = Z * y.std(axis=1, ddof=1) / math.sqrt(y.shape[1])
    return np.column_stack([m - half, m + half])


def scenario_a(rng: np.random.Generator, runs: int, checked: int) -> list[Figure]:
    gamma, truth = length_bonus(rng)
    print(f"(a) gamma = {gamma:.3f}, true-quality rate = {truth:.4f}, {runs} runs", flush=True)
    figures = []
    widths = {}
    for label, g in (("length effect", gamma), ("no length effect", 0.0)):
        y, d = style_runs(rng, runs, g)
        raw = raw_interval(y)
        _, ci = controlled_sandwich(y, d)
        raw_cover, raw_se = share((raw[:, 0] <= truth) & (truth <= raw[:, 1]))
        cover, cover_se = share((ci[:, 0] <= truth) & (truth <= ci[:, 1]))
        widths[label] = (
            float(np.mean(raw[:, 1] - raw[:, 0])),
            float(np.mean(ci[:, 1] - ci[:, 0])),
        )
        shift = float(y.mean() - truth)
        figures.append(Figure(f"{label}: raw rate - truth (points)", shift * 100, None, "", None))
        if g:
            figures.append(
                Figure(f"{label}: raw interval misses truth", 1 - raw_cover, raw_se, "> 0.5",
                       1 - raw_cover > 0.5)
            )  # fmt: skip
        else:
            covers = Figure(f"{label}: raw interval covers truth", raw_cover, raw_se, "", None)
            figures.append(covers)
        figures.append(
            Figure(f"{label}: length-controlled covers truth (sandwich)", cover, cover_se,
                   "0.93-0.97", 0.93 <= cover <= 0.97)
        )  # fmt: skip
        # The interval summary.json uses: the item bootstrap, on the first `checked` runs.
        boot = np.array(
            [controlled_fits(y[k], d[k][:, None], ["length"], seed=k).ci95 for k in range(checked)]
        )
        boot_cover, boot_se = share((boot[:, 0] <= truth) & (truth <= boot[:, 1]))
        ratio = float(np.mean((boot[:, 1] - boot[:, 0]) / (ci[:checked, 1] - ci[:checked, 0])))
        figures.append(
            Figure(f"{label}: bootstrap covers truth ({checked} runs)", boot_cover, boot_se,
                   "0.93-0.97 ± 2 SE", 0.93 - 2 * boot_se <= boot_cover <= 0.97 + 2 * boot_se)
        )  # fmt: skip
        figures.append(
            Figure(f"{label}: bootstrap width / sandwich width", ratio, None, "0.95-1.05",
                   0.95 <= ratio <= 1.05)
        )  # fmt: skip
    raw_w, ctl_w = widths["no length effect"]
    figures.append(Figure("no length effect: raw interval width", raw_w, None, "", None))
    figures.append(Figure("no length effect: controlled interval width", ctl_w, None, "", None))
    figures.append(
        Figure("no length effect: controlled width / raw width", ctl_w / raw_w, None, "stated",
               None)
    )  # fmt: skip
    return figures


def scenario_b(rng: np.random.Generator, runs: int) -> list[Figure]:
    print(f"(b) PPI++: {LABELS} labels of {ROWS} rows, {runs} runs", flush=True)
    truth = 0.5
    human = rng.random((runs, ROWS)) < truth
    says_candidate = np.where(human, 0.85, 0.35)
    judge = (rng.random((runs, ROWS)) < says_candidate).astype(float)
    results = []
    for k in range(runs):
        labelled = rng.choice(ROWS, LABELS, replace=False)
        results.append(ppi_mean(judge[k], judge[k, labelled], human[k, labelled].astype(float)))
    ppi = np.array([r.ci95 for r in results])
    judge_only = np.array([r.judge_only.ci95 for r in results])
    human_only = np.array([r.human_only.ci95 for r in results])
    agree = float(np.mean(judge == human))
    over = float(judge.mean() - human.mean())
    cover, cover_se = share((ppi[:, 0] <= truth) & (truth <= ppi[:, 1]))
    j_cover, j_se = share((judge_only[:, 0] <= truth) & (truth <= judge_only[:, 1]))
    h_cover, h_se = share((human_only[:, 0] <= truth) & (truth <= human_only[:, 1]))
    ppi_w = float(np.mean(ppi[:, 1] - ppi[:, 0]))
    human_w = float(np.mean(human_only[:, 1] - human_only[:, 0]))
    effective = float(np.mean([r.effective_labels for r in results]))
    lam = float(np.mean([r.lam for r in results]))
    return [
        Figure("judge agrees with humans (share of rows)", agree, None, "about 0.75", None),
        Figure("judge over-rates the candidate (points)", over * 100, None, "about 10", None),
        Figure("PPI++ covers the human value", cover, cover_se, "0.93-0.97", 0.93 <= cover <= 0.97),
        Figure("judge-only covers it", j_cover, j_se, "< 0.10", j_cover < 0.10),
        Figure("human-only covers it", h_cover, h_se, "", None),
        Figure("PPI++ interval width", ppi_w, None, "< human-only", ppi_w < human_w),
        Figure("human-only interval width", human_w, None, "about 0.139", None),
        Figure("PPI++ worth (effective labels)", effective, None, "> 200", effective > LABELS),
        Figure("mean lambda", lam, None, "", None),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="200 runs per scenario")
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--json", default=None, help="also write the figures to this file")
    args = parser.parse_args()
    runs = args.runs or (200 if args.quick else 1000)
    checked = 20 if args.quick else 100
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    figures = {"a": scenario_a(rng, runs, checked), "b": scenario_b(rng, runs)}
    for name, rows in figures.items():
        print(f"scenario {name}")
        for figure in rows:
            print(figure.line())
    print(f"{time.perf_counter() - start:.0f} s")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({k: [f.__dict__ for f in v] for k, v in figures.items()}, out, indent=2)
    failed = [f.name for rows in figures.values() for f in rows if f.ok is False]
    print("FAIL: " + "; ".join(failed) if failed else "all targets PASS")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
