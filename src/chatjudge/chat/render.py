"""Rendering conversations: for a judge's prompt, for a model under test, and into rows.

Every command shows a conversation through here, so a new kind of message is rendered the
same everywhere once it is added here:
- a judge reads one line per message (`render_messages`, `as_text`, `judge_texts`; the
  simulated user's `transcript`), in the format CollabLLM's judge was used with, and a tool
  call and its result in the same style (the results cut at `tool_result_chars`):

      **user**: Weather in Paris?
      **assistant** called get_weather({"city": "Paris"})
      **tool** (get_weather) returned: 18 C
      **assistant**: It is 18 C.

  A message with text and calls gives its `**assistant**: text` line, then one line per
  call; the arguments are canonical JSON (sorted keys) where they are JSON, else as
  recorded; a result longer than `tool_result_chars` keeps its first characters and ends
  with `… [cut 1,234 of 3,234 characters]`. Results pair with calls by the one rule
  (`chatjudge.chat.toolcalls.call_ids`); a call that no result answers and that later
  messages follow gets `**tool** (get_weather): (no result recorded)` where its result
  would be, before the next message (calls at the very end, a trajectory cut at a cap, show none).
- a model under test reads chat messages (`as_messages`), with their tool calls and results
  in OpenAI's format.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from chatjudge import jsoncodec
from chatjudge.chat.fields import EXPECTED_TOOL_CALLS, TOOLS, TRAJECTORY, FieldSpec, column_of
from chatjudge.chat.messages import text_of, tool_calls_of
from chatjudge.chat.toolcalls.call_ids import CallIds
from chatjudge.chat.types import Message

TOOL_RESULT_CHARS = 2000  # a tool result's characters a judge reads, by default
NO_RESULT = "(no result recorded)"  # a judge reads it for a call whose result was not
JudgeSees = Literal["trajectory", "final"]


@dataclass(frozen=True, slots=True)
class JudgeView:
    """What a judge is shown of a row (`run`'s options that change the prompt's text):
    system messages or not, how much of a tool's result, and, in a response slot that has
    a trajectory, the whole trajectory or only the final text."""

    include_system: bool = False
    tool_result_chars: int = TOOL_RESULT_CHARS
    judge_sees: JudgeSees = "trajectory"


DEFAULT_VIEW = JudgeView()  # what `run` shows a judge without options


def render_messages(
    messages: Sequence[Mapping[str, Any]],
    *,
    include_system: bool = False,
    tool_result_chars: int = TOOL_RESULT_CHARS,
) -> str:
    """One message per line as `**role**: content`, the format CollabLLM's judge was used
    with; tool calls and results as `**assistant** called name(arguments)` and
    `**tool** (name) returned: result` (the module's docstring has the whole format).

    System messages are left out unless asked for: they instruct the assistant,
    they are not part of the conversation being judged.
    """
    judged: _JudgeLines | None = None  # made at the first call or result: most have none
    lines: list[str] = []
    for i, m in enumerate(messages):
        if include_system or m["role"] != "system":
            if judged is None and m["role"] != "tool" and not m.get("tool_calls"):
                lines.append(f"**{m['role']}**: {m['content']}")
                continue
            if judged is None:
                judged = _JudgeLines(messages, tool_result_chars)
            lines.extend(judged.of(i, m))
    return "\n".join(lines)


class _JudgeLines:
    """A conversation's lines as a judge reads them, message by message (module doc); its
    calls and results paired the first time a message holds either."""

    __slots__ = ("_limit", "_messages", "_missing", "_names", "_pending")

    def __init__(self, messages: Sequence[Mapping[str, Any]], limit: int) -> None:
        self._messages, self._limit = messages, limit
        self._names: dict[int, str] | None = None  # a result's index -> its call's tool
        self._missing: dict[int, list[str]] = {}  # a message's index -> its calls' tools
        self._pending: list[str] = []  # said before the next message: calls without a result

    def of(self, i: int, message: Mapping[str, Any]) -> list[str]:
        role = message["role"]
        calls = () if role == "tool" else tool_calls_of(message.get("tool_calls"))
        if not calls and role != "tool" and not self._pending:
            return [f"**{role}**: {message['content']}"]  # plain: as chatjudge always showed it
        if self._names is None:
            self._pair()
        assert self._names is not None
        if role == "tool":
            name = message.get("name") or self._names.get(i, "")
            label = f"**tool** ({name}) returned" if name else "**tool** returned"
            return [f"{label}: {cut(text_of(message.get('content')), self._limit)}"]
        lines = [f"**tool** ({name}): {NO_RESULT}" for name in self._pending]
        self._pending = self._missing.get(i, [])
        if not calls:
            return [*lines, f"**{role}**: {message['content']}"]
        text = text_of(message.get("content"))
        if text:
            lines.append(f"**{role}**: {text}")
        lines += [f"**{role}** called {call.name}({call.arguments})" for call in calls]
        return lines

    def _pair(self) -> None:
        """Which call each result answers, and the calls no result answers."""
        ids = CallIds()
        names: dict[int, str] = {}
        at: dict[int, int] = {}  # a call's number -> the index of the message that made it
        for i, message in enumerate(self._messages):
            if message["role"] == "tool":
                answered = ids.result(message.get("tool_call_id"), message.get("name"))
                if answered is not None:
                    names[i] = answered.name
                continue
            for call in message.get("tool_calls") or ():  # shapes as `tool_calls_of` reads
                if isinstance(call, dict):
                    function = call.get("function")
                    name = (function if isinstance(function, dict) else call).get("name")
                    at[ids.call(call.get("id"), str(name)).number] = i
        for left in ids.unanswered():
            self._missing.setdefault(at[left.number], []).append(left.name)
        self._names = names


def cut(text: str, limit: int) -> str:
    """`text` whole when it has at most `limit` characters, else its first `limit` and a
    marker saying how much was left out (a judge told that it reads a part)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [cut {len(text) - limit:,} of {len(text):,} characters]"


def as_text(
    value: Any, *, include_system: bool = False, tool_result_chars: int = TOOL_RESULT_CHARS
) -> str:
    """A row's field as a judge's prompt shows it: a message list rendered, text as it is,
    a number as its text, nothing as ""."""
    if value is None:
        return ""
    if isinstance(value, list):
        return render_messages(
            value, include_system=include_system, tool_result_chars=tool_result_chars
        )
    return value if isinstance(value, str) else str(value)


def judge_texts(
    fields: Sequence[FieldSpec],
    row: Mapping[str, Any],
    view: JudgeView,
    tools: Sequence[Mapping[str, Any]] = (),
) -> dict[str, str]:
    """A row's protocol fields as the judge's prompt shows them. A field that names a
    `trajectory` column (a response and the messages that led to it) shows that trajectory
    rendered where it holds a tool call and `view.judge_sees` is "trajectory"; otherwise,
    the field's own text (a trajectory without tools adds nothing to its final text, and
    the prompt stays the one a run without trajectories had). The slots (`chatjudge.chat.fields`)
    show their own: `trajectory` its messages, `tools` the row's definitions `tools`
    (`render_tools`), `expected_tool_calls` one `name(arguments)` line per call."""
    texts: dict[str, str] = {}
    for spec in fields:
        if spec.name == TOOLS:
            texts[spec.name] = render_tools(tools)
            continue
        if spec.name == EXPECTED_TOOL_CALLS:
            from chatjudge.chat.toolcalls.expected import render_expected_calls  # that slot's only

            texts[spec.name] = render_expected_calls(row.get(spec.name))
            continue
        value = row.get(column_of(spec.name, row))
        if spec.name == TRAJECTORY and isinstance(value, str):
            value = _messages(value) or value
        if spec.trajectory and view.judge_sees == "trajectory":
            trajectory = _messages(row.get(spec.trajectory))
            if any(m.get("tool_calls") or m.get("role") == "tool" for m in trajectory):
                value = trajectory
        texts[spec.name] = as_text(
            value, include_system=view.include_system, tool_result_chars=view.tool_result_chars
        )
    return texts


def render_tools(tools: Sequence[Mapping[str, Any]]) -> str:
    """Tool definitions (normalised, `chatjudge.chat.toolcalls.definitions`) as a judge reads them:
    per tool a `name: description` line and its parameters' JSON Schema on the next."""
    lines = []
    for entry in tools:
        function = entry.get("function") or {}
        description = function.get("description") or "(no description)"
        lines.append(f"{function.get('name')}: {description}")
        schema = json.dumps(function.get("parameters") or {}, ensure_ascii=False, sort_keys=True)
        lines.append(f"  parameters: {schema}")
    return "\n".join(lines)


def _messages(value: Any) -> list[dict[str, Any]]:
    """A trajectory cell's messages: a list as it is, JSON text (CSV and Parquet cells)
    read; anything else holds none."""
    if isinstance(value, str) and value.lstrip().startswith("["):
        try:
            value = jsoncodec.loads(value, max_depth=jsoncodec.INPUT_DEPTH)
        except ValueError:
            return []
    if not isinstance(value, list):
        return []
    return [m for m in value if isinstance(m, dict)]


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
        return [_chat_message(m) for m in value]
    return [{"role": "system", "content": f"{label}:\n{value}"}]


def without_tools(messages: list[Message]) -> list[Message]:
    """`messages` for a model that is offered no tools (`generate --no-tools`): each run of
    an assistant's tool calls, their results and its reply becomes one assistant message
    holding them as the judge reads them (`**assistant** called name(arguments)`, `**tool**
    (name) returned: ...`), so that roles stay system, user and assistant."""
    out: list[Message] = []
    lines: list[str] = []
    judged = _JudgeLines(messages, TOOL_RESULT_CHARS)
    for i, message in enumerate(messages):
        if message["role"] == "tool" or (
            message["role"] == "assistant" and (lines or message.get("tool_calls"))
        ):
            lines.extend(judged.of(i, message))
            continue
        lines.extend(judged.of(i, message)[:-1])  # calls left without a result, if any
        if lines:
            out.append({"role": "assistant", "content": "\n".join(lines)})
            lines = []
        out.append(message)
    if lines:
        out.append({"role": "assistant", "content": "\n".join(lines)})
    return out


def _chat_message(message: Mapping[str, Any]) -> Message:
    """A read message (OpenAI's format) as a model is sent it: role and content, and its
    tool calls or the call a tool result answers where it has them."""
    out: Message = {"role": message["role"], "content": message["content"]}
    if message.get("tool_calls"):
        out["tool_calls"] = message["tool_calls"]
    if message.get("tool_call_id"):
        out["tool_call_id"] = message["tool_call_id"]
    return out
