"""Rendering conversations: for a judge's prompt, for a model under test, and into rows.

Every command shows a conversation through here, so a new kind of message (tool calls
shown to a judge, say) is rendered the same everywhere once it is added here:
- a judge reads `**role**: content`, one message per line, the format CollabLLM's judge was
  used with (`render_messages`, `as_text`; the simulated user's `transcript`);
- a model under test reads chat messages (`as_messages`);
- a row holds `system`, `user` and `assistant` messages with text, so what the assistant side
  did with tools (read from traces) becomes lines of the assistant's message of that turn:
  `[tool call] name({"arg": ...})` and `[tool result name] ...` (the assistant called the tool
  and read its result), which also keeps user and assistant alternating for chat templates
  that demand it (`rendered_history`, `rendered_reply`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from chatjudge.messages import Msg
from chatjudge.types import Message


def render_messages(messages: Sequence[dict[str, Any]], *, include_system: bool = False) -> str:
    """One message per line as `**role**: content`, the format CollabLLM's judge was used with.

    System messages are left out unless asked for: they instruct the assistant,
    they are not part of the conversation being judged.
    """
    return "\n".join(
        f"**{m['role']}**: {m['content']}"
        for m in messages
        if include_system or m["role"] != "system"
    )


def as_text(value: Any, *, include_system: bool = False) -> str:
    """A row's field as a judge's prompt shows it: a message list rendered, text as it is,
    a number as its text, nothing as ""."""
    if value is None:
        return ""
    if isinstance(value, list):
        return render_messages(value, include_system=include_system)
    return value if isinstance(value, str) else str(value)


def transcript(messages: list[Message], *, you: str = "user") -> str:
    """A conversation as one text, `**role**: content` per message (the judges' format), the
    messages of role `you` shown as `**you**` (the simulated user reading its own turns)."""
    shown = [
        {"role": "you" if m["role"] == you else m["role"], "content": m["content"]}
        for m in messages
    ]
    return render_messages(shown)


def as_messages(value: Any, *, label: str) -> list[Message]:
    """A conversation field as chat messages: a message list as it is (system messages kept:
    they instruct the model), plain text as one system message holding it under `label`."""
    if value is None or value == "" or value == []:
        return []
    if isinstance(value, list):
        return [{"role": m["role"], "content": m["content"]} for m in value]
    return [{"role": "system", "content": f"{label}:\n{value}"}]


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
