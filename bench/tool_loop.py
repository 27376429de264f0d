"""`chatjudge generate --tool-replay` against the stand-in OpenAI server as its own process:
each row's candidate calls a tool twice in sequence, its calls answered from the row's
recording, then answers (3 model calls a row, in a row).

With C rows in flight against a server of latency L, the ideal wall time is N * 3 * L / C.
This measures the ratio of that ideal to the real time while generating (the server's first
request to its last reply; target >= 0.9) and for the whole run, chatjudge's CPU per model
call (user + sys of the CLI process / calls) beside the same bench without tools (3N plain
rows: as many calls, one a row; target: within 10%), and the same command again (every
call from the store: nothing sent).

    python bench/tool_loop.py                  # N=2000, C=100, L=0.2 s (~1 minute)
    python bench/tool_loop.py --n 500
    python bench/tool_loop.py --repeat 3       # on a loaded machine: each one's best of 3

Run it with the interpreter of the environment chatjudge is installed in.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from run_engine import StubProcess, _wait  # noqa: E402 - the engine bench's server process

TARGET_RATIO = 0.9
TARGET_CPU = 1.10  # CPU per call with tools / without
STEPS = 2  # the stand-in calls the tool this many times, then answers


def tool_row(i: int) -> dict[str, Any]:
    """A row whose recorded baseline called `search` with the arguments the stand-in writes
    for its prompt (`{"query": prompt, "step": n}`), so that replay matches every call."""
    prompt = f"Row {i}: what is the status of order {100_000 + i}?"
    trajectory: list[dict[str, Any]] = []
    for step in range(1, STEPS + 1):
        arguments = json.dumps({"query": prompt, "step": step})
        call = {"id": f"c{step}", "type": "function",
                "function": {"name": "search", "arguments": arguments}}  # fmt: skip
        trajectory.append({"role": "assistant", "content": "", "tool_calls": [call]})
        trajectory.append({"role": "tool", "tool_call_id": f"c{step}",
                           "content": f"order {100_000 + i}: step {step} of shipping"})  # fmt: skip
    trajectory.append({"role": "assistant", "content": f"Order {100_000 + i} is on its way."})
    return {
        "id": f"t{i:05d}",
        "history": [{"role": "user", "content": f"Hi, customer {i} here."},
                    {"role": "assistant", "content": "Hello! How can I help?"}],  # fmt: skip
        "prompt": prompt,
        "tools": [{"type": "function", "function": {
            "name": "search", "description": "Look an order up.",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"},
                                                            "step": {"type": "integer"}}}}}],
        "baseline_trajectory": trajectory,
        "baseline_model_response": f"Order {100_000 + i} is on its way.",
    }  # fmt: skip


def plain_row(i: int) -> dict[str, Any]:
    row = tool_row(i)
    del row["tools"], row["baseline_trajectory"]
    return row


def write(path: Path, rows: Any) -> Path:
    with path.open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row) + "\n")
    return path


def run(cli: list[str], data: Path, out: Path, url: str, concurrency: int, *extra: str):
    command = [
        *cli, "generate", str(data), "--model", "openai/stub", "--base-url", url,
        "--field", "response", "--concurrency", str(concurrency), "--out", str(out),
        "--quiet", *extra,
    ]  # fmt: skip
    env = {**os.environ, "OPENAI_API_KEY": "dummy"}
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, env=env)
    code, end, usage = _wait(process, timeout=900)
    return code, end - start, usage.ru_utime + usage.ru_stime


def measure(
    cli: list[str], data: Path, out: Path, args: argparse.Namespace, *extra: str
) -> dict[str, Any]:
    server = StubProcess(args.latency, sys.executable)
    try:
        code, wall, cpu = run(cli, data, out, server.base_url, args.concurrency, *extra)
        stats = server.stats()
        rerun = run(cli, data, out, server.base_url, args.concurrency, *extra)
        resent = server.stats()["requests"] - stats["requests"]
    finally:
        server.stop()
    calls = stats["requests"]
    span = stats["last_reply_at"] - stats["first_request_at"]
    return {"code": code, "wall": wall, "cpu": cpu, "calls": calls, "span": span,
            "rerun": rerun, "resent": resent, "out": out}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=2000, help="rows with tools")
    parser.add_argument("--concurrency", type=int, default=100, help="C: rows at once")
    parser.add_argument("--latency", type=float, default=0.2, help="L: seconds per reply")
    parser.add_argument("--cli", default=f"{sys.executable} -m chatjudge.cli")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument(
        "--repeat", type=int, default=1, metavar="K",
        help="measure with and without tools K times, in turn, and keep each one's run of "
             "least CPU per call: other work on the machine only adds to it",
    )  # fmt: skip
    args = parser.parse_args()
    cli = args.cli.split()
    work = Path(tempfile.mkdtemp(prefix="chatjudge-bench-tools-"))
    n_calls = args.n * (STEPS + 1)
    tools = write(work / "tools.jsonl", (tool_row(i) for i in range(args.n)))
    plain = write(work / "plain.jsonl", (plain_row(i) for i in range(n_calls)))
    runs: dict[str, list[dict[str, Any]]] = {"with": [], "without": []}
    for k in range(args.repeat):  # a fresh output each time: nothing from the store
        with_out = work / f"tools-out{k}.jsonl"
        runs["with"].append(measure(cli, tools, with_out, args, "--tool-replay"))
        runs["without"].append(measure(cli, plain, work / f"plain-out{k}.jsonl", args))
    with_tools, without = (min(runs[k], key=lambda m: m["cpu"] / m["calls"]) for k in runs)
    out = with_tools["out"]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    summary = json.loads(out.with_name(out.stem + ".summary.json").read_text())
    ideal = n_calls * args.latency / args.concurrency
    ended = sum(r.get("response_ended") == "final" for r in rows)
    if args.repeat > 1:
        print(f"each figure from the run of least CPU per call of {args.repeat}")
    print(
        f"N={args.n} rows x {STEPS + 1} calls, C={args.concurrency}, L={args.latency}s: ideal "
        f"N*3*L/C = {ideal:.2f} s; exit {with_tools['code']}, {ended}/{len(rows)} rows ended "
        f"on their final text; unmatched calls {summary['unmatched_tool_calls']}"
    )
    ratios = {}
    for name, m in (("with tools", with_tools), ("without tools", without)):
        ratio = ratios[name] = ideal / m["span"]
        print(f"{name} ({m['calls']} model calls, ideal {n_calls}):")
        print(f"  wall, whole run                   {m['wall']:>8.2f} s  "
              f"ratio {ideal / m['wall']:.3f}")  # fmt: skip
        print(
            f"  wall, while generating            {m['span']:>8.2f} s  ratio {ratio:.3f}"
            + (f"  (target >= {TARGET_RATIO})  {'ok' if ratio >= TARGET_RATIO else 'MISSED'}"
               if name == "with tools" else "")
        )  # fmt: skip
        print(f"  chatjudge CPU                     {m['cpu']:>8.2f} s  "
              f"{m['cpu'] / m['calls'] * 1000:.3f} ms per model call (all-in)")  # fmt: skip
        print(f"  re-run (every call stored)        {m['rerun'][1]:>8.2f} s  calls sent "
              f"{m['resent']} (target 0)  {'ok' if m['resent'] == 0 else 'MISSED'}")  # fmt: skip
    per_call = [m["cpu"] / m["calls"] for m in (with_tools, without)]
    cpu_ratio = per_call[0] / per_call[1]
    print(
        f"CPU per model call, with / without tools: {cpu_ratio:.3f} (target <= {TARGET_CPU})  "
        f"{'ok' if cpu_ratio <= TARGET_CPU else 'MISSED'}"
    )
    shutil.rmtree(work, ignore_errors=True)
    if args.json:
        figures = {
            "ratio while generating": ratios["with tools"],
            "ratio without tools": ratios["without tools"],
            "CPU ms/call with tools": per_call[0] * 1000,
            "CPU ms/call without tools": per_call[1] * 1000,
            "CPU ratio": cpu_ratio,
        }
        args.json.write_text(json.dumps(figures, indent=2))
    every = runs["with"] + runs["without"]
    ok = all(m["code"] == 0 for m in every) and all(m["resent"] == 0 for m in every)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
