"""Worker processes running llama.cpp for the `local` judge, and what their crashes mean.

Each worker (`chatjudge.models.llama_worker`) loads the model once and answers one
request at a time. Several workers use several cores better than one process with
several threads: a small model's token-by-token decoding is bound by thread syncs,
so two single-threaded workers generate faster than one two-threaded one, and evaluate
prompts a little faster too (bench/README.md, `local_judge.py`).

Each worker keeps the KV cache of its last prompt, and llama.cpp reuses the longest
shared prefix. A free worker therefore takes, among the waiting requests, the one that
shares the longest prefix with the last prompt it evaluated: the flipped order of a
pairwise item goes to the worker that just judged the first order.

A worker that dies (SIGSEGV, SIGILL, an abort, the OOM killer) breaks the pool: the
call it was running and every later call fail with `LocalModelCrashError`, which
names the signal, the model file and the fix, and stops the run.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import signal
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from chatjudge.chat.types import Message
from chatjudge.errors import (
    BadRequestError,
    ChatJudgeWarning,
    LocalModelCrashError,
    ModelError,
    ModelLoadError,
)
from chatjudge.models.llama_build import SAFE_INSTALL, SAFE_INSTALL_DOC
from chatjudge.models.llama_worker import has_amx

STREAM_LIMIT = 1 << 24  # bytes in one protocol line (a long prompt's reply stays far below)
STOP_WAIT = 5.0  # seconds a worker gets to exit after its stdin closes
_ERRORS: dict[str, type[ModelError]] = {
    "BadRequestError": BadRequestError,
    "ModelLoadError": ModelLoadError,
}


@dataclass(eq=False)
class _Job:
    payload: bytes
    text: str  # the prompt's text, to match against a worker's cached prefix
    future: asyncio.Future[dict[str, Any]]


@dataclass(eq=False)
class _Worker:
    proc: asyncio.subprocess.Process
    stderr: collections.deque[str] = field(default_factory=lambda: collections.deque(maxlen=20))
    job: _Job | None = None
    last_text: str = ""
    system_info: str = ""
    drain: asyncio.Task[None] | None = None  # reads stderr into `stderr`


class LlamaPool:
    """`workers` llama.cpp processes for one GGUF file, started on the first call."""

    def __init__(
        self,
        model_path: Path,
        *,
        workers: int,
        threads: int,
        n_ctx: int,
        batch_threads: int | None = None,
        command: tuple[str, ...] = (sys.executable, "-m", "chatjudge.models.llama_worker"),
    ) -> None:
        """`threads` decode, `batch_threads` (default: as many) evaluate prompts; `command`
        starts one worker (tests give one that wraps the real worker)."""
        self.model_path = model_path
        self.command = command
        self.n_workers = workers
        self.threads = threads
        self.batch_threads = batch_threads or threads
        self.n_ctx = n_ctx
        self._workers: list[_Worker] = []
        self._idle: list[_Worker] = []
        self._pending: collections.deque[_Job] = collections.deque()
        self._tasks: list[asyncio.Task[None]] = []
        self._started: asyncio.Task[None] | None = None
        self._broken: ModelError | None = None
        self._next_id = 0

    @property
    def pids(self) -> list[int]:
        """The workers' process ids (tests kill them to check crash handling)."""
        return [w.proc.pid for w in self._workers]

    @property
    def busy_pids(self) -> list[int]:
        return [w.proc.pid for w in self._workers if w.job is not None]

    async def call(self, messages: Sequence[Message], schema: Any, settings: Any) -> dict[str, Any]:
        """Run one chat completion on a free worker; the reply's text, usage and timings."""
        if self._started is None:
            self._started = asyncio.ensure_future(self._start())
        await asyncio.shield(self._started)
        if self._broken is not None:
            raise self._broken
        self._next_id += 1
        payload = orjson.dumps(
            {"id": self._next_id, "messages": messages, "schema": schema, "settings": settings}
        )
        text = "".join(m["content"] for m in messages)
        job = _Job(payload + b"\n", text, asyncio.get_running_loop().create_future())
        self._pending.append(job)
        self._dispatch()
        try:
            return await job.future
        finally:
            if not job.future.done():  # cancelled while waiting: never send it
                with contextlib.suppress(ValueError):
                    self._pending.remove(job)

    async def aclose(self) -> None:
        """Close every worker's stdin (they exit), and kill those that do not within 5 s.

        The pool is then as new: a later call starts workers again (on its own event loop).
        """
        if self._started is not None and not self._started.done():
            self._started.cancel()
        for worker in self._workers:
            if worker.proc.stdin is not None and not worker.proc.stdin.is_closing():
                worker.proc.stdin.close()
        for worker in self._workers:
            try:
                await asyncio.wait_for(worker.proc.wait(), STOP_WAIT)
            except TimeoutError:
                worker.proc.kill()
                await worker.proc.wait()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._workers, self._idle, self._tasks = [], [], []
        self._pending.clear()
        self._started = self._broken = None

    async def _start(self) -> None:
        env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
        config = orjson.dumps(
            {
                "model_path": str(self.model_path),
                "n_ctx": self.n_ctx,
                "n_threads": self.threads,
                "n_threads_batch": self.batch_threads,
            }
        )
        for _ in range(self.n_workers):
            proc = await asyncio.create_subprocess_exec(
                *self.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                limit=STREAM_LIMIT,
                env=env,
            )
            assert proc.stdin is not None
            proc.stdin.write(config + b"\n")
            worker = _Worker(proc)
            worker.drain = asyncio.create_task(self._drain_stderr(worker))
            self._workers.append(worker)
            self._tasks.append(worker.drain)
        try:
            await asyncio.gather(*(self._ready(w) for w in self._workers))
        except ModelError as exc:
            self._broken = exc
            return
        if any(has_amx(w.system_info) for w in self._workers):
            warnings.warn(amx_warning(self.model_path), ChatJudgeWarning, stacklevel=2)
        for worker in self._workers:
            self._tasks.append(asyncio.create_task(self._read(worker)))
        self._idle.extend(self._workers)

    async def _ready(self, worker: _Worker) -> None:
        assert worker.proc.stdout is not None
        line = await worker.proc.stdout.readline()
        if not line:
            raise await self._death(worker, "while loading the model")
        message = orjson.loads(line)
        if "error" in message:
            raise ModelLoadError(message["error"]["message"])
        worker.system_info = message["system_info"]

    async def _drain_stderr(self, worker: _Worker) -> None:
        """Keep the last lines the worker printed: they go into a crash report."""
        assert worker.proc.stderr is not None
        async for line in worker.proc.stderr:
            worker.stderr.append(line.decode("utf-8", "replace").rstrip())

    async def _read(self, worker: _Worker) -> None:
        assert worker.proc.stdout is not None
        while line := await worker.proc.stdout.readline():
            reply = orjson.loads(line)
            job, worker.job = worker.job, None
            if job is not None and not job.future.done():
                error = reply.get("error")
                if error is None:
                    job.future.set_result(reply)
                else:
                    job.future.set_exception(
                        _ERRORS.get(error["type"], ModelError)(error["message"])
                    )
            self._idle.append(worker)
            self._dispatch()
        job, worker.job = worker.job, None
        self._break(await self._death(worker, "while judging" if job else "while idle"))
        if job is not None and not job.future.done():
            job.future.set_exception(self._broken or ModelError("llama.cpp worker ended"))

    def _break(self, error: ModelError) -> None:
        """A dead worker stops the pool: waiting calls fail, later calls fail at once."""
        if self._broken is None:
            self._broken = error
        self._idle = [w for w in self._idle if w.proc.returncode is None]
        while self._pending:
            job = self._pending.popleft()
            if not job.future.done():
                job.future.set_exception(self._broken)

    def _dispatch(self) -> None:
        """Give free workers waiting jobs, each the one sharing the longest prefix with it."""
        if self._broken is not None:
            self._break(self._broken)
            return
        while self._idle and self._pending:
            while self._pending and self._pending[0].future.done():
                self._pending.popleft()  # cancelled while waiting
            if not self._pending:
                return
            busy = [w for w in self._workers if w.job is not None]
            worker, job = _best_pair(self._idle, self._pending, busy)
            self._idle.remove(worker)
            self._pending.remove(job)
            worker.job, worker.last_text = job, job.text
            assert worker.proc.stdin is not None
            worker.proc.stdin.write(job.payload)

    async def _death(self, worker: _Worker, when: str) -> ModelError:
        code = await worker.proc.wait()
        if worker.drain is not None:  # the last lines it printed, up to its end of file
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(worker.drain), 1.0)
        tail = "\n".join(worker.stderr)
        return crash_error(code, worker.proc.pid, self.model_path, when, worker.system_info, tail)


