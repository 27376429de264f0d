"""A row's messages in OpenAI's chat format (what `row_messages` reads), written from the
calls' messages: every tool call with an id, every result with the id of the call it answers.

Recorded ids are kept. Some writers record none (OpenLLMetry's attributes and the older
GenAI events may leave them out), and some providers number their calls anew each turn
(`call_0` again): a call without an id, or with one an earlier call of the row has, gets
`call_<n>` (n: its place among the row's calls, 1-based; `call_<n>_<k>` should a recorded id
already be that). A result answers the call of its recorded id among those the latest
assistant message made; one that has no id answers (as does one whose id matches none, if a
call has none) the first of them to its tool (where the result names one), else the first
of them still unanswered. A result left answering nothing keeps its recorded id, and the
row's check (`row_messages`) names it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from chatjudge.messages import Msg


@dataclass(slots=True)
class _Open:
    """A call awaiting its result: its recorded id, its tool, the id it is written with."""

    recorded: str | None
    name: str
    written: str


def chat_messages(messages: Sequence[Msg]) -> list[dict[str, Any]]:
    """`messages` as a row holds them: `{"role", "content"}`, an assistant's `tool_calls`
    (`{"id", "type": "function", "function": {"name", "arguments"}}`) and `{"role": "tool",
    "tool_call_id", "content"}` results."""
    taken = {c.id for m in messages for c in m.tool_calls if c.id}
    used: set[str] = set()
    waiting: list[_Open] = []
    out: list[dict[str, Any]] = []
    number = 0
    for message in messages:
        if message.role == "tool":
            answered = _answered(message, waiting)
            out.append({"role": "tool", "tool_call_id": answered, "content": message.content})
            continue
        waiting = []
        written: dict[str, Any] = {"role": message.role, "content": message.content}
        calls = []
        for call in message.tool_calls:
            number += 1
            given = call.id if call.id and call.id not in used else _fresh(number, taken | used)
            used.add(given)
            waiting.append(_Open(call.id, call.name, given))
            function = {"name": call.name, "arguments": call.arguments}
            calls.append({"id": given, "type": "function", "function": function})
        if calls:
            written["tool_calls"] = calls
        out.append(written)
    return out


def _fresh(number: int, taken: set[str]) -> str:
    found, k = f"call_{number}", 1
    while found in taken:
        k += 1
        found = f"call_{number}_{k}"
    return found


def _answered(result: Msg, waiting: list[_Open]) -> str:
    """The written id of the call `result` answers (taken off `waiting`); its recorded id
    (or "") where it answers none, which the row's check then names."""
    chosen = next((c for c in waiting if c.recorded and c.recorded == result.tool_call_id), None)
    if chosen is None:
        pool = [c for c in waiting if not (result.tool_call_id and c.recorded)]
        named = [c for c in pool if result.name and c.name == result.name]
        chosen = next(iter(named or pool), None)
    if chosen is None:
        return result.tool_call_id or ""
    waiting.remove(chosen)
    return chosen.written
