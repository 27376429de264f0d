"""`--max-cost-usd`: what a command may spend, and the admission of each call against it.

Each attempt at a call is admitted only if its worst case fits what is left: its input
tokens, bounded by the UTF-8 bytes of its messages (every byte-level BPE tokenizer,
OpenAI's, Anthropic's, Llama's and Gemini's byte fallback, makes at most one token of a
byte; a few tokens per message frame it) or, near the limit, counted by the model's own
tokenizer where it is exact, and its output at its cap (`max_tokens`), at the model's
price (its top tier above a tier's start). While it runs, that worst case is reserved;
its reply's reported tokens then replace it (a reply without usage is charged its worst
case; an attempt that timed out or lost its connection too, as the provider may bill it).

An attempt whose worst case does not fit beside the reservations in flight waits for
them to settle: how far a command gets depends on its money, not on its concurrency.
Waiting attempts go in order (the `order` of the unit of work they are for, `unit.Unit`:
a conversation or item started earlier first, then first come), and one that does not
fit holds back those behind it, so a budget finishes what was started rather than
starting more; `simulate` also starts a conversation only as the money left could finish
those under way (`Starts`). The budget is reached only when nothing is in flight and the
next attempt's worst case does not fit: the spend then ends less than one worst case
below the limit. From then on no attempt starts, and the command stops where it is. A
reply that held no verdict and was asked again is paid for but not kept (the store keeps
the last reply of a call), so when the budget refuses the asking again, the resumed run
pays for that call once more. A server that ignores `max_tokens` is charged the tokens
it reports, so it can take the spend over the limit by what its replies ran past their
cap (the summaries count them: `over_cap_replies`).

The budget is this command's: calls the store answers cost nothing, so the same command
with a larger budget resumes without paying twice for what it already holds.
"""

from __future__ import annotations

import asyncio
import heapq
from collections.abc import Callable, Mapping
from typing import Any

from chatjudge import jsoncodec
from chatjudge.calls.prices import Price, at_official_endpoint
from chatjudge.calls.unit import current
from chatjudge.chat.types import Message, ModelRequest, Reply
from chatjudge.errors import BudgetReached, BudgetReachedError, UsageError
from chatjudge.formats.cost import BudgetRecord
from chatjudge.models import Model

FRAME_TOKENS = 8  # a message's role and delimiters, a generous bound for every chat format


def input_bound(messages: list[Message]) -> int:
    """At most this many input tokens: bytes, plus each message's frame."""
    return sum(len(m["content"].encode()) + FRAME_TOKENS for m in messages) + FRAME_TOKENS


