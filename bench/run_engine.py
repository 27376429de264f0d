"""Run-engine benchmark: `chatjudge run` against the stand-in OpenAI server, both as processes.

Measures what the run-engine issue asks for, each figure next to its target:
  (a) N=5,000 items, concurrency C=256, server latency L=1 s: items/s and its ratio to C/L
  (b) N=5,000, C=100, L=0.2 s: the same
  for both: chatjudge's CPU time per judge call (user + sys of the CLI process / calls), its
  peak RSS, then the same command again (every call cached): items/s and requests re-sent
  (c) N=100,000, C=256, L=0: peak RSS

    python bench/run_engine.py            # the full benchmark (about 2 minutes on 2 cores)
    python bench/run_engine.py --quick    # smaller N, a smoke test of the whole chain

Run it with the interpreter of the environment chatjudge is installed in.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import select
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
STUB = "tests.support.stub_openai"
PROTOCOL = "interactivity-accuracy"


@dataclass(frozen=True)
class Scenario:
    name: str
    n: int
    concurrency: int
    latency: float
    rerun: bool = True  # run the same command again, everything cached
    floor: bool = True  # then a bare aiohttp client on the same data and server


FULL = (
    Scenario("a", 5_000, 256, 1.0),
    Scenario("b", 5_000, 100, 0.2),
    Scenario("c", 100_000, 256, 0.0, rerun=False, floor=False),
)
QUICK = (
    Scenario("a", 768, 256, 1.0),
    Scenario("b", 500, 100, 0.2),
    Scenario("c", 5_000, 256, 0.0, rerun=False, floor=False),
)
BARE_CLIENT = ROOT / "bench" / "bare_client.py"
BASELINE_N = 20  # a tiny run: the CLI's fixed cost (start-up, imports, report)

TARGET_RATIO = {"a": 0.9, "b": 0.85}
TARGET_CPU_MS = 1.0
TARGET_CACHED_RATE = 2_000.0
TARGET_RSS_MB = 300.0


@dataclass
class Run:
    """One CLI process: wall time, CPU, peak memory and what it wrote."""

    exit_code: int
    wall: float
    cpu: float
    max_rss_mb: float
    n_ok: int | None = None
    n_failed: int | None = None
    requests: int = 0  # requests the server received during the run
    max_in_flight: int = 0
    judging: float | None = None  # seconds from the server's first request to its last reply
    log: str = ""  # the end of its output
    crashed: bool = False  # a Python traceback in its output

    @property
    def problem(self) -> str | None:
        """Why this run's figures may not be trusted, or None."""
        if self.crashed:
            return f"the CLI crashed (exit {self.exit_code})"
        if self.exit_code not in (0, 1):
            return f"the CLI failed (exit {self.exit_code})"
        return None

    def problem_lines(self, what: str) -> list[str]:
        if self.problem is None:
            return []
        tail = self.log.splitlines()[-12:]
        return [f"  {what}: {self.problem}; its output ends with:", *("    " + x for x in tail)]


@dataclass
class Result:
    scenario: Scenario
    first: Run
    rerun: Run | None = None
    server_cpu: float = 0.0
    floor: dict[str, float] | None = None  # the bare client's figures (bare_client.py --json)
    notes: list[str] = field(default_factory=list)


# --- synthetic data --------------------------------------------------------------------------

_TOPICS = (
    "the boiling point of water at altitude",
    "a recursive Fibonacci function",
    "the causes of the French Revolution",
    "compound interest on a savings account",
    "photosynthesis in C4 plants",
    "sorting a list of dictionaries in Python",
    "the distance from Paris to Lyon",
    "the half-life of carbon-14",
    "a SQL query with a left join",
    "the plot of Moby-Dick",
    "converting Celsius to Fahrenheit",
    "the capital cities of South America",
)
_USER = (
    "Can you help me with {t}? I need it for case {i}.",
    "I am not sure I understand {t}. Could you explain it step by step, with an example?",
    "Thanks. What about the edge case where the value is {n}? Does that change the answer?",
    "That is not quite what I meant. I am asking about {t} in the context of item {i}.",
    "Could you make it shorter and give me just the final result for {n}?",
)
_ASSISTANT = (
    "Sure. Before I answer, could you tell me whether you need a general overview of {t} or "
    "the specific figure for your case? The details matter because the result depends on {n}.",
    "Here is a step-by-step explanation of {t}. First, identify the quantities involved. "
    "Second, apply the standard relation. Third, check the result against a known value ({n}).",
    "The short answer is {n}. This follows from the definition, and it holds as long as the "
    "assumptions above are met; let me know if your situation differs.",
    "Good question. For {t}, the usual mistake is to forget the units. With the numbers you "
    "gave, the result is {n}, and I double-checked it with a second method.",
    "I may have misunderstood earlier. If you mean {t} for item {i}, then the answer changes: "
    "it becomes {n}. Would you like me to walk through the derivation again?",
)


