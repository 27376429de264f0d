"""Do `chatjudge history`'s own statistics hold? Its two that the gate does not already check:

(a) the unpaired step (runs that share no ids): the difference of two summaries' values with
    the normal interval of two independent estimates, each one's se read off its 95% interval
    (Clopper-Pearson, as a summary gives a 0/1 metric). Coverage of the true difference, at
    sizes from 1 to 1,000 items a run, degenerate shares (0 and 1) included, and the width
    against the oracle's (1.96 times the true se of the difference of two shares);
(b) `--all-steps`: a stable system (every run's items drawn from the same chances) gated over
    19 steps with Holm. A regression flagged anywhere is a false alarm; the family-wise rate
    should stay at or below 2.5% (one-sided, as a 95% interval's upper end) + 2 MC SE, at
    small and realistic sizes.

The latest-only decision is the gate's own rule, calibrated by `bench/gate_calibration.py`.

    python bench/history_calibration.py              # (a) 2,000 draws a cell, (b) 1,000 lines
    python bench/history_calibration.py --draws 500 --lines 300
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

from chatjudge.analysis.gate.units import Row, RunRows, Scale
from chatjudge.analysis.history import ALPHA, _p, _unpaired, decide
from chatjudge.formats.analyses import GateDifference
from chatjudge.formats.history import HistoryStep
from chatjudge.formats.shared import Metric
from chatjudge.stats.intervals import clopper_pearson
from chatjudge.stats.paired import paired_difference

SIZES_A = (1, 2, 3, 5, 10, 30, 100, 1000)
SHARES = ((0.0, 0.0), (1.0, 1.0), (0.05, 0.05), (0.5, 0.5), (0.2, 0.5), (0.9, 0.7))
SIZES_B = (5, 30, 200)
RUNS = 20


def _step() -> HistoryStep:
    return HistoryStep(before="a", after="b", metric="m", difference=None, n_pairs=0,
                       paired=False, judge_changed=None, decided=False,
                       regression=False)  # fmt: skip


def _run(ones: int, n: int) -> tuple[RunRows, Metric]:
    """A run of n 0/1 items, `ones` of them 1, and its summary's metric (Clopper-Pearson)."""
    run = RunRows(Path("."), None, None, Scale(0.0, 1.0, (0.0, 1.0)))  # type: ignore[arg-type]
    for i in range(n):
        value = float(i < ones)
        run.rows[str(i)] = Row(str(i), str(i), True, (value,), {})
    return run, Metric(value=ones / n, ci95=list(clopper_pearson(ones, n)), n=n)


def unpaired_cell(n: int, p: tuple[float, float], draws: int, rng: np.random.Generator) -> tuple:
    """Coverage of the unpaired interval and its mean width against the oracle's."""
    truth = p[1] - p[0]
    covered, widths = 0, []
    for _ in range(draws):
        (ra, x), (rb, y) = (_run(int(rng.binomial(n, q)), n) for q in p)
        d = _unpaired(_step(), (ra, rb), (x, y)).difference
        assert d is not None
        lo, hi = d.ci95
        covered += lo - 1e-12 <= truth <= hi + 1e-12
        widths.append(hi - lo)
    oracle = 2 * 1.959964 * math.sqrt(sum(q * (1 - q) / n for q in p))
    return covered / draws, float(np.mean(widths)), oracle


def false_alarms(n: int, lines: int, rng: np.random.Generator) -> float:
    """The share of stable lines of RUNS runs in which `--all-steps` flags any step."""
    flagged = 0
    for _ in range(lines):
        chances = rng.beta(2, 2, size=n)  # each item's own chance, the same in every run
        runs = (rng.random((RUNS, n)) < chances).astype(float)
        steps, at = [], {}
        for k in range(1, RUNS):
            diff = paired_difference(
                runs[k],
                runs[k - 1],
                boundary=0.0,
                n_resamples=200,
                seed=k,
                bounds=(-1.0, 1.0),
                three_point=True,
            )  # as the gate pairs 0/1 rows
            step = _step()
            step.paired = True
            step.difference = GateDifference(value=diff.value, ci95=list(diff.ci95))
            step.p = _p(diff.value, diff.se, 0.0)
            steps.append(step)
            at[id(step)] = (runs[k], runs[k - 1], k)

        def interval_at(step: HistoryStep, level: float, at: dict = at) -> list[float]:
            cand, base, k = at[id(step)]
            found = paired_difference(cand, base, level=level, boundary=0.0, n_resamples=200,
                                      seed=k, bounds=(-1.0, 1.0), three_point=True)  # fmt: skip
            return list(found.ci95)

        flagged += any(s.regression for s in decide(steps, 0.0, True, interval_at))
    return flagged / lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--draws", type=int, default=2000, help="(a): draws per cell")
    parser.add_argument("--lines", type=int, default=1000, help="(b): stable lines per size")
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    worst = 1.0
    print("(a) unpaired step: coverage of the true difference (target >= 0.95 - 2 MC SE)")
    print("    n   shares        coverage  width  oracle  width/oracle")
    for n in SIZES_A:
        for p in SHARES:
            cover, width, oracle = unpaired_cell(n, p, args.draws, rng)
            worst = min(worst, cover)
            ratio = f"{width / oracle:.2f}" if oracle > 0 else "  -"
            print(
                f"{n:5d}   {p[0]:.2f}->{p[1]:.2f}   {cover:.3f}   {width:.3f}  {oracle:.3f}"
                f"   {ratio}"
            )
    se = math.sqrt(0.95 * 0.05 / args.draws)
    ok_a = worst >= 0.95 - 2 * se
    print(
        f"    least coverage {worst:.3f} (bound {0.95 - 2 * se:.3f}): {'ok' if ok_a else 'MISSED'}"
    )
    print(f"(b) --all-steps on a stable line of {RUNS} runs: family-wise false alarms")
    ok_b = True
    for n in SIZES_B:
        rate = false_alarms(n, args.lines, rng)
        bound = ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / args.lines)
        ok_b &= rate <= bound
        print(f"    {n:4d} items a run: {rate:.3%} of {args.lines} lines (bound {bound:.3%})")
    print("all targets met" if ok_a and ok_b else "a target MISSED")
    return 0 if ok_a and ok_b else 1


if __name__ == "__main__":
    sys.exit(main())