class Budget:
    """The command's limit in USD, what its calls cost so far and what calls in flight may
    still cost; shared by every model of the command, on one event loop."""

    __slots__ = ("_arrivals", "_granting", "_waiting", "in_flight", "largest_usd", "limit_usd",
                 "reached", "reserved_usd", "spent_usd")  # fmt: skip

    def __init__(self, limit_usd: float) -> None:
        self.limit_usd = limit_usd
        self.spent_usd = 0.0
        self.reserved_usd = 0.0
        self.in_flight = 0  # attempts holding a reservation
        self.largest_usd = 0.0  # the largest worst case asked for so far
        self.reached = False
        # Attempts waiting for room: a heap of (order, arrival, worst case, their grant).
        self._waiting: list[tuple[int, int, float, asyncio.Future[None]]] = []
        self._arrivals = 0
        self._granting = False  # a grant is scheduled

    def fits(self, worst_usd: float) -> bool:
        """Whether `worst_usd` fits beside what is spent and reserved now."""
        return self.spent_usd + self.reserved_usd + worst_usd <= self.limit_usd

    def take(self, worst_usd: float) -> bool:
        """Reserve `worst_usd` at once if it fits and no attempt waits (the fast path: a few
        additions); False: the attempt must `wait`."""
        if self._waiting or self.reached or not self.fits(worst_usd):
            return False
        self.reserved_usd += worst_usd
        self.in_flight += 1
        return True

    async def wait(self, worst_usd: float, order: int = 0) -> None:
        """Reserve `worst_usd` once it fits and every attempt waiting before it (lower
        `order`, then earlier) has gone; raises `BudgetReached` when it never can."""
        if self.reached:
            raise self._refusal(worst_usd)
        grant: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._arrivals += 1
        heapq.heappush(self._waiting, (order, self._arrivals, worst_usd, grant))
        self._grant()
        try:
            await grant
        except asyncio.CancelledError:  # granted as it was cancelled: give the room back
            if grant.done() and not grant.cancelled() and grant.exception() is None:
                self.settle(worst_usd, 0.0)
            raise

    def settle(self, worst_usd: float, actual_usd: float) -> None:
        """An attempt ended: its reservation becomes what it cost, and the attempts waiting
        get the room it leaves, at the event loop's next turn: the task that settled asks
        for its next call first (without waiting in between), so that call goes in line by
        its order, before a conversation or item started later."""
        self.in_flight -= 1
        self.reserved_usd = self.reserved_usd - worst_usd if self.in_flight else 0.0
        self.spent_usd += actual_usd
        if self._waiting and not self._granting:
            self._granting = True
            asyncio.get_running_loop().call_soon(self._grant)

    def record(self, done: int, total: int) -> BudgetRecord:
        """The summary's account: the limit, whether it stopped the command, how far it got."""
        return BudgetRecord(
            max_usd=self.limit_usd,
            spent_usd=round(self.spent_usd, 6),
            reached=self.reached,
            done=done,
            total=total,
        )

    def _grant(self) -> None:
        """Admit the waiting attempts in order while the first fits; when it does not and
        nothing is in flight to make room, the budget is reached: every one is refused."""
        self._granting = False
        waiting = self._waiting
        while waiting:
            _, _, worst, grant = waiting[0]
            if grant.done():  # cancelled while it waited
                heapq.heappop(waiting)
            elif self.fits(worst):
                heapq.heappop(waiting)
                self.reserved_usd += worst
                self.in_flight += 1
                grant.set_result(None)
            elif self.in_flight == 0:
                self.reached = True
                for _, _, worst, grant in waiting:
                    if not grant.done():
                        grant.set_exception(self._refusal(worst))
                waiting.clear()
            else:
                return

    def _refusal(self, worst_usd: float) -> BudgetReached:
        return BudgetReached(
            f"the budget of ${self.limit_usd:g} is reached: ${self.spent_usd:.4f} spent, "
            f"and the next call could cost up to ${worst_usd:.4f}"
        )


class Meter:
    """One model's attempts against the command's budget, at that model's price.

    Each attempt is admitted, not each call: a retried call pays for every attempt a
    provider may bill. The byte bound is tried first (a few additions); the model's
    own tokenizer, where one is exact, only when the bound would not fit now, so counting
    costs nothing while the budget is far."""

    __slots__ = ("budget", "count", "price")

    def __init__(
        self, budget: Budget, price: Price, count: Callable[[list[Message]], int] | None = None
    ) -> None:
        """`count`: the model's exact input tokens, where its tokenizer is known here."""
        assert price.known  # `budget_for` checks
        self.budget = budget
        self.price = price
        self.count = count

    def worst(self, request: ModelRequest) -> float:
        """What one attempt at `request` could cost at most."""
        extra = len(jsoncodec.dumps(request.schema.schema)) if request.schema else 0
        cap = request.settings.max_tokens
        worst = self.price.usd(input_bound(request.messages) + extra, cap)
        if self.count is not None and not self.budget.fits(worst):
            worst = self.price.usd(self.count(request.messages) + extra, cap)
        return worst

    async def admit(self, request: ModelRequest) -> float:
        """Reserve one attempt's worst case (returned, for `settle`), waiting for room in
        the order of the unit of work it is for (`unit.Unit.order`, `Budget.wait`); raises
        `BudgetReached`."""
        worst = self.worst(request)
        budget = self.budget
        if worst > budget.largest_usd:
            budget.largest_usd = worst
        if not budget.take(worst):
            await budget.wait(worst, current().order)
        return worst

    def settle(self, worst: float, reply: Reply | None, billed: bool) -> None:
        """What the attempt cost: its reply's tokens (a reply without them, its worst case);
        no reply, its worst case if it may be billed (a timeout, a dropped connection: the
        provider may have run it), nothing if the provider refused it (an error status)."""
        if reply is None:
            self.budget.settle(worst, worst if billed else 0.0)
        elif reply.input_tokens is None or reply.output_tokens is None:
            self.budget.settle(worst, worst)
        else:
            self.budget.settle(worst, self.price.usd(reply.input_tokens, reply.output_tokens))