def _best_pair(
    idle: list[_Worker], pending: collections.deque[_Job], busy: list[_Worker]
) -> tuple[_Worker, _Job]:
    """The free worker and waiting job to pair next.

    A job that shares more with the prompt a busy worker is running (the other order of
    the same pairwise item) is left for that worker while other jobs wait; among the rest,
    the longest prefix shared with the worker's cached prompt wins, then the oldest job.
    """
    best: tuple[int, int, int, int] | None = None  # (own job, prefix, -job index, -worker)
    chosen = (idle[0], pending[0])
    candidates = [j for j in list(pending)[:32] if not j.future.done()]
    for ji, job in enumerate(candidates):
        rival = max((common_prefix(w.last_text, job.text) for w in busy), default=0)
        for wi, worker in enumerate(idle):
            shared = common_prefix(worker.last_text, job.text)
            score = (int(shared >= rival), shared, -ji, -wi)
            if best is None or score > best:
                best, chosen = score, (worker, job)
    return chosen


def common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix, by bisection on slices (C-speed comparisons)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


_SIGNALS = {
    signal.SIGSEGV: "a segmentation fault",
    signal.SIGILL: "an illegal instruction: the build uses instructions this CPU lacks",
    signal.SIGABRT: "an abort inside llama.cpp",
    signal.SIGBUS: "a bus error",
    signal.SIGFPE: "a floating-point exception",
    signal.SIGKILL: "SIGKILL, most often the kernel's out-of-memory killer",
}


