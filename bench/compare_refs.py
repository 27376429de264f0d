"""Two versions of chatjudge side by side, in one run: bench figures, or the demo's outputs.

For the closing note of a change (issue 29, item 9): each git ref is checked out in a
temporary worktree (`git worktree add --detach`, removed at the end) and run with this
checkout's bench scripts and interpreter, `PYTHONPATH=<worktree>/src`, so only chatjudge
differs. Benches take turns ref by ref (A B A B ...), so that load from outside weighs on
both alike; the table shows each figure's median over `--repeat` runs (min for CPU, the
least disturbed by other work), and B / A.

    python bench/compare_refs.py                      # defdd68 vs HEAD: run_engine, simulate
    python bench/compare_refs.py --benches fixed_cost --repeat 5
    python bench/compare_refs.py --refs c408fa7,HEAD --quick

`--identity` instead writes every output a refactor must leave alone at both refs
(`bench/identity_outputs.py`: both seed protocols, tool-trajectory, `generate
--tool-replay`, `simulate --tools`, `gate.json`, `agreement.json`, `alignment.json` and an
OTLP export) and compares them with times masked: it prints "identical" or the differences
for each. `--judge stub` (default) uses the stand-in OpenAI server throughout, about 10 s a
ref; `--judge local` judges the demo's two runs with the embedded llama.cpp judge as
`make demo` does (1-2 minutes a ref).

    python bench/compare_refs.py --identity
    python bench/compare_refs.py --identity --judge local --refs defdd68,HEAD
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
Figures = dict[str, float]


def run_engine(data: dict[str, Any] | list[Any]) -> Figures:
    """Per scenario: items/s, CPU per judge call, peak RSS, and the cached re-run's items/s."""
    figures: Figures = {}
    for r in data:
        s, first, rerun = r["scenario"], r["first"], r["rerun"]
        name = s["name"]
        figures[f"({name}) items/s"] = s["n"] / first["wall"]
        figures[f"({name}) CPU ms/call"] = first["cpu"] / max(first["requests"], 1) * 1e3
        figures[f"({name}) peak RSS MB"] = first["max_rss_mb"]
        if rerun:
            figures[f"({name}) cached re-run items/s"] = s["n"] / rerun["wall"]
    return figures


def simulate(data: dict[str, Any] | list[Any]) -> Figures:
    assert isinstance(data, dict)
    return {f"simulate {k}": float(v) for k, v in data.items()}


def fixed_cost(data: dict[str, Any] | list[Any]) -> Figures:
    figures: Figures = {}
    for f in data:
        label = f"{f['protocol'].split('-')[0]} {f['n']:,} items"
        figures[f"{label} CPU s"] = min(f["runs"])
        figures[f"{label} peak RSS MB"] = f["rss_mb"]
    return figures


# name: (script, its arguments, --quick's, how its --json becomes figures)
BENCHES: dict[str, tuple[str, list[str], list[str], Callable[[Any], Figures]]] = {
    "run_engine": ("run_engine.py", [], ["--quick"], run_engine),
    "simulate": ("simulate.py", [], ["--n", "100"], simulate),
    "fixed_cost": (
        "fixed_cost.py",
        ["--protocols", "pairwise-chat-quality", "--sizes", "20,2000", "--repeat", "1"],
        ["--sizes", "20"],
        fixed_cost,
    ),
}


def checkout(ref: str, parent: Path) -> Path:
    """A detached worktree of `ref`, its bytecode compiled (as an installed package has it)."""
    sha = _git("rev-parse", "--short", ref).strip()
    path = parent / f"{ref.replace('/', '_')}-{sha}"
    _git("worktree", "add", "--detach", "--quiet", str(path), sha)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(path / "src")], check=True)
    return path


def _git(*args: str) -> str:
    done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True)
    return done.stdout


def _env(tree: Path) -> dict[str, str]:
    # Bytecode may be written and read, whatever the caller's PYTHONDONTWRITEBYTECODE.
    return {**os.environ, "PYTHONPATH": str(tree / "src"), "PYTHONDONTWRITEBYTECODE": ""}


def bench_once(name: str, tree: Path, quick: bool, work: Path) -> Figures:
    script, extra, quick_extra, figures_of = BENCHES[name]
    out = Path(tempfile.mkdtemp(dir=work)) / "figures.json"
    command = [sys.executable, str(BENCH / script), *extra, *(quick_extra if quick else [])]
    done = subprocess.run(
        [*command, "--json", str(out)], cwd=ROOT, env=_env(tree), capture_output=True, text=True
    )
    if not out.exists():
        raise RuntimeError(f"{shlex.join(command)} at {tree.name} failed:\n{done.stdout[-3000:]}")
    return figures_of(json.loads(out.read_text()))