class Starts:
    """Which units of several calls (conversations) may start when the budget is short:
    one starts only while the money left could pay, at the largest worst case asked for
    so far, every call the units under way may still make and its own, or when none is
    under way (so the budget still ends within one call's worst case of its limit).
    Without it a budget that starts many conversations at once pays for their first
    turns and finishes none. A projection, not a bound: it orders the spending, the
    budget's admission keeps the limit."""

    def __init__(self, budget: Budget, calls: int) -> None:
        """`calls`: the most calls a unit makes (a conversation: two a turn)."""
        self.budget = budget
        self.calls = calls
        self.left: dict[int, int] = {}  # by unit: the calls it may still make
        self._claimed = 0  # their sum
        self._changed = asyncio.Event()

    async def start(self, unit: int) -> None:
        """Wait until `unit` may start (see the class), then count its calls."""
        while not self._room():
            await self._changed.wait()
        self.left[unit] = self.calls
        self._claimed += self.calls

    def step(self, unit: int) -> None:
        """`unit` made a call (sent or answered by the store): one fewer to claim."""
        if self.left.get(unit, 0) > 0:
            self.left[unit] -= 1
            self._claimed -= 1
            self._wake()

    def end(self, unit: int) -> None:
        """`unit` finished, failed or was stopped: it claims nothing more."""
        self._claimed -= self.left.pop(unit, 0)
        self._wake()

    def _room(self) -> bool:
        budget = self.budget
        if not self.left or budget.reached:
            return True  # none under way; or nothing starts: let the unit meet the refusal
        if budget.largest_usd == 0.0:
            return False  # no call asked for yet: what one costs is not known
        claims = (self._claimed + self.calls) * budget.largest_usd
        return budget.spent_usd + claims <= budget.limit_usd

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()


def reached_error(
    reason: BudgetReached, done: int, total: int, what: str, summary: dict[str, Any]
) -> BudgetReachedError:
    """The error a command raises once it has written everything at its budget: `done` of
    `total` `what` (items, rows, conversations) finished; `summary` as written."""
    return BudgetReachedError(
        f"{reason}: {done} of {total} {what} finished and written; the same command with a "
        "larger --max-cost-usd resumes, paying only for the rest",
        summary=summary,
    )


def meter_for(budget: Budget | None, model: Model, price: Price) -> Meter | None:
    """`model`'s meter on the command's budget: None without a budget or for a model that
    costs nothing. Its tokenizer counts exactly only where the endpoint is the one it
    describes (a model served elsewhere, say by vLLM, may frame messages with more
    tokens): else the byte bound."""
    if budget is None or (price.input == 0 and price.output == 0):
        return None
    inner = model.unwrapped
    tokenizer = inner.tokenizer()
    exact = tokenizer.exact and (inner.runs_locally or at_official_endpoint(inner))
    return Meter(budget, price, tokenizer.count if exact else None)


def budget_for(
    limit_usd: float | None, prices: Mapping[str, Price], shared: Budget | None = None
) -> Budget | None:
    """The command's budget (None without `--max-cost-usd`), or `shared`, one that lasts
    across commands (the sequential gate's batches); a model whose price is unknown makes a
    budget impossible to keep: refused before anything is sent."""
    if shared is not None:
        limit_usd = shared.limit_usd
    if limit_usd is None:
        return None
    unknown = sorted(name for name, price in prices.items() if not price.known)
    if unknown:
        raise UsageError(
            f"--max-cost-usd cannot be kept: the price of {', '.join(unknown)} is unknown; "
            "give it with --price-in/--price-out or --prices FILE.toml"
        )
    return shared if shared is not None else Budget(limit_usd)