def _message(rng: random.Random, role: str, i: int) -> dict[str, str]:
    pool = _USER if role == "user" else _ASSISTANT
    parts = rng.sample(pool, 2 if role == "assistant" else 1)
    values = {"t": rng.choice(_TOPICS), "i": i, "n": rng.randint(1, 10_000)}
    return {"role": role, "content": " ".join(p.format(**values) for p in parts)}


def _conversation(rng: random.Random, i: int, turns: int) -> list[dict[str, str]]:
    return [_message(rng, "user" if k % 2 == 0 else "assistant", i) for k in range(turns)]


def write_dataset(path: Path, n: int, seed: int) -> int:
    """N distinct interactivity-accuracy items of about 1-2 KB each; returns the file size."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as out:
        for i in range(n):
            topic = rng.choice(_TOPICS)
            item = {
                "id": f"s{seed}-{i:06d}",
                "chat_history": _conversation(rng, i, 2) if i % 10 else "",
                "chat": _conversation(rng, i, rng.choice((2, 4))),
                "question": f"Question {i}: what is the result for {topic} with the value "
                f"{rng.randint(1, 10_000)}?",
                "answer": f"{rng.randint(1, 10_000)} (see {topic})",
            }
            out.write(json.dumps(item) + "\n")
    return path.stat().st_size


def write_pairwise_dataset(path: Path, n: int, seed: int) -> int:
    """N distinct pairwise-chat-quality items (a history, a prompt, two replies to compare)
    of about 1.5 KB each; returns the file size."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as out:
        for i in range(n):
            item = {
                "id": f"p{seed}-{i:06d}",
                "history": _conversation(rng, i, 2),
                "prompt": _message(rng, "user", i)["content"],
                "baseline_model_response": _message(rng, "assistant", i)["content"],
                "response": _message(rng, "assistant", i)["content"],
            }
            out.write(json.dumps(item) + "\n")
    return path.stat().st_size


# --- processes -------------------------------------------------------------------------------


class StubProcess:
    """The stand-in server as its own process, as a real judge server would be."""

    def __init__(self, latency: float, python: str) -> None:
        self.process = subprocess.Popen(
            [python, "-m", STUB, "--port", "0", "--latency", str(latency)],
            stdout=subprocess.PIPE,
            cwd=ROOT,  # the stand-in is the test suite's own module
        )
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], 30)
        line = self.process.stdout.readline().decode().strip() if ready else ""
        if not line.startswith("http"):
            self.process.kill()
            raise RuntimeError(f"the stub server did not start (got {line!r})")
        self.base_url = line

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(self.base_url.removesuffix("/v1") + "/_stats") as r:
            return json.load(r)

    def stop(self) -> float:
        """Stop the server; returns its CPU seconds."""
        self.process.send_signal(signal.SIGTERM)
        _, _, usage = _wait(self.process, timeout=30)
        return usage.ru_utime + usage.ru_stime


def _wait(process: subprocess.Popen[Any], timeout: float) -> tuple[int, float, Any]:
    """Wait for `process` with os.wait4, for its own rusage; kill it after `timeout`."""
    timer = threading.Timer(timeout, process.kill)
    timer.start()
    try:
        _, status, usage = os.wait4(process.pid, 0)
    finally:
        timer.cancel()
    process.returncode = os.waitstatus_to_exitcode(status)
    return process.returncode, time.perf_counter(), usage


def run_cli(
    cli: list[str],
    data: Path,
    out: Path,
    base_url: str,
    concurrency: int,
    timeout: float,
    extra: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
    protocol: str = PROTOCOL,
) -> Run:
    command = [
        *cli,
        "run",
        str(data),
        "--protocol",
        protocol,
        "--judge",
        "openai/stub",
        "--base-url",
        base_url,
        "--concurrency",
        str(concurrency),
        "--out",
        str(out),
        *extra,
    ]
    env = {**os.environ, **(env or {}), "OPENAI_API_KEY": "dummy"}
    env.pop("OPENAI_BASE_URL", None)
    log_path = out.parent / f"{out.name}.log"
    with log_path.open("ab") as log:
        log.write(f"$ {shlex.join(command)}\n".encode())
        log.flush()
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
        code, end, usage = _wait(process, timeout)
    output = log_path.read_text(errors="replace")
    run = Run(
        exit_code=code,
        wall=end - start,
        cpu=usage.ru_utime + usage.ru_stime,
        max_rss_mb=usage.ru_maxrss / 1024,  # kilobytes on Linux
        log=output[-3000:],
        crashed="Traceback (most recent call last)" in output,
    )
    summary = out / "summary.json"
    if summary.exists():
        data_ = json.loads(summary.read_text())
        run.n_ok, run.n_failed = data_.get("n_ok"), data_.get("n_failed")
    return run


