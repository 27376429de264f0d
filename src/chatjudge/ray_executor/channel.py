"""The driver's end of one Ray worker: calls queued, sent in batches, outcomes pulled back.

A Ray actor call costs the driver more CPU (the task's submission, its reply) than the
rest of a judge call. So calls do not each become
a task. One `pull` is kept open per worker: it returns every outcome finished meanwhile
(after a few milliseconds' `LINGER`, so that they come in groups) and carries the calls
made since the last one. Those answered by a pull make their next calls in the loop's
next turn, and the next pull leaves after that turn with them; calls made while a pull
is open go as one `submit` per turn of the loop (which returns nothing, so Ray sends no
reply). bench/ray_executor.py: 7 to 40 calls per round trip. Admission (rate limits,
budget) and the store stay per call, on the driver, above this.

A worker lost (its node gone, `ray.kill`) fails every call it had as `WorkerLostError`,
which the driver's policy retries on the others.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from chatjudge.chat.types import ModelRequest, Reply
from chatjudge.errors import WorkerLostError


class Channel:
    def __init__(self, actor: Any, label: str) -> None:
        """`label`: the worker as messages name it (`Ray worker 1 of openai/gpt`)."""
        self.actor = actor
        self.label = label
        self.in_flight = 0  # calls sent and not answered: what least-loaded dispatch reads
        self.lost: str | None = None  # why the worker is gone
        self.round_trips = 0  # Ray messages sent (submits and pulls): calls per round trip
        self._ids = itertools.count()
        self._waiting: dict[int, asyncio.Future[Reply]] = {}
        self._outbox: list[tuple[int, ModelRequest]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._puller: asyncio.Task[None] | None = None
        self._flush_due = False
        self._pull_open = False  # a pull is at the worker: calls queued now need a submit

    def call(self, request: ModelRequest) -> asyncio.Future[Reply]:
        """The reply to `request`, once the worker has sent it (raises its fault)."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self._bind(loop)
        future: asyncio.Future[Reply] = loop.create_future()
        if self.lost is not None:
            future.set_exception(WorkerLostError(self.lost))
            return future
        call_id = next(self._ids)
        self._waiting[call_id] = future
        self._outbox.append((call_id, request))
        self.in_flight += 1
        if not self._flush_due:
            self._flush_due = True
            loop.call_soon(self._flush)
        return future

    def _bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """Serve calls from `loop` (a run's event loop). A previous loop's calls ended
        with it; its pull, still open on the worker, gives way to this loop's."""
        self._waiting, self._outbox, self.in_flight = {}, [], 0
        self._loop = loop
        self._flush_due = False
        if self.lost is None:
            self._puller = loop.create_task(self._pull(), name=f"chatjudge-pull:{self.label}")

    def _flush(self) -> None:
        """Send the calls queued in this turn of the loop, unless the next pull, about
        to leave, carries them."""
        self._flush_due = False
        if self._outbox and self._pull_open and self.lost is None:
            batch, self._outbox = self._outbox, []
            self.actor.submit.remote(batch)
            self.round_trips += 1

    async def _pull(self) -> None:
        """Deliver the worker's outcomes until it is lost or the channel closes; any fault
        here fails the calls waiting (none is left waiting for ever)."""
        try:
            while True:
                batch, self._outbox = self._outbox, []
                self.round_trips += 1
                self._pull_open = True
                try:
                    outcomes = await self.actor.pull.remote(batch)
                finally:
                    self._pull_open = False
                self._deliver(outcomes)
                # One turn of the loop: the callers answered make their next calls, which
                # the next pull then carries (no submit of their own).
                await asyncio.sleep(0)
        except Exception as exc:  # RayActorError and the like: the worker is gone
            self.lost = f"{self.label} was lost: {_first_line(exc)}"
            self._fail(WorkerLostError, self.lost)

    def _deliver(self, outcomes: list[tuple[int, Reply | Exception]]) -> None:
        for call_id, outcome in outcomes:
            future = self._waiting.pop(call_id, None)
            if future is None:
                continue
            self.in_flight -= 1
            if future.done():  # its caller gave up (a timeout)
                continue
            if isinstance(outcome, Exception):
                future.set_exception(outcome)
            else:
                future.set_result(outcome)

    def _fail(self, kind: type[Exception], why: str) -> None:
        """Fail every call waiting here (each with its own exception object)."""
        waiting, self._waiting = self._waiting, {}
        self._outbox = []
        self.in_flight = 0
        for future in waiting.values():
            if not future.done():
                future.set_exception(kind(why))

    async def close(self) -> None:
        """Stop pulling; calls still waiting fail (the run is over)."""
        puller, self._puller = self._puller, None
        if puller is not None and self._loop is asyncio.get_running_loop():
            puller.cancel()
            await asyncio.gather(puller, return_exceptions=True)
        self.lost = self.lost or f"{self.label} was closed"
        self._fail(WorkerLostError, self.lost)


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
