"""The one small interface every judge provider implements.

A provider turns a `JudgeRequest` into a `Reply` in `generate` and maps its own
failures onto `chatjudge.errors` (RateLimitError, ServerError, AuthError, ...).
Retries, concurrency, rate limits, caching and logging live once, in the runner.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

from chatjudge.types import JudgeRequest, Reply


class Judge(ABC):
    """A judge model behind one provider, named `provider/model`."""

    provider: ClassVar[str]
    supports_schema: ClassVar[bool] = False  # enforces the verdict JSON schema itself
    needs_key: ClassVar[bool] = False
    key_env_var: ClassVar[str | None] = None
    max_concurrency: int | None = None  # a cap the provider imposes (in-process models: 1)

    def __init__(self, model: str) -> None:
        self.model = model

    @property
    def name(self) -> str:
        return f"{self.provider}/{self.model}" if self.model else self.provider

    def identity(self) -> dict[str, Any]:
        """What identifies this judge's outputs in the cache key (never a secret)."""
        return {"provider": self.provider, "model": self.model}

    @abstractmethod
    async def generate(self, request: JudgeRequest) -> Reply:
        """Send one request; raise a `chatjudge.errors.JudgeError` subclass on failure."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook, most judges hold nothing
        """Release connections, sessions or models."""

    @staticmethod
    def prompt_with_instruction(request: JudgeRequest) -> str:
        """The prompt as sent to a judge that cannot enforce the schema itself."""
        return request.prompt + request.instruction
