"""`--max-cost-usd`: what a command may spend, and the admission of each call against it.

Each attempt at a call is admitted only if its worst case fits what is left: its input
tokens, bounded by the UTF-8 bytes of its messages (every byte-level BPE tokenizer,
OpenAI's, Anthropic's, Llama's and Gemini's byte fallback, makes at most one token of a
byte; a few tokens per message frame it) or, near the limit, counted by the model's own
tokenizer where it is exact, and its output at its cap (`max_tokens`), at the model's
price (its top tier above a tier's start). While it runs, that worst case is reserved;
its reply's reported tokens then replace it (a reply without usage is charged its worst
case; an attempt that timed out or lost its connection too, as the provider may bill it).
Once a call is refused no call starts: the command stops where it is, the calls in
flight finish and are kept. A reply that held no verdict and was asked again is paid
for but not kept (the store keeps the last reply of a call), so when the budget refuses
the asking again, the resumed run pays for that call once more.

The budget is this command's: calls the store answers cost nothing, so the same command
with a larger budget resumes without paying twice for what it already holds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from chatjudge import jsoncodec
from chatjudge.calls.prices import Price, at_official_endpoint
from chatjudge.errors import BudgetReached, BudgetReachedError, UsageError
from chatjudge.models import Model
from chatjudge.rundir import BudgetRecord
from chatjudge.types import Message, ModelRequest, Reply

FRAME_TOKENS = 8  # a message's role and delimiters, a generous bound for every chat format


def input_bound(messages: list[Message]) -> int:
    """At most this many input tokens: bytes, plus each message's frame."""
    return sum(len(m["content"].encode()) + FRAME_TOKENS for m in messages) + FRAME_TOKENS


class Budget:
    """The command's limit in USD, what its calls cost so far and what calls in flight may
    still cost; shared by every model of the command."""

    __slots__ = ("limit_usd", "reached", "reserved_usd", "spent_usd")

    def __init__(self, limit_usd: float) -> None:
        self.limit_usd = limit_usd
        self.spent_usd = 0.0
        self.reserved_usd = 0.0
        self.reached = False

    def fits(self, worst_usd: float) -> bool:
        return not self.reached and (
            self.spent_usd + self.reserved_usd + worst_usd <= self.limit_usd
        )

    def admit(self, worst_usd: float) -> None:
        """Reserve a call's worst case, or raise `BudgetReached` (and refuse every later one)."""
        if not self.fits(worst_usd):
            self.reached = True
            raise BudgetReached(
                f"the budget of ${self.limit_usd:g} is reached: ${self.spent_usd:.4f} spent, "
                f"${self.reserved_usd:.4f} in flight at most, and the next call could cost "
                f"up to ${worst_usd:.4f}"
            )
        self.reserved_usd += worst_usd

    def record(self, done: int, total: int) -> BudgetRecord:
        """The summary's account: the limit, whether it stopped the command, how far it got."""
        return BudgetRecord(
            max_usd=self.limit_usd,
            spent_usd=round(self.spent_usd, 6),
            reached=self.reached,
            done=done,
            total=total,
        )

    def settle(self, worst_usd: float, actual_usd: float) -> None:
        """An attempt ended: its reservation becomes what it cost."""
        self.reserved_usd = max(0.0, self.reserved_usd - worst_usd)
        self.spent_usd += actual_usd


class Meter:
    """One model's attempts against the command's budget, at that model's price.

    Each attempt is admitted, not each call: a retried call pays for every attempt a
    provider may bill. The byte bound is tried first (it costs microseconds); the model's
    own tokenizer, where one is exact, only when the bound would not fit, so counting
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

    def admit(self, request: ModelRequest) -> float:
        """Reserve one attempt's worst case (returned, for `settle`); raises `BudgetReached`."""
        extra = len(jsoncodec.dumps(request.schema.schema)) if request.schema else 0
        cap = request.settings.max_tokens
        worst = self.price.usd(input_bound(request.messages) + extra, cap)
        if not self.budget.fits(worst) and self.count is not None:
            worst = self.price.usd(self.count(request.messages) + extra, cap)
        self.budget.admit(worst)
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
    inner = getattr(model, "inner", model)  # on Ray: the model it runs
    tokenizer = inner.tokenizer()
    exact = tokenizer.exact and (inner.runs_locally or at_official_endpoint(inner))
    return Meter(budget, price, tokenizer.count if exact else None)


def budget_for(limit_usd: float | None, prices: Mapping[str, Price]) -> Budget | None:
    """The command's budget (None without `--max-cost-usd`); a model whose price is unknown
    makes a budget impossible to keep: refused before anything is sent."""
    if limit_usd is None:
        return None
    unknown = sorted(name for name, price in prices.items() if not price.known)
    if unknown:
        raise UsageError(
            f"--max-cost-usd cannot be kept: the price of {', '.join(unknown)} is unknown; "
            "give it with --price-in/--price-out or --prices FILE.toml"
        )
    return Budget(limit_usd)
