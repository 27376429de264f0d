"""What `chatjudge merge` costs: N shard runs of one dataset, then their merge, timed.

The shards are judged in this process by a Python callable (no model, no network: the
judging is not what is measured); the merge joins their run directories (results in input
order, one store, summary, report) as `chatjudge merge` does. Prints the merge's wall time,
its rate in items/s and the size of what it wrote, next to the unsharded run's time.

    python bench/merge_shards.py [--n 20000] [--shards 4] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_engine import write_dataset  # noqa: E402

import chatjudge  # noqa: E402
from chatjudge.merge import merge  # noqa: E402


def judge(prompt: str) -> str:
    """A verdict that varies with the prompt, so that the summary has intervals to compute."""
    rng = random.Random(prompt)
    i, a = rng.randint(1, 3), rng.randint(0, 1)
    return json.dumps(
        {"interactivity": {"thought": "t", "score": i}, "accuracy": {"thought": "t", "score": a}}
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=20_000, help="rows")
    parser.add_argument("--shards", type=int, default=4, help="N")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        data = root / "rows.jsonl"
        write_dataset(data, args.n, seed=1)
        options: dict[str, Any] = {"judge": judge, "concurrency": 64}
        started = time.perf_counter()
        chatjudge.evaluate(data, out=root / "whole", **options)
        whole_s = time.perf_counter() - started
        shards = [root / f"shard{i}" for i in range(args.shards)]
        for i, out in enumerate(shards):
            chatjudge.evaluate(data, out=out, shard=f"{i}/{args.shards}", **options)
        started = time.perf_counter()
        merged = merge(shards, root / "merged")
        merge_s = time.perf_counter() - started
        written = sum(f.stat().st_size for f in (root / "merged").iterdir())
        figures = {
            "rows": args.n,
            "shards": args.shards,
            "unsharded_run_s": round(whole_s, 2),
            "merge_s": round(merge_s, 2),
            "merge_items_per_s": round(args.n / merge_s),
            "merged_mb": round(written / 1e6, 1),
            "n_items": merged.summary["n_items"],
        }
    if args.json:
        print(json.dumps(figures))
    else:
        for name, value in figures.items():
            print(f"{name:>20}: {value}")


if __name__ == "__main__":
    main()
