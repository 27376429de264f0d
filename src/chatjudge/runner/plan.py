"""Planning, the first part of the engine: from an item to the calls it needs.

Each judge of a run is a `JudgeLane`: a model used through the protocol, with all
the per-judge state in one place (its role on the call path, `calls.role.Role`: caller,
ledger and commit, as every producer's; the verdict schema as it is sent; and per sample
the generation settings and the cache-key maker). The planner turns
an item into one call per judge, sample and presentation order, answers those the
store already holds (parsed again, so a parser fix re-scores them without a call),
and leaves the others to be executed. A judge-free protocol's lane is a `Scorer`: it
scores each item as it is planned, leaving no call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from chatjudge.calls import Caller, KeyMaker, Ledger, LegacyKeyMaker
from chatjudge.calls.ledger import Flight
from chatjudge.calls.role import Role
from chatjudge.chat.types import GenerationSettings, Message, ModelRequest, OutputSchema, Reply
from chatjudge.data import Item
from chatjudge.errors import VerdictError
from chatjudge.models import Model
from chatjudge.options import GenerationOptions
from chatjudge.options.calling import RunOptions
from chatjudge.protocols.kinds import Deterministic
from chatjudge.protocols.spec import Protocol
from chatjudge.runner.aggregate import CallOutcome
from chatjudge.verdicts import Verdict, parse_verdict

if TYPE_CHECKING:  # a deterministic protocol's scores: its module only with such a run
    from chatjudge.trajectories import Scored


@dataclass(frozen=True, slots=True)
class _Sample:
    settings: GenerationSettings
    keys: KeyMaker
    legacy: LegacyKeyMaker


class JudgeLane:
    """One judge of the run: a model used through the protocol."""

    def __init__(
        self,
        caller: Caller,
        ledger: Ledger,
        protocol: Protocol,
        generation: GenerationOptions,
        samples: int,
    ) -> None:
        """`ledger`: the judge's store and usage, which answer the calls it holds at
        planning time and keep the replies sent for."""
        self.ledger = ledger
        self.model: Model = caller.model
        self.name = self.model.name
        schema = protocol.verdict_schema
        self.schema = OutputSchema(schema_name(protocol), schema, protocol.output_instruction)
        self.role = Role(caller, ledger, generation.settings(), self.schema)
        # A model that cannot enforce the schema gets it described in words, by the runner.
        self.instruction = "" if self.model.supports_schema else protocol.output_instruction
        identity = self.model.identity()
        self.samples = []
        for k in range(samples):
            settings = generation.settings(k)
            self.samples.append(
                _Sample(
                    settings,
                    KeyMaker(identity, settings.as_key(), schema),
                    LegacyKeyMaker(identity, settings.as_key(), schema),
                )
            )

    def request(self, prompt: str, sample: int) -> ModelRequest:
        messages: list[Message] = [{"role": "user", "content": prompt + self.instruction}]
        return ModelRequest(messages, self.samples[sample].settings, self.schema)


@dataclass(slots=True)
class Call:
    """A judge call the store could not answer."""

    state: ItemState
    slot: int  # index into `state.calls`
    lane: JudgeLane
    request: ModelRequest
    key: str
    flight: Flight  # the calls under `key`: one is sent, the others take its reply

    @property
    def outcome(self) -> CallOutcome:
        return self.state.calls[self.slot]


@dataclass(slots=True)
class ItemState:
    item: Item
    calls: list[CallOutcome] = field(default_factory=list)
    pending: int = 0  # calls not answered by the store and not finished yet
    scored: Scored | None = None  # a judge-free protocol's: the item's scores, no call


class Planner:
    def __init__(
        self,
        protocol: Protocol,
        lanes: list[JudgeLane],
        orders: tuple[bool, ...],
    ) -> None:
        self.protocol = protocol
        self.lanes = lanes
        self.orders = orders

    def plan(self, item: Item) -> tuple[ItemState, list[Call]]:
        """The item's state and the calls the store could not answer (which point to the
        state, and the state not to them: no reference cycle for the collector to find)."""
        state = ItemState(item)
        missing: list[Call] = []
        prompts = [self.protocol.render(item.text, flipped=f) for f in self.orders]
        for lane in self.lanes:
            for k, sample in enumerate(lane.samples):
                for flipped, prompt in zip(self.orders, prompts, strict=True):
                    request = lane.request(prompt, k)
                    key = sample.keys.key(request.messages, k)
                    outcome = CallOutcome(lane.name, k, flipped)
                    state.calls.append(outcome)
                    stored = lane.ledger.find(key, sample.legacy, prompt, k)
                    if stored is None:
                        flight = lane.ledger.flight(key)
                        missing.append(
                            Call(state, len(state.calls) - 1, lane, request, key, flight)
                        )
                        continue
                    outcome.cached = True
                    reply = stored.reply()
                    # Parsed again: a parser fix re-scores a stored reply without a new call.
                    verdict, error = parse(reply, self.protocol, flipped)
                    outcome.settle(reply, stored.latency, verdict, error)
        state.pending = len(missing)
        return state, missing


class Scorer:
    """The lane of a judge-free protocol: each item scored by the kind's rules as it is
    planned, in input order, so that it is finished at once."""

    def __init__(self, kind: Deterministic, run: RunOptions, as_written: bool) -> None:
        """`as_written`: `Validation.read_as_written`."""
        self.kind = kind
        self.match = run.match
        self.checked = run.checked()
        self.as_written = as_written

    def plan(self, item: Item) -> tuple[ItemState, list[Call]]:
        scored = self.kind.score(
            item.data, self.match, as_written=self.as_written, checked_tools=self.checked
        )
        if scored.columns:
            item.data = {**item.data, **scored.columns}
        return ItemState(item, scored=scored), []


def parse(reply: Reply, protocol: Protocol, flipped: bool) -> tuple[Verdict | None, str | None]:
    """A reply's verdict, or why it holds none."""
    try:
        return parse_verdict(reply.text, protocol, flipped=flipped), None
    except VerdictError as exc:
        return None, f"VerdictError: {exc}"


def schema_name(protocol: Protocol) -> str:
    return protocol.name.replace("-", "_")[:64] + "_verdict"
