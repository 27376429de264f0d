"""Plain data shared by every layer: messages, generation settings, requests and replies."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Literal, NotRequired, TypedDict

import orjson

Role = Literal["system", "user", "assistant"]
# How a trajectory must match its expected calls (`chatjudge.chat.toolcalls.expected`),
# declared here so that `run --match` is an option without loading the scorer on every run.
MatchMode = Literal["exact", "in-order", "any-order", "superset", "subset"]
DEFAULT_MATCH: MatchMode = "exact"


class Message(TypedDict):
    """One chat message in OpenAI's format: text, and in a conversation with tools an
    assistant's `tool_calls` (OpenAI's `[{"id", "type": "function", "function": {"name",
    "arguments"}}]`) or a tool's result (`role` "tool", `tool_call_id`)."""

    role: Role | Literal["tool"]
    content: str
    tool_calls: NotRequired[list[dict[str, Any]]]
    tool_call_id: NotRequired[str]


@dataclass(frozen=True, slots=True)
class ToolUse:
    """A call of a tool that a model's reply asks for."""

    id: str
    name: str
    arguments: str  # JSON text, as the model wrote it (production models emit invalid JSON)

    def as_openai(self) -> dict[str, Any]:
        """The call in OpenAI's format, as an assistant message's `tool_calls` holds it."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True, slots=True)
class GenerationSettings:
    """Settings that change a model's output, and so are part of the cache key."""

    temperature: float = 0.0
    max_tokens: int = 1024
    seed: int | None = None

    def as_key(self) -> dict[str, Any]:
        return {"temperature": self.temperature, "max_tokens": self.max_tokens, "seed": self.seed}


@dataclass(frozen=True, slots=True)
class OutputSchema:
    """A JSON schema the reply must follow (a judge's verdict).

    A model that `supports_schema` enforces it (JSON-schema response formats, grammars,
    tool input); for one that cannot, `instruction` describes the shape in words and is
    appended to the last user message. `digest` names the schema in caches.
    """

    name: str
    schema: dict[str, Any]
    instruction: str = ""
    digest: str = field(init=False, compare=False)

    def __post_init__(self) -> None:
        canonical = orjson.dumps(self.schema, option=orjson.OPT_SORT_KEYS)
        object.__setattr__(self, "digest", hashlib.sha256(canonical).hexdigest()[:16])


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One model call: chat messages, generation settings, the reply's schema if any, and
    the tools the model may call (OpenAI's `{"type": "function", "function": {"name",
    "description", "parameters"}}`; each provider sends them in its own format)."""

    messages: list[Message]
    settings: GenerationSettings = field(default_factory=GenerationSettings)
    schema: OutputSchema | None = None
    tools: list[dict[str, Any]] | None = None


def with_instruction(messages: list[Message], instruction: str) -> list[Message]:
    """`messages` with `instruction` appended to the last user message (for a model that
    cannot enforce a schema itself)."""
    if not instruction:
        return messages
    out = list(messages)
    for i in range(len(out) - 1, -1, -1):
        if out[i]["role"] == "user":
            out[i] = {"role": "user", "content": out[i]["content"] + instruction}
            return out
    return [*out, {"role": "user", "content": instruction.lstrip()}]


@dataclass(slots=True)
class Reply:
    """A model's raw reply text, the tools it calls, and the tokens it cost, when the
    provider reported them; `served_model` and `system_fingerprint`: what the provider said
    served it (the only sign of a change behind a model's name)."""

    text: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    tool_calls: tuple[ToolUse, ...] = ()
    served_model: str | None = None
    system_fingerprint: str | None = None
