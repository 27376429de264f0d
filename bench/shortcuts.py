"""What a shortcut in chatjudge buys: the same command with it and without it, in turns.

For issue 42, item 5: a shortcut (code written for speed rather than in the plainest way)
stays only where taking it out worsens a bench figure by 3% or more. Each shortcut below is
taken out in the child process only (a patch applied before the command starts), so both
runs are this checkout's chatjudge and nothing else differs; they take turns run for run,
so that load from outside weighs on both alike. Prints the median CPU (user + sys of the
command's process, from wait4) of each over `--repeat` runs, the least, without / with
(medians), and paired: the median of each turn's without / with.

- `schema-check`: `tool_definitions._plainly_valid`, the partial JSON-Schema check of a
  row's tool definitions that avoids importing `jsonschema`; taken out, every schema goes
  to `jsonschema`'s meta-schema check. `chatjudge run -p tool-trajectory` on rows with a
  `tools` column (`tool_trajectory.py`'s rows, five tools each with its schema).
- `call-record`: the results record built as a plain dict in the model's field order
  (`formats.results.result_row`, its calls by `CallOutcome.to_dict`); taken out, each
  record goes through `ResultRecord` (calls as `CallRecord`) as it is written.
  `chatjudge run` of `run_engine.py`'s datasets against the stand-in server (L = 0,
  `fixed_cost.py`'s set-up).

    python bench/shortcuts.py                                  # both, 5 runs (~3 minutes)
    python bench/shortcuts.py --shortcuts schema-check --sizes 20,2000 --repeat 9
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from fixed_cost import BYTECODE, measure  # noqa: E402 - the judged runs' set-up
from tool_trajectory import TOOLS, _row  # noqa: E402 - its rows

CLI = "from chatjudge.cli import main; sys.argv[0] = 'chatjudge'; main()"
WITHOUT = {  # the patch that takes each shortcut out
    "schema-check": (
        "import chatjudge.chat.toolcalls.definitions as t; t._plainly_valid = lambda s: False"
    ),
    "call-record": (
        "import chatjudge.runner.fold as f; from chatjudge.formats.results import "
        "ResultRecord as R; plain = f.result_row; f.result_row = lambda **k: "
        "R.model_validate(plain(**k)).model_dump(exclude_unset=True)"
    ),
}
PROTOCOLS = {"call-record": ("pairwise-chat-quality", "interactivity-accuracy")}
SCHEMA = {  # what most tool definitions look like: typed properties, some required
    "type": "object",
    "properties": {
        "q": {"type": "string", "description": "what to look for"},
        "n": {"type": "integer", "description": "how many"},
        "units": {"type": "string", "enum": ["metric", "imperial"]},
    },
    "required": ["q"],
}


def write_tool_rows(path: Path, n: int) -> None:
    """`tool_trajectory.py`'s rows, each with the five tools' definitions."""
    rng = random.Random(0)
    tools = [
        {"type": "function", "function": {"name": t, "description": t, "parameters": SCHEMA}}
        for t in TOOLS
    ]
    with path.open("w") as out:
        for i in range(n):
            out.write(json.dumps({**_row(rng, i), "tools": tools}) + "\n")


def _cli(shortcut: str, without: bool) -> list[str]:
    patch = WITHOUT[shortcut] + "; " if without else ""
    return [sys.executable, "-c", f"import sys; {patch}{CLI}"]


def _trajectory_cpu(cli: list[str], data: Path, out: Path) -> float:
    command = [*cli, "run", str(data), "-p", "tool-trajectory", "--out", str(out), "--quiet"]
    env = {**os.environ, **BYTECODE}
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
    )
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(command)} failed")
    return usage.ru_utime + usage.ru_stime


def schema_check(work: Path, sizes: list[int], repeat: int) -> list[dict[str, Any]]:
    figures = []
    clis = {"with": _cli("schema-check", False), "without": _cli("schema-check", True)}
    for n in sizes:
        data = work / f"tools-{n}.jsonl"
        write_tool_rows(data, n)
        runs: dict[str, list[float]] = {name: [] for name in clis}
        for turn in range(repeat + 1):  # the first turn writes the bytecode, unmeasured
            for name, cli in clis.items():
                cpu = _trajectory_cpu(cli, data, Path(tempfile.mkdtemp(dir=work)) / "run")
                if turn:
                    runs[name].append(cpu)
        figures.append(_row_of("schema-check", "tool-trajectory", n, runs))
    return figures


def call_record(work: Path, sizes: list[int], repeat: int) -> list[dict[str, Any]]:
    figures = []
    clis = {"with": _cli("call-record", False), "without": _cli("call-record", True)}
    for protocol in PROTOCOLS["call-record"]:
        for n in sizes:
            measure(clis, work, protocol, min(n, 20), 1, 600)  # writes the bytecode
            found = {f.cli: f for f in measure(clis, work, protocol, n, repeat, 600)}
            for f in found.values():
                if f.problem:
                    raise SystemExit(f"{protocol}, {n} items, {f.cli}: {f.problem}")
            runs = {name: found[name].runs for name in clis}
            figures.append(_row_of("call-record", protocol, n, runs))
    return figures


def _ratio(with_: float, without: float) -> float:
    return without / with_


def _row_of(shortcut: str, what: str, n: int, runs: dict[str, list[float]]) -> dict[str, Any]:
    with_, without = statistics.median(runs["with"]), statistics.median(runs["without"])
    return {
        "shortcut": shortcut,
        "run": what,
        "n": n,
        "with_s": round(with_, 3),
        "without_s": round(without, 3),
        "with_min_s": round(min(runs["with"]), 3),
        "without_min_s": round(min(runs["without"]), 3),
        "ratio": round(without / with_, 3),
        # each turn's without / with: load from outside weighs on a turn's two runs alike
        "paired": round(statistics.median(map(_ratio, runs["with"], runs["without"])), 3),
        "runs": runs,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shortcuts", default="schema-check,call-record")
    parser.add_argument("--sizes", default="20,2000", help="items per run, comma-separated")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each, in turns")
    parser.add_argument("--json", type=Path, help="write the figures here as JSON")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    benches = {"schema-check": schema_check, "call-record": call_record}
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.shortcuts.split(","):
            results.extend(benches[name](Path(tmp), sizes, args.repeat))
    print(
        "| shortcut | run | items | CPU s with (least) | without (least) | without / with "
        "| paired |"
    )
    print("|---|---|---|---|---|---|---|")
    for r in results:
        print(
            f"| {r['shortcut']} | {r['run']} | {r['n']:,} | {r['with_s']} ({r['with_min_s']}) "
            f"| {r['without_s']} ({r['without_min_s']}) | {r['ratio']} | {r['paired']} |"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
