"""What `chatjudge run -p tool-trajectory` costs on 100,000 items: the whole command.

Writes N synthetic rows (a trajectory of 1-4 tool calls with their results, 1-4 expected
calls, a mix of the five match modes and of comparators, a tenth of the rows with a call
that two expected calls could take, so that the bipartite matching runs), then runs
`chatjudge run DATA -p tool-trajectory --out DIR` as its own process: reading and checking
every row, scoring, results.jsonl, summary.json with its bootstrap intervals, report.html.
Prints the wall time, the CPU seconds of the process (user + sys, from `wait4`: the machine
may be shared, CPU is what the command itself spent), the rate, and the ratio to the target
of issue 31 (10 s for 100,000 items on the 2-core machine; not enforced).

    python bench/tool_trajectory.py [--n 100000] [--repeat 1] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TARGET_S = 10.0  # issue 31: 100,000 items, the whole command
MODES = ["exact", "in-order", "any-order", "superset", "subset"]
TOOLS = ["get_weather", "search", "book_flight", "send_email", "lookup_user"]


def _row(rng: random.Random, i: int) -> dict[str, Any]:
    calls = [(rng.choice(TOOLS), {"q": f"v{rng.randint(0, 3)}", "n": rng.randint(1, 3)})
             for _ in range(rng.randint(1, 4))]  # fmt: skip
    expected: list[dict[str, Any]] = []
    for name, arguments in calls:
        if rng.random() < 0.8:  # the call as made, else one it did not make
            expected.append({"name": name, "arguments": dict(arguments)})
        else:
            expected.append({"name": rng.choice(TOOLS), "arguments": {"q": "v9", "n": 1}})
    if rng.random() < 0.3:
        expected[0]["compare"] = {"n": {"tolerance": 1}, "q": {"regex": "v[0-9]"}}
    if rng.random() < 0.1:  # a lenient expected call that could take the strict one's call
        expected.insert(0, {"name": calls[0][0], "compare": {"q": "ignore", "n": "ignore"}})
    messages: list[dict[str, Any]] = []
    for k, (name, arguments) in enumerate(calls):
        function = {"name": name, "arguments": json.dumps(arguments)}
        call = {"id": f"c{k}", "type": "function", "function": function}
        messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{k}", "content": "result " * 5})
    messages.append({"role": "assistant", "content": "Here is what I found."})
    return {"id": f"r{i}", "response_trajectory": messages, "expected_tool_calls": expected,
            "match": rng.choice(MODES)}  # fmt: skip


def write_rows(path: Path, n: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    with path.open("w") as out:
        for i in range(n):
            out.write(json.dumps(_row(rng, i)) + "\n")


def run_once(data: Path, out: Path) -> tuple[float, float]:
    """The command's wall time and CPU seconds."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "chatjudge.cli", "run", str(data), "-p", "tool-trajectory",
         "--out", str(out), "--overwrite", "--quiet"],
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"chatjudge run failed (status {status})")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="rows")
    parser.add_argument("--repeat", type=int, default=1, help="runs (the median is shown)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        data = root / "rows.jsonl"
        write_rows(data, args.n)
        runs = sorted(run_once(data, root / "run") for _ in range(args.repeat))
        wall, cpu = runs[len(runs) // 2]
        summary = json.loads((root / "run" / "summary.json").read_text())
        figures = {
            "rows": args.n,
            "wall_s": round(wall, 2),
            "cpu_s": round(cpu, 2),
            "items_per_s": round(args.n / wall),
            "data_mb": round(data.stat().st_size / 1e6, 1),
            "results_mb": round((root / "run" / "results.jsonl").stat().st_size / 1e6, 1),
            "report_mb": round((root / "run" / "report.html").stat().st_size / 1e6, 1),
            "trajectory_match": summary["metrics"]["trajectory_match"]["value"],
            "target_s": TARGET_S * args.n / 100_000,
        }
    if args.json:
        print(json.dumps(figures))
        return
    target = figures["target_s"]
    print(f"rows: {args.n:,} ({figures['data_mb']} MB of JSONL)")
    print(f"wall: {wall:.2f} s ({figures['items_per_s']:,} items/s); CPU: {cpu:.2f} s")
    print(f"wrote: results {figures['results_mb']} MB, report {figures['report_mb']} MB")
    verdict = "ok" if wall <= target else "MISSED"
    print(f"target {target:.1f} s: wall / target = {wall / target:.2f} ({verdict}); "
          f"CPU / target = {cpu / target:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
