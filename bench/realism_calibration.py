"""Does `chatjudge realism` claim only what is there? Issue 43's cases at the record level,
with the scripted users of `bench/realism_scripts.py` (no model, no network):

(a) no false claims: the real and the simulated users come from one generator (`mixed`); a
    claim (any measure or the discriminator) in <= 5% + 2 MC SE of runs, at 10, 30, 50 and
    100 goals;
(b) detection: the real user is `terse`, the simulator `polite`; disclosure, words per message,
    uniformity and the discriminator claimed in >= 80% of runs at 50 goals.

    python bench/realism_calibration.py                 # both cases, 400 runs (a), 200 (b)
    python bench/realism_calibration.py --runs-a 100 --runs-b 50 --k 3
"""

from __future__ import annotations

import argparse
import math
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the CLI sets it (chatjudge.cli)

from realism_scripts import goal_sample  # noqa: E402

from chatjudge.formats.realism import Realism  # noqa: E402
from chatjudge.user_realism.statistics import compare  # noqa: E402

DETECTED = ("disclosure", "words_per_message", "uniformity")


def run(n_goals: int, real: str, simulated: str, k: int, seed: int) -> Realism:
    rng = random.Random(seed)
    goals = [goal_sample(f"g{i}", real, simulated, k, rng) for i in range(n_goals)]
    return compare(goals, seed=seed)


def claims(found: Realism) -> set[str]:
    names = {f"metric:{n}" for n, m in found.metric_gaps.items() if m.claimed}
    names |= {n for n, m in found.behaviours.items() if m.claimed}
    if found.discriminator is not None and found.discriminator.claimed:
        names.add("discriminator")
    return names


def share(hits: int, runs: int) -> tuple[float, float]:
    p = hits / runs
    return p, math.sqrt(p * (1 - p) / runs) if runs else math.nan


def case_a(sizes: list[int], runs: int, k: int) -> bool:
    print(f"(a) one generator for both sides, K = {k}, {runs} runs a size")
    ok = True
    for n in sizes:
        started = time.process_time()
        hits = 0
        by_measure: dict[str, int] = {}
        for r in range(runs):
            found = claims(run(n, "mixed", "mixed", k, seed=1000 * n + r))
            hits += bool(found)
            for name in found:
                by_measure[name] = by_measure.get(name, 0) + 1
        rate, se = share(hits, runs)
        bound = 0.05 + 2 * math.sqrt(0.05 * 0.95 / runs)
        ok &= rate <= bound
        print(
            f"  {n:>4} goals: a claim in {rate:6.1%} ± {se:.1%} of runs (target <= {bound:.1%}: "
            f"{'ok' if rate <= bound else 'MISSED'}); by measure {by_measure or '{}'}; "
            f"{(time.process_time() - started) / runs * 1000:.0f} ms CPU a run"
        )
    return ok


def case_b(n: int, runs: int, k: int) -> bool:
    print(f"(b) terse real users, polite simulator, {n} goals, K = {k}, {runs} runs")
    counts = dict.fromkeys((*DETECTED, "discriminator"), 0)
    for r in range(runs):
        found = claims(run(n, "terse", "polite", k, seed=7_000_000 + r))
        for name in counts:
            counts[name] += name in found
    ok = True
    for name, hits in counts.items():
        rate, se = share(hits, runs)
        ok &= rate >= 0.8
        print(f"  {name:<18} claimed in {rate:6.1%} ± {se:.1%} (target >= 80%)")
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 30, 50, 100])
    parser.add_argument("--runs-a", type=int, default=400)
    parser.add_argument("--runs-b", type=int, default=200)
    parser.add_argument("--k", type=int, default=3)
    args = parser.parse_args()
    ok = case_a(args.sizes, args.runs_a, args.k)
    ok &= case_b(50, args.runs_b, args.k)
    print("all targets met" if ok else "a target MISSED")


if __name__ == "__main__":
    main()
