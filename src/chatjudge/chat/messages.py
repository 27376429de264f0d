"""Chat messages as the formats write them, read into one shape, and what a row may hold.

Rows, the replies of models and traced calls write messages in OpenAI's chat format or a
relative of it (other role names, content as a list of parts, tool calls). Reading them
here, once, gives `Msg`: a role, its text, and tool calls or the id of the call a tool
result answers. Two messages are equal when what they say is equal (tool-call ids and JSON
spacing left out), so a history repeated by the next call is recognised whichever way it
was written.

A row's conversation is read into OpenAI's chat format by `chatjudge.chat.row_messages`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, get_args

from chatjudge import jsoncodec
from chatjudge.chat.types import Role

ROLES = frozenset(get_args(Role))  # the roles of messages that hold only text

# Roles as the formats name them, and the role they mean here.
ROLE_ALIASES = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "model": "assistant",
    "tool": "tool",
    "function": "tool",
    "ipython": "tool",
}


class LayoutError(ValueError):
    """A message or attribute whose shape no supported convention has."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    name: str
    arguments: str  # canonical JSON where the arguments are JSON, else as recorded
    id: str | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class Msg:
    role: str  # system, user, assistant or tool
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = field(default=None, compare=False)
    name: str | None = field(default=None, compare=False)  # a tool result's tool, where given


def role_of(value: Any) -> str:
    role = ROLE_ALIASES.get(str(value).lower()) if value is not None else None
    if role is None:
        raise LayoutError(f"unknown message role {value!r}")
    return role


def canonical_arguments(value: Any) -> str:
    """Tool-call arguments as one canonical JSON text: `{"city": "Paris"}` whether they were
    recorded as an object or as a JSON string with other spacing; none as ""."""
    if value is None:
        return ""
    if isinstance(value, str):
        try:
            value = jsoncodec.loads(value, max_depth=jsoncodec.INPUT_DEPTH, exact_ints=True)
        except ValueError:
            return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def text_of(content: Any) -> str:
    """A message's content as text: a string as it is, OpenAI's content parts joined (a part
    that is not text shown as `[image_url]` and the like), nothing as ""."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(text for text in map(_part_text, content) if text)
    if isinstance(content, dict):
        return _part_text(content)
    return str(content)


def _part_text(part: Any) -> str:
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return str(part)
    for key in ("text", "content"):
        if isinstance(part.get(key), str):
            return str(part[key])
    return f"[{part.get('type', 'content')}]"


def tool_calls_of(calls: Any) -> tuple[ToolCall, ...]:
    """OpenAI-style tool calls (`{"id", "function": {"name", "arguments"}}`) or flat ones
    (`{"id", "name", "arguments"}`)."""
    if not calls:
        return ()
    if not isinstance(calls, list):
        raise LayoutError(f"tool calls must be a list, got {type(calls).__name__}")
    found = []
    for call in calls:
        if not isinstance(call, dict):
            raise LayoutError("a tool call must be an object")
        function: dict[str, Any] = (
            call["function"] if isinstance(call.get("function"), dict) else call
        )
        name = function.get("name")
        if not isinstance(name, str):
            raise LayoutError("a tool call has no function name")
        found.append(
            ToolCall(name, canonical_arguments(function.get("arguments", "")), call.get("id"))
        )
    return tuple(found)


def openai_message(value: Any) -> Msg:
    """A message in OpenAI's chat-completions format (request `messages`, response
    `choices[].message`)."""
    if not isinstance(value, dict):
        raise LayoutError(f"a message must be an object, got {type(value).__name__}")
    role = role_of(value.get("role", "assistant"))
    calls = tool_calls_of(value.get("tool_calls"))
    if not calls and isinstance(value.get("function_call"), dict):  # the older form
        calls = tool_calls_of([{"function": value["function_call"]}])
    return Msg(
        role,
        text_of(value.get("content")),
        calls,
        value.get("tool_call_id"),
        value.get("name") if role == "tool" else None,
    )
