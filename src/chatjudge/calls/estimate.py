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
from chatjudge.calls.policy import CallPolicy
from chatjudge.calls.prices import Price
from chatjudge.calls.unit import current
from chatjudge.chat.types import Message, ModelRequest, Reply
from chatjudge.errors import ModelError
from chatjudge.models import Model
from chatjudge.models.tokens import Tokenizer


class NotSent(ModelError):
    """A dry run reached a call the store does not hold: here it would be sent. An ordinary
    (not fatal) model error, so that a command's loop goes on past it as it goes on past a
    call that failed, and the dry run walks every row."""

    def __init__(self) -> None:
        super().__init__("a dry run sends nothing")


class DryCaller(Caller):
    """A caller that sends nothing: it counts each call it is asked to send in its role's
    account and raises `NotSent`. A unit of work with a projection (a conversation) is
    counted by it instead, once, at its first such call; a call offered tools counts the
    steps its turn may still take after it (`unit.Unit.steps_left`, `count_tool_steps`)."""

    def __init__(
        self, model: Model, policy: CallPolicy, account: RoleEstimate, max_tool_steps: int
    ) -> None:
        super().__init__(model, policy, 1)
        self.account = account
        self.max_tool_steps = max_tool_steps

    async def send(self, request: ModelRequest) -> tuple[Reply, float]:
        unit = current()
        if not unit.project():
            account = self.account
            tokens = account.count(request.messages)
            cap = request.settings.max_tokens
            account.add((1, 1), (tokens, tokens), (cap, cap))
            if request.tools:
                count_tool_steps(account, request.messages, unit.steps_left, cap,
                                 self.max_tool_steps)  # fmt: skip
        raise NotSent


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
    # Turns offered tools take 1 to `max_tool_steps` model calls (0: none is offered tools);
    # `generate` counts its rows' turns the store does not hold whole (`count_tool_steps`).
    tool_turns: int = 0
    max_tool_steps: int = 0
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
    notes = [f"{r.model}: input tokens by {r.tokenizer}" for r in roles if not r.exact]
    notes.extend(
        f"{r.role}: a turn offered tools takes 1 to {r.max_tool_steps} model calls (what the "
        "tools return is not counted)"
        for r in roles
        if r.max_tool_steps
    )
    if any(r.mean_stored_output is None and r.calls[1] and prices[r.model].output for r in roles):
        notes.append("no stored reply of a model: its low cost counts its input alone")
    return CostEstimate(
        command=command, rows=rows, roles=roles, total_usd=total, unpriced=unpriced, notes=notes
    )


def count_conversation(
    user: RoleEstimate,
    assistant: RoleEstimate,
    opening: list[Message],
    first: list[Message],
    turns: int,
    caps: tuple[int, int],
    steps: int = 1,
) -> None:
    """One conversation's calls, from 1 turn (the user opens, the assistant answers, the
    user closes) to `turns` turns with every message at its cap (`caps`: the user's, the
    assistant's): the user's first call (`opening`) is counted exactly, later ones as it
    plus the transcript so far; the assistant's from `first`, its messages before the
    user's first. `steps`: the model calls an assistant turn may take (with tools: 1 to
    `--max-tool-steps`), each counted at the high end as the turn's first."""
    base_u, base_a = user.count(opening), assistant.count(first)
    cap_u, cap_a = caps
    mean_u = user.mean_stored_output or 0.0
    mean_a = assistant.mean_stored_output or 0.0
    closes = turns > 1  # after one reply the user is asked again, and may close
    growth = turns * (turns - 1) // 2
    user.add(
        (1 + closes, turns),
        (
            base_u + closes * round(base_u + mean_u + mean_a),
            turns * base_u + (cap_u + cap_a) * growth,
        ),
        ((1 + closes) * cap_u, turns * cap_u),
    )
    high_a = turns * base_a + cap_u * (growth + turns) + cap_a * growth
    assistant.add(
        (1, turns * steps),
        (round(base_a + mean_u), steps * high_a + cap_a * turns * steps * (steps - 1) // 2),
        (cap_a, turns * steps * cap_a),
    )
    if steps > 1:
        assistant.max_tool_steps = steps


def count_tool_steps(
    account: RoleEstimate, messages: list[Message], further: int, cap: int, max_steps: int
) -> None:
    """A turn offered tools, from its first step the store does not hold (which the dry
    caller counted): the `further` steps it may take after it, up to `max_steps`, count in
    the high end only, each reading the messages before it plus one more reply at its `cap`
    (what the tools return is not known ahead, and not counted)."""
    account.tool_turns += 1
    account.max_tool_steps = max_steps
    if further > 0:
        base = account.count(messages)
        grown = cap * further * (further + 1) // 2
        account.add((0, further), (0, further * base + grown), (0, further * cap))
