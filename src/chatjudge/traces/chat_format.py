"""A row's messages in OpenAI's chat format (what `row_messages` reads), written from the
calls' messages: every tool call with an id, every result with the id of the call it answers.

Calls and results pair by the one rule (`chatjudge.chat.toolcalls.call_ids`), which writes
their ids too.
Recorded ids are kept. Some writers record none (OpenLLMetry's attributes and the older
GenAI events may leave them out), and some providers number their calls anew each turn
(`call_0` again): a call without an id, or with one an earlier call of the row has, gets
`call_<n>` (n: its place among the row's calls, 1-based). A result answers the earliest
unanswered call of its recorded id; one that has no id (as does one whose id matches none,
if a call has none) answers the earliest unanswered call to its tool (where the result
names one), else the earliest unanswered call. A result left answering nothing keeps its
recorded id, and the row's check (`row_messages`) names it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chatjudge.chat.messages import Msg
from chatjudge.chat.toolcalls.call_ids import CallIds


def chat_messages(messages: Sequence[Msg]) -> list[dict[str, Any]]:
    """`messages` as a row holds them: `{"role", "content"}`, an assistant's `tool_calls`
    (`{"id", "type": "function", "function": {"name", "arguments"}}`) and `{"role": "tool",
    "tool_call_id", "content"}` results."""
    ids = CallIds()
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "tool":
            answered = ids.result(message.tool_call_id, message.name)
            written = answered.written if answered else message.tool_call_id or ""
            out.append({"role": "tool", "tool_call_id": written, "content": message.content})
            continue
        chat: dict[str, Any] = {"role": message.role, "content": message.content}
        if message.tool_calls:
            chat["tool_calls"] = [
                {
                    "id": ids.call(call.id, call.name).written,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in message.tool_calls
            ]
        out.append(chat)
    return out