def compare_benches(trees: dict[str, Path], names: list[str], repeat: int, quick: bool) -> None:
    work = Path(tempfile.mkdtemp(prefix="chatjudge-compare-"))
    runs: dict[str, list[Figures]] = {ref: [] for ref in trees}
    try:
        for i in range(repeat):
            for ref, tree in trees.items():  # A B A B: the same minutes for both
                print(f"run {i + 1}/{repeat}: {ref}", flush=True)
                figures: Figures = {}
                for name in names:
                    figures.update(bench_once(name, tree, quick, work))
                runs[ref].append(figures)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("\n".join(table(runs)))


def table(runs: dict[str, list[Figures]]) -> list[str]:
    """Each figure's median (CPU: min) per ref, and the ratio B / A."""
    (a, a_runs), (b, b_runs) = runs.items()

    def pick(key: str, done: list[Figures]) -> float:
        values = [f[key] for f in done if key in f]
        return min(values) if "CPU" in key else statistics.median(values)

    width = max(len(k) for k in a_runs[0])
    lines = [f"{'':<{width}}  {a:>12}  {b:>12}  {'B / A':>7}"]
    for key in a_runs[0]:
        x, y = pick(key, a_runs), pick(key, b_runs)
        ratio = y / x if x else float("nan")
        lines.append(f"{key:<{width}}  {x:>12.3f}  {y:>12.3f}  {ratio:>7.3f}")
    lines.append(f"medians of {len(a_runs)} run(s) a ref (CPU: the least); refs taken in turns")
    return lines


def outputs_of(tree: Path, judge: str, work: Path, drop: str = "") -> dict[str, str]:
    """Every identity scenario's outputs at `tree` (`bench/identity_outputs.py`), times masked.

    Both refs write in the same folder, so that paths written into outputs match."""
    scenarios = work / "scenarios"
    shutil.rmtree(scenarios, ignore_errors=True)
    scenarios.mkdir()
    out = work / f"{tree.name}.json"
    command = [sys.executable, str(BENCH / "identity_outputs.py"), str(scenarios), str(out)]
    done = subprocess.run(
        [*command, "--judge", judge, "--drop", drop],
        cwd=ROOT,
        env=_env(tree),
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{shlex.join(command)} at {tree.name}:\n{done.stderr[-3000:]}")
    outputs: dict[str, str] = json.loads(out.read_text(encoding="utf-8"))
    return outputs


def compare_outputs(trees: dict[str, Path], judge: str, drop: str = "") -> int:
    work = Path(tempfile.mkdtemp(prefix="chatjudge-identity-"))
    try:
        (a, a_tree), (b, b_tree) = trees.items()
        first = outputs_of(a_tree, judge, work, drop)
        second = outputs_of(b_tree, judge, work, drop)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    differ = 0
    for name in sorted(first.keys() | second.keys()):
        if first.get(name) == second.get(name):
            print(f"{name}: identical")
            continue
        differ += 1
        print(f"{name}: DIFFERS")
        diff = difflib.unified_diff(
            first.get(name, "").splitlines(),
            second.get(name, "").splitlines(),
            a,
            b,
            lineterm="",
            n=1,
        )
        print("\n".join(list(diff)[:60]))
    print("masked: clock times, durations, loopback ports, the exporter's instance id")
    if drop:
        print(f"left out: {drop}")
    return 1 if differ else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--refs", default="defdd68,HEAD", help="A,B: two git refs")
    parser.add_argument("--benches", default="run_engine,simulate", help=",".join(BENCHES))
    parser.add_argument("--repeat", type=int, default=3, help="runs of each bench a ref")
    parser.add_argument("--quick", action="store_true", help="the benches' smaller sizes")
    parser.add_argument(
        "--identity", action="store_true", help="compare every identity scenario's outputs"
    )
    parser.add_argument("--judge", choices=("stub", "local"), default="stub")
    parser.add_argument(
        "--drop",
        default="",
        help="--identity: KEY,... left out of both sides (what a change adds on purpose)",
    )
    args = parser.parse_args(argv)
    refs = args.refs.split(",")
    names = args.benches.split(",")
    if len(refs) != 2 or len(set(refs)) != 2:
        parser.error("--refs takes two different refs, A,B")
    unknown = sorted(set(names) - set(BENCHES))
    if unknown:
        parser.error(f"no bench {', '.join(unknown)}; known: {', '.join(BENCHES)}")
    parent = Path(tempfile.mkdtemp(prefix="chatjudge-refs-"))
    trees: dict[str, Path] = {}
    try:
        for ref in refs:
            trees[ref] = checkout(ref, parent)
        for ref, tree in trees.items():
            print(f"{ref}: {tree}")
        if args.identity:
            return compare_outputs(trees, args.judge, args.drop)
        compare_benches(trees, names, args.repeat, args.quick)
        return 0
    finally:
        for tree in trees.values():
            _git("worktree", "remove", "--force", str(tree))
        shutil.rmtree(parent, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
