"""The CPU of `chatjudge realism`'s comparison and statistics, model calls aside: issue 43's
target is 10,000 goals (K = 3) in at most 10 s of CPU.

The goals are the scripted users of `bench/realism_scripts.py` (the real ones `mixed`, the
simulator `polite`), with every measure present: disclosure and pushback marks, the
discriminator's verdicts in both orders and one protocol metric. What is timed is
`chatjudge.user_realism.statistics.compare` (the behaviours, uniformity's pairwise similarities over
2 x 10,000 users, 2,000 relabellings a test, Holm), as process CPU (every thread), the least
of `--repeat` runs, with one OpenBLAS thread as the CLI has.

    python bench/realism.py                 # 10,000 goals, K = 3
    python bench/realism.py --goals 2000 --repeat 1
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the CLI sets it (chatjudge.cli)

from realism_scripts import goal_sample  # noqa: E402

from chatjudge.user_realism.sample import GoalSample  # noqa: E402
from chatjudge.user_realism.statistics import compare  # noqa: E402

TARGET_S = 10.0


def goals(n: int, k: int, seed: int) -> list[GoalSample]:
    rng = random.Random(seed)
    made = []
    for i in range(n):
        goal = goal_sample(f"g{i}", "mixed", "polite", k, rng)
        real = replace(goal.real, metrics={"interactivity": rng.random()})
        simulated = tuple(
            replace(s, metrics={"interactivity": rng.random()}) for s in goal.simulated
        )
        made.append(replace(goal, real=real, simulated=simulated))
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--goals", type=int, default=10_000)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    data = goals(args.goals, args.k, seed=0)
    cpu = []
    for r in range(args.repeat):
        started = time.process_time()
        found = compare(data, seed=r)
        cpu.append(time.process_time() - started)
    best = min(cpu)
    measures = len(found.behaviours) + len(found.metric_gaps) + (found.discriminator is not None)
    print(
        f"{args.goals} goals, K = {args.k}, {measures} measures: {best:.2f} s CPU (least of "
        f"{args.repeat}: {', '.join(f'{c:.2f}' for c in cpu)}); "
        f"target {TARGET_S:.0f} s: ratio {best / TARGET_S:.2f} "
        f"({'ok' if best <= TARGET_S else 'MISSED'})"
    )


if __name__ == "__main__":
    main()
