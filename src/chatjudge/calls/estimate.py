"""`--dry-run`: what a command would send and what it could cost, with nothing sent.

Each command walks its rows as it would when running, with the store answering what it
holds (read-only: `chatjudge.store.reader`), and counts every call it would send: input
tokens with the model's own tokenizer where one is known (`Model.tokenizer`), else a
stated approximation; output tokens from the caps (`--max-tokens`, `--user-max-tokens`)
and from the replies already in the store. The cost is a range: at least the input plus
the output at the store's mean reply length (the input alone when the store holds no
reply of the model), at most the input plus every reply at its cap. Calls repeated after
a transient fault or an unparseable verdict are not counted: they are not known ahead.
"""

from __future__ import annotations

from pydantic import BaseModel, PrivateAttr

from chatjudge.calls.caller import Caller
from chatjudge.calls.prices import Price
from chatjudge.errors import ChatJudgeError
from chatjudge.models import Model
from chatjudge.models.tokens import Tokenizer
from chatjudge.types import Message, ModelRequest, Reply


class WouldSend(ChatJudgeError):
    """A dry run reached a call the store does not hold: here it would be sent."""

    def __init__(self, request: ModelRequest) -> None:
        super().__init__("a dry run sends nothing")
        self.request = request


class DryCaller(Caller):
    """A caller that sends nothing: every call it is asked to send raises `WouldSend`."""

    async def send(self, request: ModelRequest, order: int = 0) -> tuple[Reply, float]:
        raise WouldSend(request)


class RoleEstimate(BaseModel):
    """One model in one role: the calls it would send, as a range (low, high) where the
    number of turns is not known ahead (`simulate`)."""

    role: str
    model: str
    tokenizer: str  # how input tokens were counted
    exact: bool  # ... with the model's own tokenizer, or an approximation
    calls: tuple[int, int] = (0, 0)
    answered_by_store: int = 0
    input_tokens: tuple[int, int] = (0, 0)
    output_cap_tokens: tuple[int, int] = (0, 0)  # every reply at its cap
    mean_stored_output: float | None = None  # the store's mean reply length of this model
    price_source: str
    cost_usd: tuple[float, float] | None = None  # None: the price is unknown
    _tokenizer: Tokenizer = PrivateAttr(default_factory=Tokenizer)

    def count(self, messages: list[Message]) -> int:
        """Input tokens of one call's messages, by this model's tokenizer."""
        return self._tokenizer.count(messages)

    def add(self, calls: tuple[int, int], inputs: tuple[int, int], caps: tuple[int, int]) -> None:
        self.calls = (self.calls[0] + calls[0], self.calls[1] + calls[1])
        self.input_tokens = (self.input_tokens[0] + inputs[0], self.input_tokens[1] + inputs[1])
        self.output_cap_tokens = (
            self.output_cap_tokens[0] + caps[0],
            self.output_cap_tokens[1] + caps[1],
        )

    def price(self, price: Price) -> None:
        """Set `cost_usd` from the counts: see the module's docstring for the range."""
        if price.input is None or price.output is None:
            self.cost_usd = None
            return
        mean = self.mean_stored_output or 0.0
        low_out = min(mean * self.calls[0], self.output_cap_tokens[0])
        low = (self.input_tokens[0] * price.input + low_out * price.output) / 1e6
        high = (self.input_tokens[1] * price.input + self.output_cap_tokens[1] * price.output) / 1e6
        self.cost_usd = (round(low, 6), round(high, 6))


class CostEstimate(BaseModel):
    """A dry run's account: per role and model, and the command's cost range."""

    command: str
    rows: int
    roles: list[RoleEstimate]
    total_usd: tuple[float, float] | None  # None when a price is unknown
    unpriced: list[str]
    notes: list[str]


def role_estimate(role: str, model: Model, price: Price, mean: float | None) -> RoleEstimate:
    """An empty account for `model` in `role`, with how its tokens will be counted."""
    tokenizer = model.unwrapped.tokenizer()
    estimate = RoleEstimate(
        role=role,
        model=model.name,
        tokenizer=tokenizer.name,
        exact=tokenizer.exact,
        mean_stored_output=mean,
        price_source=price.source,
    )
    estimate._tokenizer = tokenizer
    return estimate


def finish(
    command: str, rows: int, roles: list[RoleEstimate], prices: dict[str, Price]
) -> CostEstimate:
    """Price every role and sum the command's range."""
    for r in roles:
        r.price(prices[r.model])
    unpriced = [f"{r.role} ({r.model})" for r in roles if r.cost_usd is None]
    total = None
    if not unpriced:
        total = (
            round(sum(r.cost_usd[0] for r in roles if r.cost_usd), 6),
            round(sum(r.cost_usd[1] for r in roles if r.cost_usd), 6),
        )
    notes = [
        f"{r.model}: input tokens by {r.tokenizer}" for r in roles if not r.exact
    ]
    if any(r.mean_stored_output is None and r.calls[1] and prices[r.model].output for r in roles):
        notes.append("no stored reply of a model: its low cost counts its input alone")
    return CostEstimate(
        command=command, rows=rows, roles=roles, total_usd=total, unpriced=unpriced, notes=notes
    )
