"""A model playing a part in `generate` or `simulate`: the assistant under test, the
simulated user, the candidate or baseline model.

Every call goes through the store first: a call already answered (same model, settings,
schema, sample and messages) is not sent again, so a killed run resumes call by call.
What is sent goes through the run's `Caller` (retries, timeouts, rate limits), and
every reply is committed to the store as it arrives.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from chatjudge.models import Model
from chatjudge.runner.calls import Caller
from chatjudge.runner.keys import KeyMaker
from chatjudge.runner.plan import Usage
from chatjudge.store import Store
from chatjudge.types import (
    GenerationSettings,
    Message,
    ModelRequest,
    OutputSchema,
    Reply,
    with_instruction,
)


@dataclass(slots=True)
class Tokens:
    """One conversation's (or row's) tokens for one role, cached calls included."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def add(self, reply: Reply) -> None:
        self.calls += 1
        self.input_tokens += reply.input_tokens or 0
        self.output_tokens += reply.output_tokens or 0

    def as_dict(self) -> dict[str, int]:
        return {
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
        }


@dataclass
class Role:
    caller: Caller
    store: Store
    settings: GenerationSettings
    schema: OutputSchema | None = None
    lookup: bool = True  # answer from the store (not with --no-cache)
    usage: Usage = field(default_factory=Usage)
    _keys: dict[GenerationSettings, KeyMaker] = field(default_factory=dict)

    @property
    def model(self) -> Model:
        return self.caller.model

    @property
    def name(self) -> str:
        return self.caller.model.name

    def settings_for(self, sample: int, attempt: int = 0) -> GenerationSettings:
        """Sample k uses seed + k; a second attempt at a reply another seed (+ 1,000,003)."""
        seed = self.settings.seed
        if seed is not None:
            seed += sample + 1_000_003 * attempt
        return GenerationSettings(self.settings.temperature, self.settings.max_tokens, seed)

    async def call(self, messages: list[Message], sample: int, attempt: int = 0) -> Reply:
        """The reply to `messages`, from the store when it holds it; raises `JudgeError`."""
        settings = self.settings_for(sample, attempt)
        if self.schema is not None and not self.model.supports_schema:
            messages = with_instruction(messages, self.schema.instruction)
        keys = self._keys.get(settings)
        if keys is None:
            schema = self.schema.schema if self.schema else None
            keys = self._keys[settings] = KeyMaker(self.model.identity(), settings.as_key(), schema)
        key = keys.key(messages, sample + 1_000_003 * attempt)
        stored = self.store.get(key) if self.lookup else None
        if stored is not None:
            self.usage.cached_calls += 1
            return Reply(stored.raw, stored.input_tokens, stored.output_tokens)
        reply, latency = await self.caller.send(ModelRequest(messages, settings, self.schema))
        self.store.put(key, self.name, reply, latency)
        self.usage.add(reply)
        return reply
