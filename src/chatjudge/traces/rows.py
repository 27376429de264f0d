"""The rows `chatjudge import` writes: one per assistant turn, in the format that
`generate --field response` and `run -p pairwise-chat-quality` read.

A row's `history` and `prompt` are exactly what the production call that gave the turn's
final reply saw (however production truncated or summarised it): the messages before its
last user message, and that message. `baseline_model_response` is what production
answered: the tool calls and results of the turn, rendered, then the reply.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from chatjudge import jsoncodec
from chatjudge.conversation import rendered_history, rendered_reply
from chatjudge.traces.calls import Call, TraceProblem
from chatjudge.traces.redact import Redactor


class HistoryMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: str  # system, user or assistant
    content: str


class ImportedRow(BaseModel):
    """One assistant turn of a production conversation; --keep attributes as extra
    columns, named after the attribute."""

    model_config = ConfigDict(extra="allow")

    id: str  # <conversation_id>#<turn>
    conversation_id: str
    turn: int  # 1-based, in the reconstructed conversation
    history: list[HistoryMessage]
    prompt: str
    baseline_model_response: str
    model: str | None  # the production model, as its response named it
    start_time: str | None  # the turn's first call started (ISO 8601, UTC)
    end_time: str | None  # its last call ended
    tool_calls: int  # tool calls the assistant made in this turn
    source: str  # file:line [span id] of the call that gave the final reply


FIELDS = frozenset(ImportedRow.model_fields)


def _iso(nanoseconds: int) -> str | None:
    if not nanoseconds:
        return None
    moment = dt.datetime.fromtimestamp(nanoseconds / 1e9, tz=dt.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def row_of_turn(
    conversation_id: str, number: int, calls: list[Call], redactor: Redactor
) -> ImportedRow:
    """The row of one turn; TraceProblem when its final call has no user message."""
    final = calls[-1]
    seen = final.messages
    at = next((i for i in range(len(seen) - 1, -1, -1) if seen[i].role == "user"), None)
    if at is None:
        raise TraceProblem(final.where, "the call's input has no user message to replay")
    prompt = seen[at].content
    if not prompt.strip():
        raise TraceProblem(final.where, "the call's last user message is empty")
    steps = [*seen[at + 1 :], final.reply]
    if redactor:
        redacted = redactor.text(conversation_id)
        if redacted != conversation_id:  # an e-mail as session id: a stable stand-in instead
            conversation_id = "conv-" + hashlib.sha1(conversation_id.encode()).hexdigest()[:12]
    kept: dict[str, Any] = {}
    for call in calls:
        kept.update(call.kept)
    row = ImportedRow(
        id=f"{conversation_id}#{number}",
        conversation_id=conversation_id,
        turn=number,
        history=[HistoryMessage(**m) for m in rendered_history(seen[:at])],
        prompt=prompt,
        baseline_model_response=rendered_reply(steps),
        model=final.model,
        start_time=_iso(calls[0].start),
        end_time=_iso(final.end),
        tool_calls=sum(len(m.tool_calls) for m in steps),
        source=str(final.where),
        **kept,
    )
    if redactor:
        data = row.model_dump()
        data.update(
            redactor.value(
                {k: data[k] for k in ("history", "prompt", "baseline_model_response", *kept)}
            )
        )
        row = ImportedRow.model_validate(data)
    return row


def write_rows(rows: Iterable[ImportedRow], out: Path) -> int:
    """Write the rows as JSONL, all or nothing (a temporary file renamed); their count."""
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    count = 0
    try:
        with os.fdopen(fd, "wb") as fh:
            for row in rows:
                fh.write(jsoncodec.dumps(row.model_dump()) + b"\n")
                count += 1
        os.chmod(temporary, 0o644)  # mkstemp's 0600 is for the file in the making
        os.replace(temporary, out)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return count
