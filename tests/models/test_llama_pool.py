"""The llama.cpp worker pool: real worker processes, really killed; prefix-affine dispatch."""

from __future__ import annotations

import asyncio
import collections
import os
import signal
import sys
from pathlib import Path

import pytest

from chatjudge.errors import ChatJudgeWarning, LocalModelCrashError
from chatjudge.models.llama_build import CMAKE_ARGS
from chatjudge.models.llama_pool import (
    LlamaPool,
    _best_pair,
    _Job,
    _Worker,
    common_prefix,
    crash_error,
)
from chatjudge.models.llama_worker import has_amx
from chatjudge.models.local import default_model_path

SETTINGS = {"temperature": 0.0, "max_tokens": 24, "seed": 0}
AMX_WORKER = (sys.executable, str(Path(__file__).parents[1] / "support" / "amx_worker.py"))
LONG = "Describe, one sentence at a time, how a lighthouse keeper spends a winter night. " * 40
MEDIUM = LONG[: len(LONG) // 5]


def pool(workers: int = 1, **kwargs: object) -> LlamaPool:
    return LlamaPool(default_model_path(), workers=workers, threads=1, n_ctx=4096, **kwargs)  # type: ignore[arg-type]


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


async def kill_mid_call(p: LlamaPool, sig: int) -> BaseException:
    """Start a long call, kill its worker while it runs, return what the call raised."""
    call = asyncio.create_task(p.call(user(LONG), None, {**SETTINGS, "max_tokens": 200}))
    while not p.busy_pids:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.2)  # inside llama.cpp, evaluating the prompt
    os.kill(p.busy_pids[0], sig)
    with pytest.raises(LocalModelCrashError) as exc:
        await call
    return exc.value


async def test_a_worker_killed_by_sigsegv_mid_call_is_a_clear_fatal_error() -> None:
    p = pool()
    try:
        error = await kill_mid_call(p, signal.SIGSEGV)
        text = str(error)
        assert error.fatal
        assert "killed by SIGSEGV (a segmentation fault) while judging" in text
        assert str(default_model_path()) in text
        assert CMAKE_ARGS in text and "--no-cache-dir" in text  # the fix, as one command
        with pytest.raises(LocalModelCrashError, match="SIGSEGV"):  # the pool stays broken
            await p.call(user("Hello"), None, SETTINGS)
    finally:
        await p.aclose()


async def test_queued_calls_fail_with_the_crash_while_the_other_worker_finishes() -> None:
    p = pool(workers=2)
    try:
        await p.call(user("Warm up."), None, SETTINGS)  # both workers loaded
        # One of the two is killed at once; the other runs to its end: short enough to
        # cost little (~150 prompt tokens), long enough to be running at the kill.
        first = asyncio.create_task(p.call(user(MEDIUM), None, SETTINGS))
        second = asyncio.create_task(p.call(user(MEDIUM + "!"), None, SETTINGS))
        queued = asyncio.create_task(p.call(user("Queued."), None, SETTINGS))
        while len(p.busy_pids) < 2:
            await asyncio.sleep(0.01)
        victim = p.busy_pids[0]
        os.kill(victim, signal.SIGSEGV)
        results = await asyncio.gather(first, second, queued, return_exceptions=True)
        crashed = [r for r in results if isinstance(r, LocalModelCrashError)]
        finished = [r for r in results if isinstance(r, dict)]
        assert len(finished) == 1 and finished[0]["text"]  # the live worker's call completed
        assert len(crashed) == 2  # the killed call and the one waiting behind it
        assert all(f"process {victim}" in str(c) for c in crashed)
    finally:
        await p.aclose()


async def test_an_amx_build_is_reported_at_load_and_named_in_a_crash() -> None:
    p = pool(command=AMX_WORKER)
    try:
        with pytest.warns(ChatJudgeWarning, match=r"AMX.*llama.cpp#20824.*GGML_NATIVE=OFF"):
            reply = await p.call(user("Say hi."), None, SETTINGS)
        assert reply["text"]
        error = await kill_mid_call(p, signal.SIGSEGV)
        assert "uses AMX" in str(error) and "ggml-org/llama.cpp#20824" in str(error)
    finally:
        await p.aclose()


