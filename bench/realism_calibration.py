"""Does `chatjudge realism` claim only what is there? Issue 43's cases with the scripted
users of `bench/realism_scripts.py` (no model, no network), at the record level (the
statistics on scripted `GoalSample`s) or, with `--pipeline`, through the whole command
(`chatjudge.realism(...)` with Python function models in every role, goals re-extracted
from the real conversations: `bench/realism_pipeline.py`):

(a) no false claims: the real and the simulated users come from one generator (`mixed`); a
    claim (any measure or the discriminator) in <= 5% + 2 MC SE of runs, at 10, 30, 50 and
    100 goals;
(b) detection: the real user is `terse`, the simulator `polite`; disclosure, words per message,
    uniformity and the discriminator claimed in >= 80% of runs at 50 goals.

    python bench/realism_calibration.py                 # both cases, 400 runs (a), 200 (b)
    python bench/realism_calibration.py --runs-a 100 --runs-b 50 --k 3
    python bench/realism_calibration.py --pipeline --workers 2
"""

from __future__ import annotations

import argparse
import math
import os
import random
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the CLI sets it (chatjudge.cli)

from realism_scripts import goal_sample  # noqa: E402

from chatjudge.formats.realism import Realism  # noqa: E402
from chatjudge.user_realism.statistics import compare  # noqa: E402

DETECTED = ("disclosure", "words_per_message", "uniformity")
Job = tuple[bool, int, str, str, int, int]  # pipeline, goals, real, simulated, K, seed


def records(n_goals: int, real: str, simulated: str, k: int, seed: int) -> Realism:
    rng = random.Random(seed)
    goals = [goal_sample(f"g{i}", real, simulated, k, rng) for i in range(n_goals)]
    return compare(goals, seed=seed)


def claims(found: Realism) -> set[str]:
    names = {f"metric:{n}" for n, m in found.metric_gaps.items() if m.claimed}
    names |= {n for n, m in found.behaviours.items() if m.claimed}
    if found.discriminator is not None and found.discriminator.claimed:
        names.add("discriminator")
    return names


def one_run(job: Job) -> tuple[set[str], float]:
    """A run's claims and the CPU seconds it took (in the process that ran it)."""
    pipeline, *args = job
    started = time.process_time()
    if pipeline:
        from realism_pipeline import run_pipeline

        found = claims(run_pipeline(*args))
    else:
        found = claims(records(*args))
    return found, time.process_time() - started


Runs = Callable[[list[Job]], list[tuple[set[str], float]]]


def share(hits: int, runs: int) -> tuple[float, float]:
    p = hits / runs
    return p, math.sqrt(p * (1 - p) / runs) if runs else math.nan


def case_a(sizes: list[int], runs: int, k: int, pipeline: bool, map_runs: Runs) -> bool:
    print(f"(a) one generator for both sides, K = {k}, {runs} runs a size")
    ok = True
    for n in sizes:
        done = map_runs([(pipeline, n, "mixed", "mixed", k, 1000 * n + r) for r in range(runs)])
        hits = 0
        by_measure: dict[str, int] = {}
        for found, _ in done:
            hits += bool(found)
            for name in found:
                by_measure[name] = by_measure.get(name, 0) + 1
        rate, se = share(hits, runs)
        bound = 0.05 + 2 * math.sqrt(0.05 * 0.95 / runs)
        ok &= rate <= bound
        print(
            f"  {n:>4} goals: a claim in {rate:6.1%} ± {se:.1%} of runs (target <= {bound:.1%}: "
            f"{'ok' if rate <= bound else 'MISSED'}); by measure {by_measure or '{}'}; "
            f"{sum(cpu for _, cpu in done) / runs * 1000:.0f} ms CPU a run"
        )
    return ok


def case_b(n: int, runs: int, k: int, pipeline: bool, map_runs: Runs) -> bool:
    print(f"(b) terse real users, polite simulator, {n} goals, K = {k}, {runs} runs")
    counts = dict.fromkeys((*DETECTED, "discriminator"), 0)
    done = map_runs([(pipeline, n, "terse", "polite", k, 7_000_000 + r) for r in range(runs)])
    for found, _ in done:
        for name in counts:
            counts[name] += name in found
    ok = True
    for name, hits in counts.items():
        rate, se = share(hits, runs)
        ok &= rate >= 0.8
        print(f"  {name:<18} claimed in {rate:6.1%} ± {se:.1%} (target >= 80%)")
    cpu = sum(cpu for _, cpu in done) / runs * 1000
    print(f"  {cpu:.0f} ms CPU a run")
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 30, 50, 100])
    parser.add_argument("--runs-a", type=int, default=400)
    parser.add_argument("--runs-b", type=int, default=200)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument(
        "--pipeline", action="store_true", help="each run through chatjudge.realism(...)"
    )
    parser.add_argument("--workers", type=int, default=1, help="processes running the runs")
    args = parser.parse_args()
    started, wall = time.process_time(), time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:

        def map_runs(jobs: list[Job]) -> list[tuple[set[str], float]]:
            if args.workers == 1:
                return [one_run(job) for job in jobs]
            return list(pool.map(one_run, jobs, chunksize=4))

        ok = case_a(args.sizes, args.runs_a, args.k, args.pipeline, map_runs)
        ok &= case_b(50, args.runs_b, args.k, args.pipeline, map_runs)
    print("all targets met" if ok else "a target MISSED")
    print(f"{time.perf_counter() - wall:.0f} s wall", end="")
    print(f", {time.process_time() - started:.0f} s CPU here" if args.workers == 1 else "")


if __name__ == "__main__":
    main()
