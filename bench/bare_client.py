"""The floor for the run-engine benchmark: a bare aiohttp loop sending the same prompts.

It renders the same synthetic interactivity-accuracy items as `run_engine.py`, sends
each as one chat-completions request to the stand-in server (its own process) with
C workers, parses the reply JSON and does nothing else: no store, no verdicts, no
results. chatjudge's CPU per call minus this is what chatjudge itself costs.

    python bench/bare_client.py [--n 5000] [--concurrency 100] [--latency 0.2]

`run_engine.py` runs it against its own server and dataset (`--base-url`, `--data`, `--json`)
to print this floor next to chatjudge's figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_engine import PROTOCOL, StubProcess, write_dataset  # noqa: E402

from chatjudge.data import Source, iter_items  # noqa: E402
from chatjudge.protocols import get_protocol  # noqa: E402


async def send_all(url: str, prompts: list[str], schema: dict, concurrency: int) -> None:
    pending = iter(prompts)
    fmt = {"type": "json_schema", "json_schema": {"name": "v", "schema": schema, "strict": True}}
    headers = {"Content-Type": "application/json"}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:

        async def worker() -> None:
            for prompt in pending:
                body = json.dumps(
                    {
                        "model": "stub",
                        "response_format": fmt,
                        "messages": [{"role": "user", "content": prompt}],
                    }
                )
                async with session.post(url, data=body, headers=headers) as response:
                    json.loads(await response.read())

        await asyncio.gather(*(worker() for _ in range(concurrency)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--data", type=Path, help="send this JSONL's items (default: --n new)")
    parser.add_argument("--base-url", help="a running server with latency --latency")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    args = parser.parse_args()
    protocol = get_protocol(PROTOCOL)
    with tempfile.TemporaryDirectory() as work:
        data = args.data or Path(work) / "data.jsonl"
        if args.data is None:
            write_dataset(data, args.n, seed=0)
        prompts = [protocol.render(i.text) for i in iter_items(Source(data), protocol.fields)]
    stub = None if args.base_url else StubProcess(args.latency, sys.executable)
    try:
        started, cpu = time.monotonic(), time.process_time()
        asyncio.run(
            send_all(
                (args.base_url or stub.base_url) + "/chat/completions",
                prompts,
                protocol.verdict_schema,
                args.concurrency,
            )
        )
        wall, cpu = time.monotonic() - started, time.process_time() - cpu
    finally:
        if stub is not None:
            stub.stop()
    n = len(prompts)
    ideal = args.concurrency / args.latency if args.latency else float("inf")
    rate = n / wall
    if args.json:
        print(json.dumps({"n": n, "rate": rate, "ratio": rate / ideal, "cpu_ms": 1000 * cpu / n}))
        return 0
    print(f"bare aiohttp: N={n} C={args.concurrency} L={args.latency}s")
    print(f"  calls/s {rate:.1f}  ratio to C/L {rate / ideal:.3f}")
    print(f"  CPU per call {1000 * cpu / n:.3f} ms (client process, sending loop only)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
