"""A chat-completions call as the API writes it: the request's messages and the reply of the
choice a user is shown (OpenAI requests and responses, OpenInference, GenAI `gen_ai.choice`).
The messages themselves are read by `chatjudge.chat.messages`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chatjudge.chat.messages import LayoutError, Msg, openai_message


def choice_index(value: Any, default: int) -> int:
    """A choice's `index` (`default` when it has none): a whole number, else LayoutError."""
    if value is None:
        return default
    if isinstance(value, str) and value.isdigit():
        return int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise LayoutError(f"a choice's index must be a whole number, got {value!r}")
    return value


def first_choice(choices: Sequence[Any]) -> Any:
    """The choice a user is shown: the one of the lowest `index` (its place in the list
    where it has none)."""
    indexes = [
        choice_index(c.get("index") if isinstance(c, dict) else None, at)
        for at, c in enumerate(choices)
    ]
    return choices[min(range(len(choices)), key=lambda at: (indexes[at], at))]


def openai_call(messages: Any, choices: Any) -> tuple[list[Msg], Msg]:
    """A chat-completions call: the request's `messages` and the reply of the response's
    first choice; LayoutError naming the field that is not as the API writes it."""
    if not isinstance(messages, list) or not messages:
        raise LayoutError("`messages` must be a non-empty list of messages")
    if not isinstance(choices, list) or not choices:
        raise LayoutError("`choices` is empty: the call has no reply")
    choice = first_choice(choices)
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise LayoutError(f"a choice's message must be an object, got {_kind(message)}")
    return [openai_message(m) for m in messages], openai_message({"role": "assistant", **message})


def _kind(value: Any) -> str:
    return "nothing" if value is None else type(value).__name__