def measured_run(cli: list[str], python: str, work: Path, s: Scenario, timeout: float) -> Result:
    data = work / f"data-{s.name}.jsonl"
    size = write_dataset(data, s.n, seed=zlib.crc32(s.name.encode()))
    out = work / f"out-{s.name}"
    stub = StubProcess(s.latency, python)
    try:
        first = run_cli(cli, data, out, stub.base_url, s.concurrency, timeout)
        stats = stub.stats()
        first.requests, first.max_in_flight = stats["requests"], stats["max_in_flight"]
        if stats.get("first_request_at") and stats.get("last_reply_at"):
            first.judging = stats["last_reply_at"] - stats["first_request_at"]
        rerun = None
        if s.rerun and first.n_ok is not None:
            rerun = run_cli(cli, data, out, stub.base_url, s.concurrency, timeout)
            rerun.requests = stub.stats()["requests"] - first.requests
    finally:
        server_cpu = stub.stop()
    floor = bare_floor(python, data, s, timeout) if s.floor else None
    result = Result(s, first, rerun, server_cpu, floor)
    result.notes.append(f"dataset {size / s.n / 1024:.2f} KB/item")
    return result


def bare_floor(python: str, data: Path, s: Scenario, timeout: float) -> dict[str, float] | None:
    """The bare aiohttp client (`bare_client.py`) on the same items, against a fresh server
    with the same latency: what any Python client pays, the floor for chatjudge's figures."""
    stub = StubProcess(s.latency, python)
    try:
        done = subprocess.run(
            [
                python,
                str(BARE_CLIENT),
                "--data",
                str(data),
                "--base-url",
                stub.base_url,
                "--concurrency",
                str(s.concurrency),
                "--latency",
                str(s.latency),
                "--json",
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    finally:
        stub.stop()
    if done.returncode != 0:
        print(f"  the bare client failed: {done.stderr[-500:]}", flush=True)
        return None
    figures: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return figures


# --- report ----------------------------------------------------------------------------------


def _line(label: str, value: str, target: str = "", ok: bool | None = None) -> str:
    mark = "" if ok is None else ("  ok" if ok else "  MISSED")
    target = f"(target {target})" if target else ""
    return f"  {label:<34} {value:>14}  {target}{mark}"


def report(result: Result, baseline: Run | None) -> list[str]:
    s, first = result.scenario, result.first
    lines = [f"({s.name}) N={s.n:,} C={s.concurrency} L={s.latency:g}s"]
    lines.extend(first.problem_lines("first run"))
    if first.n_ok is None:  # no summary.json: no figures to show
        return lines
    rate = s.n / first.wall
    lines.append(_line("wall / CPU time", f"{first.wall:.2f} / {first.cpu:.2f} s"))
    lines.append(
        _line(
            "items judged ok / failed",
            f"{first.n_ok} / {first.n_failed}",
            f"{s.n} / 0",
            first.n_ok == s.n,
        )
    )
    if s.latency > 0:
        ideal = s.concurrency / s.latency
        target = TARGET_RATIO.get(s.name)
        lines.append(_line("items/s, whole run", f"{rate:.1f}", f"ideal C/L = {ideal:.0f}"))
        lines.append(_line("ratio to C/L, whole run", f"{rate / ideal:.3f}"))
        if first.judging:
            # What the judge loop sustains: the whole run also holds ~0.8 s of start-up
            # (imports, the validation pass) and the summary and report at the end.
            judged = first.requests / first.judging / ideal
            lines.append(
                _line(
                    "ratio to C/L, while judging",
                    f"{judged:.3f}",
                    f">= {target}" if target else "",
                    judged >= target if target else None,
                )
            )
        lines.append(_line("server max in flight", f"{first.max_in_flight}", f"{s.concurrency}"))
    else:
        lines.append(_line("items/s", f"{rate:.1f}"))
    calls = max(first.requests, 1)
    cpu_ms = first.cpu / calls * 1000
    lines.append(
        _line(
            "chatjudge CPU per call (all-in)",
            f"{cpu_ms:.3f} ms",
            f"<= {TARGET_CPU_MS:g} ms",
            cpu_ms <= TARGET_CPU_MS,
        )
    )
    marginal = None  # CPU per call less the fixed cost: the loop's own cost
    if baseline is not None and calls > BASELINE_N:
        marginal = (first.cpu - baseline.cpu) / (calls - BASELINE_N) * 1000
        lines.append(_line("  less a 20-item run's fixed cost", f"{marginal:.3f} ms"))
    if result.floor is not None:
        floor = result.floor
        lines.append(_line("bare aiohttp client: CPU per call", f"{floor['cpu_ms']:.3f} ms"))
        lines.append(_line("bare aiohttp client: ratio to C/L", f"{floor['ratio']:.3f}"))
        if marginal is not None:
            lines.append(
                _line("chatjudge less fixed cost / bare", f"{marginal / floor['cpu_ms']:.2f}x")
            )
    lines.append(_line("server CPU per request", f"{result.server_cpu / calls * 1000:.3f} ms"))
    lines.append(_line("requests sent", f"{first.requests:,}", f"{s.n:,}"))
    big = s.name == "c"
    lines.append(
        _line(
            "peak RSS",
            f"{first.max_rss_mb:.0f} MB",
            f"< {TARGET_RSS_MB:g} MB" if big else "",
            first.max_rss_mb < TARGET_RSS_MB if big else None,
        )
    )
    if result.rerun is not None:
        again = result.rerun
        lines.extend(again.problem_lines("re-run"))
        if again.n_ok is not None:
            cached = s.n / again.wall
            lines.append(
                _line(
                    "re-run (cached) items/s",
                    f"{cached:.0f}",
                    f">= {TARGET_CACHED_RATE:g}",
                    cached >= TARGET_CACHED_RATE,
                )
            )
            lines.append(
                _line("re-run requests sent", f"{again.requests}", "0", again.requests == 0)
            )
            lines.append(_line("re-run wall / CPU", f"{again.wall:.2f} / {again.cpu:.2f} s"))
            lines.append(_line("re-run peak RSS", f"{again.max_rss_mb:.0f} MB"))
    lines.extend(f"  note: {n}" for n in result.notes)
    return lines


def _check_cli(cli: list[str]) -> str | None:
    probe = subprocess.run([*cli, "run", "--help"], capture_output=True, text=True, timeout=120)
    if probe.returncode != 0:
        return (probe.stdout + probe.stderr)[-2000:]
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="smaller N: a smoke test")
    parser.add_argument("--only", default="a,b,c", help="scenarios to run, e.g. a,c")
    parser.add_argument(
        "--cli",
        default=f"{shlex.quote(sys.executable)} -m chatjudge.cli",
        help="the command that runs chatjudge's CLI",
    )
    parser.add_argument("--timeout", type=float, default=3600, help="per CLI run, seconds")
    parser.add_argument("--keep", action="store_true", help="keep the data and run folders")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)

    cli = shlex.split(args.cli)
    problem = _check_cli(cli)
    if problem is not None:
        print(f"`{args.cli} run --help` failed; is chatjudge installed here?\n{problem}")
        return 2
    wanted = set(args.only.split(","))
    scenarios = [s for s in (QUICK if args.quick else FULL) if s.name in wanted]
    work = Path(tempfile.mkdtemp(prefix="chatjudge-bench-"))
    print(f"working in {work}; chatjudge: {args.cli}", flush=True)
    if args.quick:
        print(
            "--quick: small N, where the fixed start-up cost weighs more; "
            "the targets are set for the full sizes"
        )
    results: list[Result] = []
    try:
        # The first run also compiles bytecode: warm up, then measure the fixed cost.
        for name in ("warm-up", "baseline"):
            tiny = Scenario(name, BASELINE_N, 256, 0.0, rerun=False)
            base = measured_run(cli, sys.executable, work, tiny, args.timeout)
        baseline = base.first if base.first.n_ok is not None else None
        print(
            f"baseline: a {BASELINE_N}-item run takes {base.first.wall:.2f} s wall, "
            f"{base.first.cpu:.2f} s CPU (start-up, imports, outputs)",
            flush=True,
        )
        for line in base.first.problem_lines("baseline"):
            print(line, flush=True)
        for s in scenarios:
            result = measured_run(cli, sys.executable, work, s, args.timeout)
            results.append(result)
            print("\n".join(report(result, baseline)), flush=True)
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in results], indent=2, default=str))
    runs = [run for r in results for run in (r.first, r.rerun) if run is not None]
    return 1 if any(run.problem for run in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
