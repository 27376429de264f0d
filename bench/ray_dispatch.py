"""Ray dispatch benchmark: `RemoteModel` driven directly, without the run engine.

What the batching in `chatjudge.ray_executor.channel` costs and saves, apart from the rest of
a run: N calls at concurrency C through 2 Ray workers to the stand-in server (its own
process, latency L), on a local cluster started here. Prints calls/s (and its ratio to
C/L), the driver's and the workers' CPU per call, and the calls per Ray round trip
(submits and pulls). To compare choices (`LINGER` in `chatjudge/ray_executor/actor.py`), edit
the constant and run again: the workers import it afresh.

    python bench/ray_dispatch.py                  # N=5,000 C=100 L=0.2
    python bench/ray_dispatch.py --n 10000 --concurrency 256 --latency 0
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

import ray

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ray_executor import _processes  # noqa: E402
from run_engine import StubProcess  # noqa: E402

from chatjudge.chat.types import ModelRequest  # noqa: E402
from chatjudge.models import get_model  # noqa: E402
from chatjudge.options import ClientOptions  # noqa: E402
from chatjudge.ray_executor.actor import LINGER  # noqa: E402
from chatjudge.ray_executor.remote import RemoteModel, start  # noqa: E402
from chatjudge.ray_executor.worker_spec import WorkerSpec  # noqa: E402

WARM_UP = 200


def _workers_cpu() -> float:
    return sum(_processes("ray::ModelActor").values())


async def _measure(remote: RemoteModel, n: int, concurrency: int) -> tuple[float, float, float]:
    """(wall seconds, driver CPU seconds, workers' CPU seconds) of n calls after a warm-up."""
    requests = [
        ModelRequest([{"role": "user", "content": f"Question {i}: " + "x" * 400}])
        for i in range(n + WARM_UP)
    ]
    limit = asyncio.Semaphore(concurrency)

    async def one(request: ModelRequest) -> None:
        async with limit:
            await remote.generate(request)

    await asyncio.gather(*map(one, requests[:WARM_UP]))
    wall, cpu, workers = time.perf_counter(), time.process_time(), _workers_cpu()
    await asyncio.gather(*map(one, requests[WARM_UP:]))
    return (
        time.perf_counter() - wall,
        time.process_time() - cpu,
        _workers_cpu() - workers,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--n", type=int, default=5_000)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "dummy")
    stub = StubProcess(args.latency, sys.executable)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        model = get_model("openai/stub", ClientOptions(base_url=(stub.base_url,)))
        remote = start(model, WorkerSpec.of(model), args.workers, args.concurrency)
        trips = sum(w.round_trips for w in remote.workers)

        async def run() -> tuple[float, float, float]:
            try:
                return await _measure(remote, args.n, args.concurrency)
            finally:
                await remote.aclose()

        wall, cpu, workers = asyncio.run(run())
        trips = sum(w.round_trips for w in remote.workers) - trips
    finally:
        ray.shutdown()
        stub.stop()
    rate = args.n / wall
    ratio = f" ratio {rate * args.latency / args.concurrency:.3f}" if args.latency else ""
    print(
        f"LINGER={LINGER * 1e3:g} ms N={args.n:,} C={args.concurrency} L={args.latency:g}s: "
        f"{rate:,.0f} calls/s{ratio}; driver {cpu / args.n * 1e3:.3f} ms/call, workers "
        f"{workers / args.n * 1e3:.3f} ms/call; {(args.n + WARM_UP) / trips:.1f} calls "
        "per round trip"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
