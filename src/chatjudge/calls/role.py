"""A model in a part of a command, and the one way its calls are made: the assistant
under test, the simulated user, the candidate or baseline model, align's optimiser; the
judges' lanes (`runner.plan`) send and commit through one too.

Every call goes through the store first (the role's `Ledger`): a call already answered
(same model, settings, schema, sample and messages) is not sent again, so a killed run
resumes call by call. What is sent goes through the run's `Caller` (retries, timeouts,
rate limits, the budget), and every reply is committed to the store as it arrives. Which
sample a call is (its seed and key) and its place in the budget's line are the unit of
work's (`unit.Unit`), not arguments.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from chatjudge.calls.caller import Caller
from chatjudge.calls.keys import KeyMaker
from chatjudge.calls.ledger import Ledger
from chatjudge.calls.unit import current
from chatjudge.calls.usage import Usage
from chatjudge.chat.types import (
    GenerationSettings,
    Message,
    ModelRequest,
    OutputSchema,
    Reply,
    with_instruction,
)
from chatjudge.models import Model


@dataclass
class Role:
    caller: Caller
    ledger: Ledger  # the role's own: its usage is the role's
    settings: GenerationSettings
    schema: OutputSchema | None = None
    _keys: dict[GenerationSettings, KeyMaker] = field(default_factory=dict)

    @property
    def model(self) -> Model:
        return self.caller.model

    @property
    def usage(self) -> Usage:
        return self.ledger.usage

    @property
    def name(self) -> str:
        return self.caller.model.name

    def settings_for(self, sample: int, attempt: int = 0) -> GenerationSettings:
        """Sample k uses seed + k; a second attempt at a reply another seed (+ 1,000,003)."""
        seed = self.settings.seed
        if seed is not None:
            seed += sample + 1_000_003 * attempt
        return GenerationSettings(self.settings.temperature, self.settings.max_tokens, seed)

    async def call(
        self,
        messages: list[Message],
        attempt: int = 0,
        *,
        tools: list[dict[str, Any]] | None = None,
    ) -> Reply:
        """The reply to `messages`, from the store when it holds it; raises `ModelError`.
        `attempt`: a second one at a reply gets another seed and key; `tools`: what the
        model may call (OpenAI's definitions)."""
        key, request = self.prepare(messages, attempt, tools)
        ledger = self.ledger
        stored = ledger.find(key)
        if stored is not None:
            return stored.reply()
        reply, shared = await ledger.once(ledger.flight(key), lambda: self._send(key, request))
        if shared:  # another row's or conversation's call in flight asked the same
            ledger.shared(key)
        return reply

    async def _send(self, key: str, request: ModelRequest) -> Reply:
        reply, latency = await self.caller.send(request)
        self.commit(key, reply, latency, request.settings.max_tokens)
        return reply

    def commit(self, key: str, reply: Reply, latency: float, cap: int) -> None:
        """A reply sent for, into the store under `key` (`cap`: its `max_tokens`)."""
        self.ledger.commit(key, self.name, reply, latency, cap)

    def prepare(
        self,
        messages: list[Message],
        attempt: int = 0,
        tools: list[dict[str, Any]] | None = None,
    ) -> tuple[str, ModelRequest]:
        """The store key and the request of a call, as `call` sends it (the unit of work's
        sample)."""
        sample = current().sample
        settings = self.settings_for(sample, attempt)
        if self.schema is not None and not self.model.supports_schema:
            messages = with_instruction(messages, self.schema.instruction)
        keys = self._keys.get(settings)
        if keys is None:
            schema = self.schema.schema if self.schema else None
            keys = self._keys[settings] = KeyMaker(self.model.identity(), settings.as_key(), schema)
        key = keys.key(messages, sample + 1_000_003 * attempt, tools)
        return key, ModelRequest(messages, settings, self.schema, tools)
