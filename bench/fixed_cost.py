"""A run's fixed cost: `chatjudge run` on a few items, the whole process, CPU and peak memory.

What a user pays before judging anything (start-up, imports, validation, the summary, the
report), which the large-N benchmarks amortise away (issue 29, item 8). For each protocol
it writes 20, 200 and 2,000 synthetic items (`run_engine.py`'s datasets), starts the
stand-in OpenAI server answering at once (its own process, L = 0), runs

    python -m chatjudge.cli run DATA --protocol P --judge openai/stub --base-url URL \\
        --concurrency 100 --out OUT                       # with OPENAI_API_KEY=dummy

as its own process `--repeat` times per size, after one unmeasured run that compiles the
bytecode (with `--baseline-cli`, another chatjudge takes turns with it, run for run), and
prints the median CPU (user + sys of the CLI process, from wait4), the median peak RSS
(ru_maxrss), and CPU per item and per judge call (pairwise judges each item in both orders:
2 calls), each target with the ratio figure / target (<= 1 meets it). The targets use the
least CPU of the repeats, the figure least disturbed by other work on a shared machine.

    python bench/fixed_cost.py                 # both protocols, 3 runs per size (~1 minute)
    python bench/fixed_cost.py --protocols pairwise-chat-quality --repeat 5 --json out.json
    python bench/fixed_cost.py --baseline-cli "env PYTHONPATH=/tmp/main/src python -m chatjudge.cli"

Run it with the interpreter of the environment chatjudge is installed in.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from run_engine import (  # noqa: E402 - the engine bench's data, server and CLI process
    Run,
    StubProcess,
    _check_cli,
    _line,
    run_cli,
    write_dataset,
    write_pairwise_dataset,
)

SIZES = (20, 200, 2_000)
# Python may write bytecode (the warm-up's), as an installed package has it: compiling
# chatjudge's modules on every start adds about 0.1 s that no user pays twice.
BYTECODE = {"PYTHONDONTWRITEBYTECODE": ""}
CONCURRENCY = 100
WRITERS: dict[str, Callable[[Path, int, int], int]] = {
    "pairwise-chat-quality": write_pairwise_dataset,
    "interactivity-accuracy": write_dataset,
}
# Issue 29's targets: a 20-item run, and 2,000 items "per call all in", shown per judge call
# and per item (the peer benchmark's unit if a pairwise item counts once; chatjudge sends
# two calls for it).
SMALL_N, SMALL_CPU_S, SMALL_RSS_MB = 20, 0.5, 70.0
LARGE_N, LARGE_CPU_MS, LARGE_RSS_MB = 2_000, 0.6, 80.0


@dataclass
class Figures:
    cli: str  # "chatjudge", or "baseline" for --baseline-cli
    protocol: str
    n: int
    cpu_s: float  # median over the repeats
    cpu_min_s: float  # the least
    rss_mb: float  # median peak RSS
    calls: int  # judge calls the server received in one run
    runs: list[float]  # each repeat's CPU seconds
    problem: str | None = None


def measure(
    clis: dict[str, list[str]], work: Path, protocol: str, n: int, repeat: int, timeout: float
) -> list[Figures]:
    """`repeat` runs of each CLI on the same n synthetic items, the CLIs taking turns (so that
    load from outside weighs on both alike), each run into a new folder."""
    data = work / f"{protocol}-{n}.jsonl"
    WRITERS[protocol](data, n, n)
    stub = StubProcess(0.0, sys.executable)
    runs: dict[str, list[Run]] = {name: [] for name in clis}
    try:
        for _ in range(repeat):
            for name, cli in clis.items():
                before = stub.stats()["requests"]
                out = Path(tempfile.mkdtemp(dir=work)) / "run"  # nothing cached
                run = run_cli(
                    cli, data, out, stub.base_url, CONCURRENCY, timeout,
                    env=BYTECODE, protocol=protocol,
                )  # fmt: skip
                run.requests = stub.stats()["requests"] - before
                runs[name].append(run)
    finally:
        stub.stop()
    return [_figures(name, protocol, n, done) for name, done in runs.items()]


def _figures(cli: str, protocol: str, n: int, runs: list[Run]) -> Figures:
    problems = [r.problem for r in runs if r.problem] + [
        f"{r.n_ok} of {n} items judged" for r in runs if not r.problem and r.n_ok != n
    ]
    return Figures(
        cli,
        protocol,
        n,
        cpu_s=statistics.median(r.cpu for r in runs),
        cpu_min_s=min(r.cpu for r in runs),
        rss_mb=statistics.median(r.max_rss_mb for r in runs),
        calls=runs[0].requests,
        runs=[round(r.cpu, 3) for r in runs],
        problem=problems[0] if problems else None,
    )


def _target(label: str, value: float, target: float, unit: str) -> str:
    shown = f"{value:.3f} {unit}" if unit == "ms" else f"{value:.2f} {unit}"
    return _line(label, f"{shown} x{value / target:.2f}", f"<= {target:g} {unit}", value <= target)


def report(figures: list[Figures]) -> list[str]:
    """A table of every size (the baseline's rows under chatjudge's), then the targets."""
    first = figures[0]
    lines = [
        f"{first.protocol}: {first.calls / first.n:g} judge call(s) per item, stand-in L=0, "
        f"C={CONCURRENCY}",
        f"  {'':<9} {'items':>6} {'CPU s':>7} {'peak RSS':>9} {'CPU/item':>10} {'CPU/call':>10}"
        "  runs (CPU s)",
    ]
    for f in figures:
        lines.append(
            f"  {f.cli:<9} {f.n:>6,} {f.cpu_s:>7.2f} {f.rss_mb:>6.0f} MB "
            f"{f.cpu_s / f.n * 1e3:>7.3f} ms {f.cpu_s / max(f.calls, 1) * 1e3:>7.3f} ms  {f.runs}"
            + (f"  PROBLEM: {f.problem}" if f.problem else "")
        )
    ours = {f.n: f for f in figures if f.cli == "chatjudge"}
    if SMALL_N in ours:
        small = ours[SMALL_N]
        label = f"{SMALL_N} items: CPU, least (x target)"
        lines.append(_target(label, small.cpu_min_s, SMALL_CPU_S, "s"))
        lines.append(_target(f"{SMALL_N} items: peak RSS", small.rss_mb, SMALL_RSS_MB, "MB"))
    if LARGE_N in ours:
        large = ours[LARGE_N]
        per_call_ms = large.cpu_min_s / max(large.calls, 1) * 1e3
        per_item_ms = large.cpu_min_s / large.n * 1e3
        lines.append(_target(f"{LARGE_N:,} items: CPU per call", per_call_ms, LARGE_CPU_MS, "ms"))
        lines.append(_target(f"{LARGE_N:,} items: CPU per item", per_item_ms, LARGE_CPU_MS, "ms"))
        lines.append(_target(f"{LARGE_N:,} items: peak RSS", large.rss_mb, LARGE_RSS_MB, "MB"))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--protocols", default=",".join(WRITERS), help="comma-separated")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="items per run")
    parser.add_argument("--repeat", type=int, default=3, help="runs per size (median shown)")
    parser.add_argument(
        "--cli",
        default=f"{shlex.quote(sys.executable)} -m chatjudge.cli",
        help="the command that runs chatjudge's CLI",
    )
    parser.add_argument(
        "--baseline-cli", help="another chatjudge to measure beside it, run for run"
    )
    parser.add_argument("--timeout", type=float, default=600, help="per CLI run, seconds")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)

    commands = {"chatjudge": args.cli, "baseline": args.baseline_cli}
    clis = {name: shlex.split(c) for name, c in commands.items() if c}
    for name, cli in clis.items():
        problem = _check_cli(cli)
        if problem is not None:
            print(f"`{commands[name]} run --help` failed; is chatjudge installed?\n{problem}")
            return 2
    protocols = args.protocols.split(",")
    unknown = sorted(set(protocols) - set(WRITERS))
    if unknown:
        print(f"no dataset for {', '.join(unknown)}; known: {', '.join(WRITERS)}")
        return 2
    work = Path(tempfile.mkdtemp(prefix="chatjudge-fixed-cost-"))
    for name, command in commands.items():
        if command:
            print(f"{name}: {command}")
    print(f"median of {args.repeat} run(s) per size", flush=True)
    results: list[Figures] = []
    try:
        for protocol in protocols:
            measure(clis, work, protocol, SMALL_N, 1, args.timeout)  # warm-up: bytecode
            figures = [
                f
                for n in args.sizes.split(",")
                for f in measure(clis, work, protocol, int(n), args.repeat, args.timeout)
            ]
            results.extend(figures)
            print("\n".join(report(figures)), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps([asdict(f) for f in results], indent=2))
    return 1 if any(f.problem for f in results) else 0


if __name__ == "__main__":
    sys.exit(main())
