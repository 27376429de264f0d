"""`chatjudge import` of a large OpenTelemetry export: 100,000 synthetic chat spans of
realistic sizes, in the layout `opentelemetry-instrumentation-openai-v2` writes (current
GenAI attributes, no conversation id, so every call is grouped by shared history), one
batch of 256 spans per line as the SDK's batch processor and the Collector's file exporter
write them.

Each conversation has a system prompt of about 1,500 characters (shared by all, as one
deployment's is), 1 to 8 turns of user messages of 50-400 characters and replies of
200-1,500, one turn in ten with a tool call (two spans); conversations overlap in time,
so their spans interleave in the file. Every span repeats its conversation's history, as
real ones do: the file is about 650 MB.

It prints the file's size, the CLI's wall time in its own process, and that process's peak
RSS (getrusage of the child), for `--turns last` (default) and `--turns all`.

    python bench/import_traces.py                  # 100,000 spans
    python bench/import_traces.py --spans 20000 --keep-file

Run it with the interpreter of the environment chatjudge is installed in.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

VOCABULARY = (
    "the a flight hotel booking refund policy city museum weather train ticket price "
    "luggage passport visa beach restaurant dinner table reservation airport delay "
    "connection seat upgrade loyalty points card payment insurance cancel change date "
    "morning evening week month family kids tour guide walking distance view room "
    "breakfast included tax fee transfer taxi bus metro station platform"
)
WORDS = VOCABULARY.split()
T0 = 1_760_000_000_000_000_000
BATCH = 256


def text(rng: random.Random, low: int, high: int) -> str:
    goal = rng.randint(low, high)
    words: list[str] = []
    size = 0
    while size < goal:
        word = rng.choice(WORDS)
        words.append(word)
        size += len(word) + 1
    return " ".join(words).capitalize() + "."


def parts(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": content}]}


def span(rng: random.Random, start: int, sent: list[dict], reply: dict) -> dict[str, Any]:
    def attr(key: str, value: str) -> dict[str, Any]:
        return {"key": key, "value": {"stringValue": value}}

    return {
        "traceId": f"{rng.getrandbits(128):032x}",
        "spanId": f"{rng.getrandbits(64):016x}",
        "name": "chat assistant-v1",
        "kind": 3,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + rng.randint(300, 4000) * 1_000_000),
        "attributes": [
            attr("gen_ai.operation.name", "chat"),
            attr("gen_ai.request.model", "assistant-v1"),
            attr("gen_ai.provider.name", "openai"),
            attr("gen_ai.response.model", "assistant-v1-2025-09"),
            attr("gen_ai.input.messages", json.dumps(sent)),
            attr("gen_ai.output.messages", json.dumps([{**reply, "finish_reason": "stop"}])),
        ],
        "status": {},
    }


def synthesize(path: Path, n_spans: int, seed: int = 0) -> int:
    """Write about `n_spans` spans (whole conversations); the number written."""
    rng = random.Random(seed)
    system = parts("system", text(rng, 1400, 1600))
    spans: list[tuple[int, dict[str, Any]]] = []
    made, conversation = 0, 0
    while made < n_spans:
        conversation += 1
        clock = T0 + conversation * 400_000_000 + rng.randint(0, 10**9)
        sent = [system]
        for _ in range(rng.randint(1, 8)):
            if made >= n_spans:
                break
            sent.append(parts("user", text(rng, 50, 400)))
            if rng.random() < 0.1:  # a tool call, its result, then the reply
                call = {
                    "type": "tool_call",
                    "id": f"call_{made}",
                    "name": "lookup",
                    "arguments": {"q": text(rng, 10, 40)},
                }
                tool_reply = {"role": "assistant", "parts": [call]}
                spans.append((clock, span(rng, clock, list(sent), tool_reply)))
                made += 1
                result = {"type": "tool_call_response", "id": call["id"]}
                result["response"] = text(rng, 100, 600)
                sent += [tool_reply, {"role": "tool", "parts": [result]}]
                clock += 2 * 10**9
            reply = parts("assistant", text(rng, 200, 1500))
            spans.append((clock, span(rng, clock, list(sent), reply)))
            made += 1
            sent.append(reply)
            clock += rng.randint(20, 300) * 10**9  # the user reads and types
    spans.sort(key=lambda s: s[0])
    resource_block = {"attributes": [{"key": "service.name", "value": {"stringValue": "bench"}}]}
    with path.open("w", encoding="utf-8") as out:
        for i in range(0, len(spans), BATCH):
            batch = [s for _, s in spans[i : i + BATCH]]
            record = {
                "resourceSpans": [
                    {
                        "resource": resource_block,
                        "scopeSpans": [
                            {"scope": {"name": "opentelemetry.util.genai.handler"}, "spans": batch}
                        ],
                    }
                ]
            }
            out.write(json.dumps(record, separators=(",", ":")) + "\n")
    return made


def import_once(trace: Path, out: Path, turns: str) -> dict[str, Any]:
    """Run the CLI in its own process; its wall time and its own peak RSS (wait4's rusage
    of that one child)."""
    log = out.with_suffix(".stderr")
    command = [sys.executable, "-m", "chatjudge.cli", "import", str(trace), "--out", str(out)]
    with log.open("w") as stderr:
        start = time.perf_counter()
        child = subprocess.Popen([*command, "--turns", turns], stderr=stderr)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - start
    said = " ".join(log.read_text().split())
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"import failed:\n{said}")
    return {
        "turns": turns,
        "seconds": round(seconds, 2),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),  # Linux: KiB
        "rows": sum(1 for _ in out.open("rb")),
        "output_mb": round(out.stat().st_size / 2**20, 1),
        "said": said,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spans", type=int, default=100_000)
    parser.add_argument("--keep-file", action="store_true", help="keep the temporary folder")
    parser.add_argument("--write", type=Path, help=argparse.SUPPRESS)  # the synthesizing child
    args = parser.parse_args()
    if args.write:
        print(synthesize(args.write, args.spans))
        return
    folder = Path(tempfile.mkdtemp(prefix="chatjudge-import-bench-"))
    trace = folder / "traces.jsonl"
    start = time.perf_counter()
    # In a process of its own: a child forked from a parent holding the spans would count
    # the parent's pages in its own peak RSS.
    written = subprocess.run(
        [sys.executable, __file__, "--write", str(trace), "--spans", str(args.spans)],
        check=True,
        capture_output=True,
        text=True,
    )
    print(
        f"synthesized {written.stdout.strip()} spans, {trace.stat().st_size / 2**20:.0f} MB "
        f"in {time.perf_counter() - start:.1f} s: {trace}"
    )
    for turns in ("last", "all"):
        print(json.dumps(import_once(trace, folder / f"rows-{turns}.jsonl", turns)))
    if not args.keep_file:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
