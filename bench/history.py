"""`chatjudge history` over many runs: 100 runs of 10,000 items each (DESIGN §18: ≤ 10 s).

One run of N items is judged by the engine with a Python judge; the other runs are copies of
it in which a share of the items changed verdict (each copy's `results.jsonl` rewritten line
by line, its summary's time moved on), so the runs pair by id as releases of one dataset do.
Then `history` reads them all and computes every step's paired difference (bootstrap capped
at 2,000 resamples). Prints the wall and CPU seconds and the ratio to the 10 s target.

    python bench/history.py                 # 100 runs x 10,000 items
    python bench/history.py --runs 20 --items 2000
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

import chatjudge
from chatjudge.analysis.history import history

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.summarize.test_tries import RESOLVED, resolved_judge  # noqa: E402 - the test's protocol

TARGET_S = 10.0


def first_run(work: Path, items: int) -> tuple[Path, Path]:
    protocol = work / "resolved.toml"
    protocol.write_text(RESOLVED, encoding="utf-8")
    rows = [{"id": f"r{i}", "chat": "OK" if i % 5 else "no", "tier": "ab"[i % 2]}
            for i in range(items)]  # fmt: skip
    out = work / "run-000"
    chatjudge.evaluate(rows, protocol, judge=resolved_judge, out=out, report=False)
    return protocol, out


def copies(first: Path, runs: int, changed: float, seed: int) -> list[Path]:
    """`runs - 1` releases after `first`, each with a share `changed` of verdicts flipped."""
    rng = random.Random(seed)
    lines = (first / "results.jsonl").read_text(encoding="utf-8").splitlines()
    summary = json.loads((first / "summary.json").read_text(encoding="utf-8"))
    made = [first]
    for k in range(1, runs):
        run = first.parent / f"run-{k:03d}"
        shutil.copytree(first, run, ignore=shutil.ignore_patterns("calls.sqlite*"))
        lines = [_flip(line) if rng.random() < changed else line for line in lines]
        (run / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        moved = {**summary, "created": f"2026-01-01T00:{k // 60:02d}:{k % 60:02d}+00:00"}
        (run / "summary.json").write_text(json.dumps(moved), encoding="utf-8")
        made.append(run)
    return made


def _flip(line: str) -> str:
    one, zero = '"resolved":1', '"resolved":0'
    return line.replace(one, "\0").replace(zero, one).replace("\0", zero)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="chatjudge-history-"))
    try:
        protocol, first = first_run(work, args.items)
        runs = copies(first, args.runs, 0.02, seed=1)
        cpu0, wall0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        found = history([str(r) for r in runs], protocol=protocol)
        wall = time.perf_counter() - wall0
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
        cpu = cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime
    finally:
        shutil.rmtree(work, ignore_errors=True)
    assert len(found.steps) == args.runs - 1
    figures = {"runs": args.runs, "items": args.items, "wall_s": wall, "cpu_s": cpu,
               "target_s": TARGET_S, "wall_over_target": wall / TARGET_S}  # fmt: skip
    print(f"history of {args.runs} runs x {args.items:,} items: {wall:.2f} s wall, "
          f"{cpu:.2f} s CPU; target {TARGET_S:.0f} s "
          f"(wall / target {wall / TARGET_S:.2f})")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(figures), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