def crash_error(
    code: int, pid: int, model_path: Path, when: str, system_info: str, tail: str
) -> LocalModelCrashError:
    """The error a dead worker becomes: what killed it, the model, and what fixes it."""
    if code < 0:
        sig = signal.Signals(-code)
        what = f"was killed by {sig.name} ({_SIGNALS.get(sig, 'a signal')})"
    else:
        what = f"exited with status {code}"
    lines = [f"llama.cpp worker process {pid} {what} {when}, running {model_path}."]
    if has_amx(system_info):
        lines.append(
            "This llama-cpp-python build uses AMX (its system info says AMX_INT8 = 1); "
            "llama.cpp's AMX matrix multiply crashes on Intel Xeons (ggml-org/llama.cpp#20824)."
        )
    if code == -signal.SIGKILL:
        lines.append("If memory ran out, use fewer workers (--local-workers).")
    lines.append(f"Fix: rebuild llama-cpp-python safely: {SAFE_INSTALL}")
    lines.append(f"({SAFE_INSTALL_DOC})")
    if tail:
        lines.append("The worker's last output:\n" + tail)
    return LocalModelCrashError("\n".join(lines))


def amx_warning(model_path: Path) -> str:
    return (
        f"llama.cpp reports AMX (AMX_INT8 = 1) while loading {model_path}: this build was "
        "compiled for this CPU's AMX, whose matrix multiply crashes llama.cpp "
        f"(ggml-org/llama.cpp#20824). Rebuild it safely: {SAFE_INSTALL}"
    )
