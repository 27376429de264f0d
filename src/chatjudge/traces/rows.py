"""The rows `chatjudge import` writes: one per assistant turn, in the format that
`generate --field response` and `run -p pairwise-chat-quality` read.

A row's `history` and `prompt` are exactly what the production call that gave the turn's
final reply saw (however production truncated or summarised it): the messages before its
last user message, and that message. Tool calls and results are messages in OpenAI's chat
format (`chat_format`), wherever they are. `baseline_model_response` is the text production
answered with; where it went through tool calls first, `baseline_trajectory` holds the
turn's messages after the user's: the calls, their results and the final message. `tools`:
the definitions the final call was offered, where the trace records them.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

from chatjudge import jsoncodec
from chatjudge.data.tool_rows import read_row_tools
from chatjudge.traces.chat_format import chat_messages
from chatjudge.traces.redact import Redactor
from chatjudge.traces.traced_calls import Call, TraceProblem
from chatjudge.writing import replaced


class Function(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: str  # JSON text (canonical: sorted keys), or as recorded where it is not JSON


class ToolCall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    type: Literal["function"] = "function"
    function: Function


class ChatMessage(BaseModel):
    """A message in OpenAI's chat format; `tool_calls` and `tool_call_id` only where set."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["system", "user", "assistant", "tool"]
    tool_call_id: str | None = None  # a tool result: the call it answers
    content: str
    tool_calls: list[ToolCall] | None = None  # an assistant's calls

    @model_serializer(mode="wrap")
    def _set_only(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return {k: v for k, v in handler(self).items() if v is not None}


class ImportedRow(BaseModel):
    """One assistant turn of a production conversation; --keep attributes as extra
    columns, named after the attribute."""

    model_config = ConfigDict(extra="allow")

    id: str  # <conversation_id>#<turn>
    conversation_id: str
    turn: int  # 1-based, in the reconstructed conversation
    history: list[ChatMessage]
    prompt: str
    baseline_model_response: str
    # The turn's messages after the prompt, where production called tools (else absent).
    baseline_trajectory: list[ChatMessage] | None = None
    tools: list[dict[str, Any]] | None = None  # the definitions offered (else absent)
    model: str | None  # the production model, as its response named it
    start_time: str | None  # the turn's first call started (ISO 8601, UTC)
    end_time: str | None  # its last call ended
    tool_calls: int  # tool calls the assistant made in this turn
    source: str  # file:line [span id] of the call that gave the final reply
    # The span of that call, lowercase hex (null where the input has no valid OpenTelemetry
    # ids: logs, tables without them): `chatjudge export` parents its verdicts to it.
    trace_id: str | None
    span_id: str | None
    response_id: str | None  # the reply's `gen_ai.response.id` (a log's response `id`)

    @model_serializer(mode="wrap")
    def _optional_columns(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for name in _OPTIONAL:
            if data.get(name) is None:
                data.pop(name, None)
        return data


_OPTIONAL = ("baseline_trajectory", "tools")  # written only where a turn has them
FIELDS = frozenset(ImportedRow.model_fields)


def _iso(nanoseconds: int) -> str | None:
    if not nanoseconds:
        return None
    moment = dt.datetime.fromtimestamp(nanoseconds / 1e9, tz=dt.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def otel_id(value: Any, digits: int) -> str | None:
    """An OpenTelemetry trace (32 digits) or span (16) id as lowercase hex; None for
    anything else (an all-zero id is OpenTelemetry's "invalid")."""
    if not isinstance(value, str) or len(value) != digits:
        return None
    text = value.lower()
    if text.strip("0123456789abcdef") or not text.strip("0"):
        return None
    return text


def row_of_turn(
    conversation_id: str, number: int, calls: list[Call], redactor: Redactor
) -> ImportedRow:
    """The row of one turn; TraceProblem when its final call has no user message, when
    production's final reply is not recorded (the turn ends on tool calls), or when its
    tool calls and results do not pair up as a row's must."""
    final = calls[-1]
    seen = final.messages
    at = next((i for i in range(len(seen) - 1, -1, -1) if seen[i].role == "user"), None)
    if at is None:
        raise TraceProblem(final.where, "the call's input has no user message to replay")
    prompt = seen[at].content
    if not prompt.strip():
        raise TraceProblem(final.where, "the call's last user message is empty")
    if final.reply.tool_calls:
        raise TraceProblem(
            final.where,
            "the turn ends on tool calls that no later call answers: production's final reply "
            "is not in the files (was a span of this conversation left out of the export?)",
        )
    messages = [_redacted(m, redactor) for m in chat_messages([*seen, final.reply])]
    steps = messages[at + 1 :]
    if redactor:
        prompt = redactor.text(prompt)
        redacted = redactor.text(conversation_id)
        if redacted != conversation_id:  # an e-mail as session id: a stable stand-in instead
            conversation_id = "conv-" + hashlib.sha1(conversation_id.encode()).hexdigest()[:12]
    kept: dict[str, Any] = {}
    for call in calls:
        kept.update(call.kept)
    offered = next((c.tools for c in reversed(calls) if c.tools), None)
    data: dict[str, Any] = {
        "id": f"{conversation_id}#{number}",
        "conversation_id": conversation_id,
        "turn": number,
        "history": messages[:at],
        "prompt": prompt,
        "baseline_model_response": steps[-1]["content"],
        "baseline_trajectory": steps if len(steps) > 1 else None,
        "tools": json.loads(offered) if offered else None,
        "model": final.model,
        "start_time": _iso(calls[0].start),
        "end_time": _iso(final.end),
        "tool_calls": sum(len(m.tool_calls) for m in seen[at + 1 :]),
        "source": str(final.where),
        "trace_id": otel_id(final.trace_id, 32),
        "span_id": otel_id(final.where.span_id, 16),
        "response_id": final.response_id,
        **redactor.value(kept),
    }
    _check(data, final)
    return ImportedRow.model_validate(data)


def _redacted(message: dict[str, Any], redactor: Redactor) -> dict[str, Any]:
    """A message with --redact applied to what was said: its text and its calls' arguments
    (not its role, ids or tool names)."""
    if not redactor:
        return message
    message["content"] = redactor.text(message["content"])
    for call in message.get("tool_calls", ()):
        call["function"]["arguments"] = redactor.text(call["function"]["arguments"])
    return message


def _check(data: dict[str, Any], final: Call) -> None:
    """The row as `run` and `generate` will check it (`chatjudge.data.tool_rows`): a row they
    would refuse is a problem of the trace, named here, not a surprise later."""
    problems = read_row_tools(data, ("history",)).problems
    if problems:
        field, found = next(iter(problems.items()))
        raise TraceProblem(final.where, f"the row's {field} cannot be replayed: {found[0]}")


def write_rows(rows: Iterable[ImportedRow], out: Path) -> int:
    """Write the rows as JSONL, all or nothing (a temporary file renamed); their count."""
    out.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with replaced(out) as fh:
        for row in rows:
            fh.write(jsoncodec.dumps(row.model_dump()) + b"\n")
            count += 1
    return count
