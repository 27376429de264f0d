"""`chatjudge simulate` against stand-in assistant and user servers, both as processes.

A conversation of T turns is 2T calls in a row (user, assistant, ...), so with C
conversations in flight against servers of latency L the ideal wall time is
N * 2T * L / C. This measures the ratio of that ideal to the real time (while simulating:
the servers' first request to their last reply; and for the whole run, start-up
included), chatjudge's CPU per model call (user + sys of the CLI process / calls), its
peak memory, and the same command again (every call from the store: nothing sent).

    python bench/simulate.py                    # N=500, T=4, C=100, L=0.2 s (~30 s)
    python bench/simulate.py --n 100 --concurrency 50

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

sys.path.insert(0, str(Path(__file__).parent))
from run_engine import StubProcess, _wait  # noqa: E402 - the engine bench's server process

TARGET_RATIO = 0.85


def write_questions(path: Path, n: int) -> None:
    """N distinct rows; each opens with an earlier exchange of its own, so that every call of
    every conversation differs (the stand-in server answers from the last user message)."""
    with path.open("w", encoding="utf-8") as out:
        for i in range(n):
            row = {
                "id": f"q{i:05d}",
                "question": f"Question {i}: how many liters fill a tank of {10 + i} liters?",
                "answer": f"{10 + i} liters",
                "user_context": f"You own tank number {i}." if i % 3 == 0 else None,
                "chat_history": [
                    {"role": "user", "content": f"Hi, this is customer {i}."},
                    {"role": "assistant", "content": "Hello! How can I help?"},
                ],
            }
            out.write(json.dumps(row) + "\n")


def run(cli: list[str], data: Path, out: Path, urls: tuple[str, str], args: argparse.Namespace):
    command = [
        *cli, "simulate", str(data),
        "--assistant", "openai/stub", "--user", "openai/stub",
        "--assistant-base-url", urls[0], "--user-base-url", urls[1],
        "--max-turns", str(args.turns), "--concurrency", str(args.concurrency),
        "--out", str(out), "--quiet",
    ]  # fmt: skip
    env = {**os.environ, "OPENAI_API_KEY": "dummy"}
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, env=env)
    code, end, usage = _wait(process, timeout=600)
    return code, end - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=500, help="conversations")
    parser.add_argument("--turns", type=int, default=4, help="T: assistant replies each")
    parser.add_argument("--concurrency", type=int, default=100, help="C: conversations at once")
    parser.add_argument("--latency", type=float, default=0.2, help="L: seconds per reply")
    parser.add_argument("--cli", default=f"{sys.executable} -m chatjudge.cli")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    cli = args.cli.split()
    work = Path(tempfile.mkdtemp(prefix="chatjudge-bench-simulate-"))
    data = work / "questions.jsonl"
    write_questions(data, args.n)
    assistant, user = (
        StubProcess(args.latency, sys.executable),
        StubProcess(args.latency, sys.executable),
    )
    try:
        code, wall, cpu, rss = run(
            cli, data, work / "conv.jsonl", (assistant.base_url, user.base_url), args
        )
        stats = [assistant.stats(), user.stats()]
        rerun = run(cli, data, work / "conv.jsonl", (assistant.base_url, user.base_url), args)
        resent = sum(s["requests"] for s in (assistant.stats(), user.stats())) - sum(
            s["requests"] for s in stats
        )
    finally:
        server_cpu = assistant.stop() + user.stop()
    calls = sum(s["requests"] for s in stats)
    span = max(s["last_reply_at"] for s in stats) - min(s["first_request_at"] for s in stats)
    ideal = args.n * 2 * args.turns * args.latency / args.concurrency
    rows = [json.loads(line) for line in (work / "conv.jsonl").read_text().splitlines()]
    ok = sum(r["status"] == "ok" for r in rows)
    print(
        f"N={args.n} T={args.turns} C={args.concurrency} L={args.latency}s: "
        f"ideal N*2T*L/C = {ideal:.2f} s; exit {code}, {ok}/{len(rows)} conversations ok"
    )
    print(f"  model calls                       {calls:>8}  (ideal {args.n * 2 * args.turns})")
    print(f"  wall, whole run                   {wall:>8.2f} s  ratio {ideal / wall:.3f}")
    ratio = ideal / span
    print(
        f"  wall, while simulating            {span:>8.2f} s  ratio {ratio:.3f}  "
        f"(target >= {TARGET_RATIO})  {'ok' if ratio >= TARGET_RATIO else 'MISSED'}"
    )
    print(
        f"  chatjudge CPU                     {cpu:>8.2f} s  "
        f"{cpu / calls * 1000:.3f} ms per model call (all-in)"
    )
    print(f"  peak RSS                          {rss:>8.0f} MB")
    print(f"  servers' CPU per request          {server_cpu / calls * 1000:>8.3f} ms")
    print(
        f"  re-run (every call stored)        {rerun[1]:>8.2f} s  calls sent {resent} "
        f"(target 0)  {'ok' if resent == 0 else 'MISSED'}"
    )
    shutil.rmtree(work, ignore_errors=True)
    if args.json:
        figures = {
            "wall s": wall,
            "ratio while simulating": ratio,
            "CPU ms/call": cpu / calls * 1000,
            "peak RSS MB": rss,
            "re-run wall s": rerun[1],
        }
        args.json.write_text(json.dumps(figures, indent=2))
    return 0 if code in (0, 1) and rerun[0] in (0, 1) else 1


if __name__ == "__main__":
    sys.exit(main())
