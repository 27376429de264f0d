"""`--max-cost-usd`: what a command may spend, and the admission of each call against it.

A call is admitted only if its worst case fits what is left: its input tokens, counted
by the model's own tokenizer where one is known (tiktoken for OpenAI's models) and
otherwise bounded by the UTF-8 bytes of its messages (every byte-level BPE tokenizer,
Anthropic's, Llama's and Gemini's byte fallback, makes at most one token of a byte; a few
tokens per message frame it), and its output at its cap (`max_tokens`), at the model's
price. While
it runs, that worst case is reserved; its reply's reported tokens then replace it (a
reply without usage is charged its worst case). Once a call is refused no call starts:
the command stops where it is, the calls in flight finish and are kept.

The budget is this command's: calls the store answers cost nothing, so the same command
with a larger budget resumes without paying twice for what it already holds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from chatjudge import jsoncodec
from chatjudge.calls.prices import Price
from chatjudge.errors import BudgetReached, BudgetReachedError, UsageError
from chatjudge.models import Model
from chatjudge.rundir import BudgetRecord
from chatjudge.types import Message, ModelRequest, Reply

FRAME_TOKENS = 8  # a message's role and delimiters, a generous bound for every chat format


def input_bound(messages: list[Message]) -> int:
    """At most this many input tokens: bytes, plus each message's frame."""
    return sum(len(m["content"].encode()) + FRAME_TOKENS for m in messages) + FRAME_TOKENS


class Budget:
    """The command's limit in USD, what its replies cost so far and what calls in flight
    may still cost; shared by every model of the command."""

    __slots__ = ("limit_usd", "reached", "reserved_usd", "spent_usd")

    def __init__(self, limit_usd: float) -> None:
        self.limit_usd = limit_usd
        self.spent_usd = 0.0
        self.reserved_usd = 0.0
        self.reached = False

    def admit(self, worst_usd: float) -> None:
        """Reserve a call's worst case, or raise `BudgetReached` (and refuse every later one)."""
        if self.reached or self.spent_usd + self.reserved_usd + worst_usd > self.limit_usd:
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

    def settle(self, worst_usd: float, actual_usd: float | None) -> None:
        """A call ended: its reservation becomes what it cost (None: nothing was charged)."""
        self.reserved_usd = max(0.0, self.reserved_usd - worst_usd)
        if actual_usd is not None:
            self.spent_usd += actual_usd


class Meter:
    """One model's calls against the command's budget, at that model's price."""

    __slots__ = ("budget", "count", "per_in", "per_out")

    def __init__(
        self,
        budget: Budget,
        price: Price,
        count: Callable[[list[Message]], int] = input_bound,
    ) -> None:
        """`count`: the model's exact input tokens where its tokenizer is known, else the
        byte bound."""
        assert price.input is not None and price.output is not None  # `budget_for` checks
        self.budget = budget
        self.count = count
        self.per_in = price.input / 1e6
        self.per_out = price.output / 1e6

    def admit(self, request: ModelRequest) -> float:
        """Reserve `request`'s worst case (returned, for `settle`); raises `BudgetReached`."""
        tokens = self.count(request.messages)
        if request.schema is not None:  # a provider may bill the schema as input
            tokens += len(jsoncodec.dumps(request.schema.schema))
        worst = tokens * self.per_in + request.settings.max_tokens * self.per_out
        self.budget.admit(worst)
        return worst

    def settle(self, worst: float, reply: Reply | None) -> None:
        """What the call cost: its reply's tokens; a reply without them, its worst case;
        no reply (the provider refused it), nothing."""
        if reply is None:
            self.budget.settle(worst, None)
            return
        if reply.input_tokens is None or reply.output_tokens is None:
            self.budget.settle(worst, worst)
            return
        cost = reply.input_tokens * self.per_in + reply.output_tokens * self.per_out
        self.budget.settle(worst, cost)


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
    """`model`'s meter on the command's budget (None without one)."""
    if budget is None:
        return None
    tokenizer = getattr(model, "inner", model).tokenizer()  # on Ray: the model it runs
    return Meter(budget, price, tokenizer.count if tokenizer.exact else input_bound)


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
