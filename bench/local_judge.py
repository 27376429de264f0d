"""The embedded `local` judge: where a judgment's time goes, and how close each layout of
llama.cpp worker processes comes to what llama.cpp itself reaches on this machine.

For each protocol, the bundled example (every call the CLI would make, both orders for
pairwise) is judged through chatjudge's worker pool in several layouts:
  baseline   1 worker, 1 thread decoding, 2 evaluating prompts (the in-process judge before)
  1x2        1 worker, 2 threads
  Wx1        W single-threaded workers (W = 2 on a 2-core machine: chatjudge's default)
and for each it prints items/s, prompt tokens evaluated/s (what the KV cache did not already
hold), generated tokens/s, and the ratio of items/s to the ideal: the items/s of llama.cpp
running at its own measured speed (prompt and generation, no grammar, no Python) on the
same tokens. That limit is measured with the same build and model, in the same layout:
each process evaluates a 1,024-token prompt, then decodes 128 tokens after 896 tokens of
context (a judge prompt's length), all processes at once.

    python bench/local_judge.py                 # both protocols, every layout (~9 min, 2 cores)
    python bench/local_judge.py --quick         # 4 items per protocol
    python bench/local_judge.py --layouts 2x1 --protocols pairwise-chat-quality

Replies are compared across layouts: at temperature 0 they must be the same text.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
SETTINGS = {"temperature": 0.0, "max_tokens": 1024, "seed": None}  # what `chatjudge run` sends
N_CTX = 8192


@dataclass(frozen=True)
class Layout:
    name: str
    workers: int
    threads: int
    batch_threads: int


@dataclass
class Figures:
    items: int
    calls: int
    seconds: float
    load_seconds: float
    prompt_tokens: int  # as the model saw them
    prompt_evaluated: int  # those not already in a worker's KV cache
    generated: int
    prompt_ms: float  # summed over calls (workers run at once)
    generation_ms: float
    median_call: float
    texts: list[str]


def layouts(cores: int, wanted: list[str] | None) -> list[Layout]:
    """The baseline, then the layouts asked for as WORKERSxTHREADS (default: 1x2 and Wx1)."""
    names = wanted or ["1x2", *sorted({f"{w}x1" for w in (2, cores) if w >= 2})]
    found = [Layout("baseline", 1, 1, min(cores, 2))] if not wanted or "baseline" in wanted else []
    for name in names:
        if name != "baseline":
            workers, threads = (int(n) for n in name.split("x"))
            found.append(Layout(name, workers, threads, threads))
    return found


def calls_for(protocol_name: str, limit: int | None) -> tuple[int, list[list[dict[str, str]]]]:
    """The judge prompts `chatjudge run` would send for the bundled example, in its order."""
    from chatjudge.data import Source, iter_items
    from chatjudge.protocols import get_protocol

    protocol = get_protocol(protocol_name)
    path = EXAMPLES / (protocol_name.replace("-", "_") + ".jsonl")
    items = list(iter_items(Source(path), protocol.fields, limit=limit))
    orders = (False, True) if protocol.kind == "pairwise" else (False,)
    prompts = [protocol.render(i.text, flipped=f) for i in items for f in orders]
    return len(items), [[{"role": "user", "content": p}] for p in prompts]


async def judge_all(layout: Layout, protocol_name: str, limit: int | None) -> Figures:
    from chatjudge.models.llama_pool import LlamaPool
    from chatjudge.models.local import default_model_path
    from chatjudge.protocols import get_protocol

    schema = get_protocol(protocol_name).verdict_schema
    n_items, calls = calls_for(protocol_name, limit)
    pool = LlamaPool(
        default_model_path(),
        workers=layout.workers,
        threads=layout.threads,
        batch_threads=layout.batch_threads,
        n_ctx=N_CTX,
    )
    try:
        started = time.perf_counter()
        await asyncio.gather(
            *(
                pool.call([{"role": "user", "content": "Hi."}], None, {**SETTINGS, "max_tokens": 1})
                for _ in range(layout.workers)
            )
        )
        load = time.perf_counter() - started
        lookahead = asyncio.Semaphore(2 * layout.workers)  # as the engine bounds a local judge

        async def one(messages: list[dict[str, str]]) -> tuple[float, dict[str, Any]]:
            async with lookahead:
                t = time.perf_counter()
                reply = await pool.call(messages, schema, SETTINGS)
                return time.perf_counter() - t, reply

        started = time.perf_counter()
        done = await asyncio.gather(*(one(m) for m in calls))
        seconds = time.perf_counter() - started
    finally:
        await pool.aclose()
    replies = [r for _, r in done]
    return Figures(
        items=n_items,
        calls=len(calls),
        seconds=seconds,
        load_seconds=load,
        prompt_tokens=sum(r["input_tokens"] for r in replies),
        prompt_evaluated=sum(r["timings"]["prompt_evaluated"] for r in replies),
        generated=sum(r["timings"]["generated"] for r in replies),
        prompt_ms=sum(r["timings"]["prompt_ms"] for r in replies),
        generation_ms=sum(r["timings"]["generation_ms"] for r in replies),
        median_call=statistics.median(t for t, _ in done),
        texts=[r["text"] for r in replies],
    )


def _raw_speed(args: tuple[str, int, int, Any]) -> tuple[float, float]:
    """In a fresh process: llama.cpp's own prompt and decode speed (tokens/s), no grammar."""
    model_path, threads, batch_threads, barrier = args
    import llama_cpp

    llm = llama_cpp.Llama(
        model_path=model_path,
        n_ctx=N_CTX,
        n_threads=threads,
        n_threads_batch=batch_threads,
        verbose=False,
    )
    text = (EXAMPLES / "interactivity_accuracy.jsonl").read_text(encoding="utf-8")
    tokens = llm.tokenize(text.encode())[:1024]
    barrier.wait()  # every process measures at the same time, sharing the cores as workers do
    best_prompt = 0.0
    for _ in range(2):
        llm.reset()
        t = time.perf_counter()
        llm.eval(tokens)
        best_prompt = max(best_prompt, len(tokens) / (time.perf_counter() - t))
    llm.reset()
    llm.eval(tokens[:896])  # decode after a judge prompt's length of context, as judging does
    t = time.perf_counter()
    for token in tokens[896:1024]:
        llm.eval([token])
    return best_prompt, 128 / (time.perf_counter() - t)


