"""The Ray actor that holds one model on a worker and runs chatjudge's own call path.

The actor runs calls and nothing else: retries, rate limits, the store and the verdicts
stay with the driver, so a reply is committed once, where the ledger is. Calls arrive in
batches and their outcomes go back in groups (`chatjudge.ray_executor.channel` says how), so
Ray's cost of a task is shared by the calls of a round trip. A provider's `ModelError`
goes back as a value, not raised, so its type and retry policy cross the wire intact;
any other fault goes back as a `RuntimeError` naming it, masked.
"""

from __future__ import annotations

import asyncio
import os
import socket

import ray

from chatjudge.chat.types import ModelRequest, Reply
from chatjudge.errors import ChatJudgeError, ModelError
from chatjudge.ray_executor.worker_spec import WorkerSpec
from chatjudge.secrets import mask

# After the first outcome of a round trip, how long `pull` waits for others to join it:
# a little latency per call against fewer round trips, and so less of Ray's CPU per call
# (bench/README.md, `ray_executor.py`, has the figures that chose it).
LINGER = 0.003

Outcome = tuple[int, Reply | Exception]  # a call's id (the driver's) and its reply or fault


class ModelActor:
    def __init__(self, spec: WorkerSpec) -> None:
        # A model that cannot be built here (no key in this worker's environment, no
        # model file) is told by `ready`, before any call is sent.
        self.problem: ChatJudgeError | None = None
        try:
            self.model = spec.build()
        except ChatJudgeError as exc:
            self.problem = exc
        self._done: list[Outcome] = []
        self._ready = asyncio.Event()
        self._calls: set[asyncio.Task[None]] = set()
        self._puller = 0  # the latest `pull`: an older one (a driver loop gone) gives way

    def ready(self) -> ChatJudgeError | tuple[str, int | None]:
        """Where this worker runs and the calls its model takes at once (a local model's
        processes; None: no cap), or why its model could not be built."""
        if self.problem is not None:
            return self.problem
        return f"{socket.gethostname()}:{os.getpid()}", self.model.max_concurrency

    @ray.method(num_returns=0)  # nothing to answer: Ray sends the driver no reply
    async def submit(self, batch: list[tuple[int, ModelRequest]]) -> None:
        """Start every call of `batch`; their outcomes are collected by `pull`."""
        self._start(batch)

    def _start(self, batch: list[tuple[int, ModelRequest]]) -> None:
        for call_id, request in batch:
            task = asyncio.create_task(self._call(call_id, request))
            self._calls.add(task)
            task.add_done_callback(self._calls.discard)

    async def _call(self, call_id: int, request: ModelRequest) -> None:
        outcome: Reply | Exception
        try:
            outcome = await self.model.generate(request)
            outcome.text = mask(outcome.text)  # this worker's keys, which the driver may not know
        except ModelError as exc:  # its message was masked with this worker's keys
            outcome = exc
        except Exception as exc:  # a fault of the provider's code: the driver raises it
            outcome = RuntimeError(mask(f"{type(exc).__name__} in a Ray worker: {exc}"))
        self._done.append((call_id, outcome))
        self._ready.set()

    async def pull(self, batch: list[tuple[int, ModelRequest]]) -> list[Outcome]:
        """Start `batch`'s calls, then return the outcomes finished since the last pull,
        once there is at least one (and `LINGER` more seconds for others to join it);
        empty for a pull superseded by a newer one."""
        self._start(batch)
        self._puller += 1
        me = self._puller
        self._ready.set()  # wakes a superseded pull, which then returns empty
        while True:
            await self._ready.wait()
            if me != self._puller:
                return []
            if self._done:
                break
            self._ready.clear()
        if LINGER:
            await asyncio.sleep(LINGER)
            if me != self._puller:
                return []
        self._ready.clear()
        done, self._done = self._done, []
        return done

    async def aclose(self) -> None:
        for task in self._calls:
            task.cancel()
        await self.model.aclose()
