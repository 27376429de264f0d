"""Plain data shared by every layer: messages, generation settings, requests and replies."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True, slots=True)
class GenerationSettings:
    """Settings that change a judge's output, and so are part of the cache key."""

    temperature: float = 0.0
    max_tokens: int = 1024
    seed: int | None = None

    def as_key(self) -> dict[str, Any]:
        return {"temperature": self.temperature, "max_tokens": self.max_tokens, "seed": self.seed}


@dataclass(frozen=True, slots=True)
class JudgeRequest:
    """One judge call: the rendered prompt and the verdict schema it must answer with.

    `instruction` is the protocol's output-format text, appended by a judge that
    cannot enforce `schema` itself.
    """

    prompt: str
    schema: dict[str, Any]
    schema_name: str
    instruction: str
    settings: GenerationSettings = field(default_factory=GenerationSettings)


@dataclass(slots=True)
class Reply:
    """A judge's raw reply text and the tokens it cost, when the provider reported them."""

    text: str
    input_tokens: int | None = None
    output_tokens: int | None = None
