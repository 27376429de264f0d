"""What a model's reply shows, and what a failed call means for a conversation."""

from __future__ import annotations

import re

from chatjudge.errors import BadRequestError, ModelError

_REASONING = re.compile(r"<think>.*?</think>\s*", re.DOTALL)
_CONTEXT = ("context length", "context window", "maximum context", "too many tokens", "too long")


def visible(text: str) -> str:
    """A reply without the reasoning some models write before it (`<think>...</think>`):
    only what the assistant says reaches the simulated user, the transcript and the judge."""
    return _REASONING.sub("", text).strip() if "<think>" in text else text.strip()


def failure_cause(exc: ModelError) -> tuple[str, str]:
    """Why a call could not be answered: (kind, message), kind one of `context window`,
    `retries exhausted` (a transient fault kept failing) or `refused`."""
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, BadRequestError) and any(c in str(exc).lower() for c in _CONTEXT):
        return "context window", f"context window exceeded: {text}"
    if exc.retryable:
        return "retries exhausted", f"retries exhausted: {text}"
    return "refused", f"refused: {text}"
