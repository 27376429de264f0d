"""The layer above the providers: every model call of a run goes through a `Caller`.

A caller is one model as the run uses it: its call policy (retries with back-off,
the per-attempt timeout, rate limits) and the concurrency cap the model imposes.
Judges, models under test and simulated users all call through one; what a reply
means (a verdict, a turn) is the caller's user's business.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

from chatjudge.calls.budget import Meter
from chatjudge.calls.policy import CallPolicy
from chatjudge.chat.types import ModelRequest, Reply
from chatjudge.errors import ModelError
from chatjudge.models import Model
from chatjudge.secrets import mask


class Caller:
    def __init__(
        self, model: Model, policy: CallPolicy, concurrency: int, meter: Meter | None = None
    ) -> None:
        """`concurrency`: the run's calls in flight; a model capping its own below that
        (a local worker pool) gets a semaphore, otherwise the run's workers are the bound.
        `meter`: the command's budget at this model's price (`--max-cost-usd`)."""
        self.model = model
        self.policy = policy
        self.meter = meter
        cap = model.max_concurrency
        self._limit = asyncio.Semaphore(cap) if cap and cap < concurrency else None

    async def send(self, request: ModelRequest) -> tuple[Reply, float]:
        """One call under the policy: the reply, and the latency of the attempt that gave it
        (not the queueing or the back-off before it). Raises the last `ModelError`, or
        `BudgetReached` when the budget refuses an attempt (which is then not sent). When
        attempts wait for the budget, the unit of work it is for (`unit.Unit.order`) says
        its place."""
        started = 0.0
        worst = 0.0
        meter = self.meter

        async def admit() -> None:  # each attempt, outside its timeout: it may wait
            nonlocal worst
            assert meter is not None
            worst = await meter.admit(request)

        async def attempt() -> Reply:
            nonlocal started
            started = time.monotonic()
            if meter is None:
                return await self.model.generate(request)
            try:
                reply = await self.model.generate(request)
            except ModelError as exc:  # an error status: refused, not billed
                meter.settle(worst, None, billed=exc.status is None)
                raise
            except BaseException:  # cancelled at the attempt's timeout: it may have run
                meter.settle(worst, None, billed=True)
                raise
            meter.settle(worst, reply, billed=True)
            return reply

        tokens = sum(len(m["content"]) for m in request.messages) // 4
        async with self._limit or contextlib.nullcontext():
            reply = await self.policy.call(
                attempt, tokens=tokens, admit=None if meter is None else admit
            )
        reply.text = mask(reply.text)  # a reply may echo a key: none reaches the store
        return reply, time.monotonic() - started
