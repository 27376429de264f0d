"""Messages of a traced call, normalised across formats, and their readable rendering.

Every format (GenAI `parts`, OpenInference's flattened keys, OpenAI requests) becomes
`Msg`: a role, its text, and tool calls or the id of the call a tool result answers.
Two messages are equal when what they say is equal (tool-call ids and JSON spacing left
out), so a history repeated by the next call is recognised whichever way it was written.

chatjudge's rows hold only `system`, `user` and `assistant` messages with text, which every
judge and model under test reads; so a tool call is rendered as a line
`[tool call] name({"arg": ...})` and a tool result as `[tool result name] ...`, both
inside the assistant's message of that turn (the assistant called the tool and read its
result), which also keeps user and assistant alternating for chat templates that demand it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from chatjudge import jsoncodec

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
            value = jsoncodec.loads(value, max_depth=jsoncodec.INPUT_DEPTH)
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


def rendered_history(messages: Sequence[Msg]) -> list[dict[str, str]]:
    """Messages as chatjudge's rows hold them: system and user as they are; everything the
    assistant side did between two user messages (text, tool calls, tool results) as one
    assistant message."""
    rows: list[dict[str, str]] = []
    side: list[str] = []
    names: dict[str, str] = {}
    for message in messages:
        if message.role in ("assistant", "tool"):
            side.extend(_lines(message, names))
            continue
        if side:
            rows.append({"role": "assistant", "content": "\n".join(side)})
            side = []
        rows.append({"role": message.role, "content": message.content})
    if side:
        rows.append({"role": "assistant", "content": "\n".join(side)})
    return rows


def rendered_reply(messages: Iterable[Msg]) -> str:
    """The assistant side of one turn as one text: tool calls and results, then the reply."""
    names: dict[str, str] = {}
    return "\n".join(line for m in messages for line in _lines(m, names))


def _lines(message: Msg, names: dict[str, str]) -> list[str]:
    if message.role == "tool":
        name = message.name or names.get(message.tool_call_id or "", "")
        label = f"[tool result {name}]" if name else "[tool result]"
        return [f"{label} {message.content}"]
    lines = [message.content] if message.content or not message.tool_calls else []
    for call in message.tool_calls:
        if call.id:
            names[call.id] = call.name
        lines.append(f"[tool call] {call.name}({call.arguments})")
    return lines