async def test_a_free_worker_takes_the_request_sharing_its_cached_prefix() -> None:
    x = "Topic X: the history of tea clippers and the ports they sailed between. " * 10
    y = "Topic Y: how glaciers carve valleys, cirques and moraines over millennia. " * 10
    short = {**SETTINGS, "max_tokens": 2}  # what is evaluated is the point, not the reply
    p = pool(workers=2)
    try:
        await asyncio.gather(*(p.call(user(t + " First."), None, short) for t in (x, y)))
        replies = await asyncio.gather(*(p.call(user(t + " Second."), None, short) for t in (y, x)))
        for reply in replies:  # each went to the worker holding its topic in the KV cache
            assert reply["timings"]["prompt_evaluated"] < reply["input_tokens"] / 4
    finally:
        await p.aclose()


async def test_workers_exit_when_the_pool_closes_and_a_later_call_starts_new_ones() -> None:
    p = pool(workers=2)
    first = await p.call(user("Hello."), None, SETTINGS)
    pids = p.pids
    await p.aclose()
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)  # exited and reaped
    try:
        assert (await p.call(user("Hello."), None, SETTINGS))["text"] == first["text"]
        assert set(p.pids).isdisjoint(pids)
    finally:
        await p.aclose()


def test_common_prefix() -> None:
    assert common_prefix("", "abc") == 0
    assert common_prefix("abc", "abc") == 3
    assert common_prefix("abcdef", "abcxyz") == 3
    assert common_prefix("a" * 5000 + "b", "a" * 5000 + "c") == 5000


def test_best_pair_prefers_the_longest_shared_prefix_then_the_oldest_job() -> None:
    loop = asyncio.new_event_loop()
    try:
        workers = [_Worker(proc=None, last_text=t) for t in ("instructions|item 7|", "xyz")]  # type: ignore[arg-type]
        jobs = [_Job(b"", t, loop.create_future()) for t in ("other", "instructions|item 7|B", "x")]
        assert _best_pair(workers, collections.deque(jobs), []) == (workers[0], jobs[1])
        no_match = [_Job(b"", t, loop.create_future()) for t in ("q1", "q2")]
        assert _best_pair(workers[1:], collections.deque(no_match), [])[1] is no_match[0]
    finally:
        loop.close()


def test_best_pair_leaves_the_other_order_to_the_worker_running_the_first() -> None:
    """Both orders of a pairwise item share the long prefix up to Response A: the second
    waits for the worker judging the first, while the free worker takes the next item."""
    loop = asyncio.new_event_loop()
    try:
        running = _Worker(proc=None, last_text="rules|item 1|A=x B=y")  # type: ignore[arg-type]
        free = _Worker(proc=None, last_text="rules|item 0|A=y B=x")  # type: ignore[arg-type]
        second_order = _Job(b"", "rules|item 1|A=y B=x", loop.create_future())
        next_item = _Job(b"", "rules|item 2|A=x B=y", loop.create_future())
        pending = collections.deque([second_order, next_item])
        assert _best_pair([free], pending, [running]) == (free, next_item)
        alone = collections.deque([second_order])  # nothing else to do: keep the core busy
        assert _best_pair([free], alone, [running]) == (free, second_order)
    finally:
        loop.close()


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (-signal.SIGSEGV, "killed by SIGSEGV (a segmentation fault)"),
        (-signal.SIGILL, "killed by SIGILL (an illegal instruction"),
        (-signal.SIGABRT, "killed by SIGABRT (an abort inside llama.cpp)"),
        (-signal.SIGKILL, "use fewer workers (--local-workers)"),
        (3, "exited with status 3"),
    ],
)
def test_crash_error_names_what_happened(code: int, expected: str) -> None:
    error = crash_error(code, 42, Path("/m/model.gguf"), "while judging", "AVX2 = 1 |", "boom")
    text = str(error)
    assert expected in text and "process 42" in text and "/m/model.gguf" in text
    assert "AMX" not in text and text.endswith("boom")


def test_has_amx() -> None:
    assert has_amx("CPU : SSE3 = 1 | AVX2 = 1 | AMX_INT8 = 1 | OPENMP = 1 |")
    assert not has_amx("CPU : SSE3 = 1 | AVX2 = 1 | AMX_INT8 = 0 |")
    assert not has_amx("CPU : SSE3 = 1 | AVX2 = 1 | F16C = 1 |")