def llama_limit(layout: Layout) -> tuple[float, float]:
    """Aggregate prompt and decode tokens/s of `layout.workers` raw llama.cpp processes."""
    from chatjudge.models.local import default_model_path

    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager, ProcessPoolExecutor(layout.workers, context) as pool:
        barrier = manager.Barrier(layout.workers)
        args = (str(default_model_path()), layout.threads, layout.batch_threads, barrier)
        speeds = list(pool.map(_raw_speed, [args] * layout.workers))
    return sum(p for p, _ in speeds), sum(g for _, g in speeds)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="4 items per protocol")
    parser.add_argument("--layouts", help="comma-separated: baseline,1x2,2x1,...")
    parser.add_argument("--protocols", default="pairwise-chat-quality,interactivity-accuracy")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    chosen = layouts(cores, args.layouts.split(",") if args.layouts else None)
    limit = 4 if args.quick else None
    import llama_cpp

    print(f"llama-cpp-python {llama_cpp.__version__}, {cores} cores")
    print(llama_cpp.llama_print_system_info().decode().strip())
    limits = {lay.name: llama_limit(lay) for lay in chosen}
    for lay in chosen:
        pp, tg = limits[lay.name]
        print(
            f"llama.cpp alone, {lay.name:>8} ({lay.workers} process(es), {lay.threads} "
            f"decode / {lay.batch_threads} prompt threads): prompt {pp:6.0f} tok/s, "
            f"decode {tg:5.1f} tok/s"
        )
    for protocol in args.protocols.split(","):
        print(f"\n{protocol}")
        print(
            f"{'layout':>9} {'items':>5} {'calls':>5} {'wall s':>7} {'items/s':>8} "
            f"{'x base':>6} {'median':>7} {'prompt tok':>10} {'evaluated':>9} {'eval tok/s':>10} "
            f"{'gen tok':>7} {'gen tok/s':>9} {'ideal s':>7} {'ratio':>5} same"
        )
        reference: Figures | None = None
        for lay in chosen:
            fig = asyncio.run(judge_all(lay, protocol, limit))
            reference = reference or fig
            pp, tg = limits[lay.name]
            ideal = fig.prompt_evaluated / pp + fig.generated / tg  # llama.cpp at its own speed
            rate = fig.items / fig.seconds
            print(
                f"{lay.name:>9} {fig.items:>5} {fig.calls:>5} {fig.seconds:>7.1f} {rate:>8.3f} "
                f"{rate / (reference.items / reference.seconds):>6.2f} {fig.median_call:>6.1f}s "
                f"{fig.prompt_tokens:>10} {fig.prompt_evaluated:>9} "
                f"{fig.prompt_evaluated / fig.seconds:>10.0f} {fig.generated:>7} "
                f"{fig.generated / fig.seconds:>9.1f} {ideal:>7.1f} {ideal / fig.seconds:>5.2f} "
                f"{'yes' if fig.texts == reference.texts else 'NO'}"
            )
    print(
        "\nx base: items/s over the first layout's; ratio: ideal seconds / wall seconds, where "
        "ideal = evaluated / prompt limit + generated / decode limit of that layout; "
        "same: replies identical to the first layout's."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
