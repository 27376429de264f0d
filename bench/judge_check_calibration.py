"""Calibration of the gate's judge check (`chatjudge.stats.judge_change`, what `gate` runs
when both runs judged the same `--judge-check` file), with a noisy stand-in judge.

The stand-in: each check item has a reference verdict among three (a pairwise choice) and
a chance q of giving it, drawn from a Beta with mean 0.85 and concentration 4; otherwise
it gives one of the two others, uniformly. A "change" moves a share p of the items (exactly
round(p n)) to another verdict chosen uniformly, which the changed judge then gives with
the item's same q. Each run asks every item `samples` times.

(a) False alarms with no change, at 30, 50, 100 and 200 items: at most 1% + 2 Monte Carlo
    SE (the level is 0.01).
(b) Detection at p = 0.2, 100 items, 3 samples: at least 80%; and what 30 and 50 items
    detect (p from 0.1 to 0.5).

    PYTHONPATH=src:. python bench/judge_check_calibration.py [--null-runs 1000]
        [--power-runs 300] [--resamples 2000]
"""

from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np

from chatjudge.stats.judge_change import change_p_value

LEVEL = 0.01
VERDICTS = 3


def run_verdicts(
    rng: np.random.Generator, centres: np.ndarray, q: np.ndarray, samples: int
) -> list[list[int]]:
    """Each item's verdicts: its centre with chance q, else one of the others uniformly."""
    other = (centres[:, None] + rng.integers(1, VERDICTS, (len(centres), samples))) % VERDICTS
    keep = rng.random((len(centres), samples)) < q[:, None]
    verdicts: list[list[int]] = np.where(keep, centres[:, None], other).tolist()
    return verdicts


def alarm(rng: np.random.Generator, n: int, p: float, samples: int, resamples: int) -> bool:
    q = rng.beta(0.85 * 4, 0.15 * 4, n)
    reference = rng.integers(0, VERDICTS, n)
    moved = reference.copy()
    chosen = rng.choice(n, round(p * n), replace=False)
    moved[chosen] = (reference[chosen] + rng.integers(1, VERDICTS, len(chosen))) % VERDICTS
    before = run_verdicts(rng, reference, q, samples)
    after = run_verdicts(rng, moved, q, samples)
    seed = int(rng.integers(1 << 31))
    return change_p_value(before, after, resamples=resamples, seed=seed) <= LEVEL


def rate(runs: int, n: int, p: float, samples: int, resamples: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    hits = sum(alarm(rng, n, p, samples, resamples) for _ in range(runs))
    share = hits / runs
    return {"n": n, "p": p, "samples": samples, "runs": runs, "rate": round(share, 4),
            "mc_se": round(math.sqrt(max(share, LEVEL) * (1 - share) / runs), 4)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--null-runs", type=int, default=1000)
    parser.add_argument("--power-runs", type=int, default=300)
    parser.add_argument("--resamples", type=int, default=2000)
    args = parser.parse_args()
    start = time.perf_counter()
    out: dict[str, list[dict]] = {"false_alarms": [], "detection": []}
    for n in (30, 50, 100, 200):
        found = rate(args.null_runs, n, 0.0, 3, args.resamples, seed=n)
        found["within_bound"] = found["rate"] <= LEVEL + 2 * found["mc_se"]
        out["false_alarms"].append(found)
        print(json.dumps(found), flush=True)
    for n, p in [(100, 0.2), (30, 0.1), (30, 0.2), (30, 0.3), (30, 0.5), (50, 0.1), (50, 0.2),
                 (50, 0.3)]:  # fmt: skip
        found = rate(args.power_runs, n, p, 3, args.resamples, seed=1000 + n + int(100 * p))
        out["detection"].append(found)
        print(json.dumps(found), flush=True)
    print(f"{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
