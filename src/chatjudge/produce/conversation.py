"""Conversations as models see them, and what a failed call means for a conversation."""

from __future__ import annotations

import re
from typing import Any

from chatjudge.data import render_messages
from chatjudge.errors import BadRequestError, ModelError
from chatjudge.types import Message

_REASONING = re.compile(r"<think>.*?</think>\s*", re.DOTALL)
_CONTEXT = ("context length", "context window", "maximum context", "too many tokens", "too long")


def as_messages(value: Any, *, label: str) -> list[Message]:
    """A conversation field as chat messages: a message list as it is (system messages kept:
    they instruct the model), plain text as one system message holding it under `label`."""
    if value is None or value == "" or value == []:
        return []
    if isinstance(value, list):
        return [{"role": m["role"], "content": m["content"]} for m in value]
    return [{"role": "system", "content": f"{label}:\n{value}"}]


def transcript(messages: list[Message], *, you: str = "user") -> str:
    """A conversation as one text, `**role**: content` per message (the judges' format)."""
    shown = [
        {"role": "you" if m["role"] == you else m["role"], "content": m["content"]}
        for m in messages
    ]
    return render_messages(shown)


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
