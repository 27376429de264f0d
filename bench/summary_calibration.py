"""Coverage of the summary's 95% intervals (`chatjudge.stats.intervals`) at small n, exactly.

    python bench/summary_calibration.py            # n = 2..30, 50 and 100 (about 2 CPU-minutes)
    python bench/summary_calibration.py --sizes 2,8,30

Each cell is a sample size and a distribution of one item's value: a 0/1 share at
p in {0.02, 0.1, 0.5}, and 1-3 scores piled on one value (90% at 1, 5% each at 2 and 3;
80% at 3, 15% at 2, 5% at 1) or spread (50/30/20%). The interval of a sample depends only
on how often each value occurs (the bootstrap's resampling too, given its seed), so the
coverage is not simulated: it is the sum, over every count of each value, of the
multinomial probability of the counts where the summary's interval of that sample holds
the true mean. Counts less likely than 1e-9 are left out and counted as misses (a lower
bound). The intervals are those `chatjudge run` writes: `bootstrap_metrics` (2,000
resamples, seed 0) guarded by `stats.intervals.guard` for the metric's range.

Target: coverage >= 0.93 in every cell; the exit status is 1 when a cell misses it.
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time

import numpy as np

from chatjudge.stats import bootstrap_metrics
from chatjudge.stats.intervals import SHARE, Range, guard

SIZES = [*range(2, 31), 50, 100]
SHARES = (0.02, 0.1, 0.5)
SCORES = {
    "1-3 piled at 1 (.90/.05/.05)": (0.90, 0.05, 0.05),
    "1-3 piled at 3 (.05/.15/.80)": (0.05, 0.15, 0.80),
    "1-3 spread (.50/.30/.20)": (0.50, 0.30, 0.20),
}
TARGET = 0.93
SMALLEST = 1e-9  # counts less likely than this are left out (counted as misses)


def interval(values: np.ndarray, known: Range) -> tuple[float, float] | None:
    """The summary's interval of one metric's column, as `summarize.run_summary` computes it."""
    found = bootstrap_metrics({"m": values})["m"]
    return guard(found, values, known).ci95


def share_coverage(n: int, p: float) -> tuple[float, float]:
    """Coverage of a 0/1 share and the interval's mean width, over every count of ones."""
    covered = width = 0.0
    for ones in range(n + 1):
        prob = math.comb(n, ones) * p**ones * (1 - p) ** (n - ones)
        if prob < SMALLEST:
            continue
        ci = interval(np.r_[np.ones(ones), np.zeros(n - ones)], SHARE)
        assert ci is not None
        covered += prob * (ci[0] <= p <= ci[1])
        width += prob * (ci[1] - ci[0])
    return covered, width


def score_coverage(n: int, probs: tuple[float, float, float]) -> tuple[float, float]:
    """Coverage of a mean of 1-3 scores and its mean width, over every count of 1, 2 and 3."""
    truth = float(np.dot(probs, (1, 2, 3)))
    known = Range(1.0, 3.0)
    covered = width = 0.0
    for a, b in itertools.product(range(n + 1), repeat=2):
        c = n - a - b
        if c < 0:
            continue
        log_prob = (
            math.lgamma(n + 1) - math.lgamma(a + 1) - math.lgamma(b + 1) - math.lgamma(c + 1)
            + sum(k * math.log(q) for k, q in zip((a, b, c), probs, strict=True))
        )  # fmt: skip
        prob = math.exp(log_prob)
        if prob < SMALLEST:
            continue
        ci = interval(np.repeat([1.0, 2.0, 3.0], (a, b, c)), known)
        if ci is None:
            continue
        covered += prob * (ci[0] <= truth <= ci[1])
        width += prob * (ci[1] - ci[0])
    return covered, width


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="comma-separated n")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    started = time.process_time()
    cells: list[tuple[str, int, float, float]] = []
    for p in SHARES:
        cells += [(f"0/1 share p={p}", n, *share_coverage(n, p)) for n in sizes]
    for name, probs in SCORES.items():
        cells += [(name, n, *score_coverage(n, probs)) for n in sizes]
    print(f"{'distribution':32} {'n':>4} {'coverage':>9} {'width':>7}")
    for name, n, covered, width in cells:
        flag = "" if covered >= TARGET else "  MISSED"
        print(f"{name:32} {n:>4} {covered:>9.4f} {width:>7.3f}{flag}")
    worst = sorted(cells, key=lambda c: c[2])[:5]
    print("\nworst cells:")
    for name, n, covered, width in worst:
        print(f"  {name}, n = {n}: coverage {covered:.4f}, mean width {width:.3f}")
    missed = [c for c in cells if c[2] < TARGET]
    print(
        f"\n{len(cells)} cells, {len(missed)} under {TARGET}; "
        f"{time.process_time() - started:.0f} CPU s"
    )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
