"""One production call, as every reader hands it on: compact, with where it came from.

A 100,000-span export repeats each conversation's history in every call; messages are
interned (one object per distinct message), so a call holds references to shared
messages, and memory grows with what was said, not with how often it was repeated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from chatjudge.chat.messages import Msg


@dataclass(frozen=True, slots=True)
class Where:
    """A place in an input file, for messages: `traces.jsonl:12 span 5b8a...`."""

    file: str
    line: int
    span_id: str | None = None

    def __str__(self) -> str:
        span = f" span {self.span_id}" if self.span_id else ""
        return f"{self.file}:{self.line}{span}"


class TraceProblem(Exception):
    """Input that cannot become a faithful conversation, with where it is."""

    def __init__(self, where: Where | str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where


@dataclass(frozen=True, slots=True)
class FailedCall:
    """A call that failed in production (error status, no reply): the user saw no answer,
    so it is no turn of any conversation; counted, not imported."""

    where: Where


@dataclass(frozen=True, slots=True)
class DuplicateSpan:
    """A span with the trace and span ids of one read before but other content: two spans
    under one id (a faulty id generator, or files of two exports). The first is kept, and
    the import says so; a span exported twice (the same content) is no duplicate."""

    where: Where
    first: Where
    trace_id: str | None

    def __str__(self) -> str:
        return (
            f"{self.where} (trace {self.trace_id}): other content under the ids of "
            f"{self.first}, which was kept"
        )


@dataclass(slots=True)
class Call:
    """One chat call: what the model saw (`messages`), what it answered (`reply`)."""

    where: Where
    start: int  # nanoseconds since the epoch; 0 when unknown
    end: int
    messages: tuple[Msg, ...]
    reply: Msg
    model: str | None = None
    trace_id: str | None = None
    conversation: str | None = None  # the recorded conversation or session id, if any
    kept: dict[str, Any] = field(default_factory=dict)  # attributes named by --keep
    tools: str | None = None  # the tool definitions offered, as JSON text (`tool_definitions`)
    response_id: str | None = None  # the provider's id of the reply (`gen_ai.response.id`)


def replied(where: Where, reply: Msg) -> Msg:
    """The reply of a call; TraceProblem when production answered nothing (no text, no
    tool call): an empty baseline would be judged as if it were an answer."""
    if not reply.content.strip() and not reply.tool_calls:
        raise TraceProblem(where, "the reply is empty: no text and no tool call")
    return reply


class Interner:
    """Hands back one shared object per distinct message (its tool-call ids included: two
    conversations that called alike keep their own ids) and per distinct text."""

    def __init__(self) -> None:
        self._seen: dict[tuple[Msg, tuple[str | None, ...]], Msg] = {}
        self._texts: dict[str, str] = {}

    def __call__(self, messages: tuple[Msg, ...] | list[Msg]) -> tuple[Msg, ...]:
        return tuple(map(self.one, messages))

    def one(self, message: Msg) -> Msg:
        ids = (message.tool_call_id, *(c.id for c in message.tool_calls))
        return self._seen.setdefault((message, ids), message)

    def text(self, text: str | None) -> str | None:
        return None if text is None else self._texts.setdefault(text, text)


def keep_from(sources: list[dict[str, Any]], names: tuple[str, ...]) -> dict[str, Any]:
    """The --keep attributes of a call, looked up in each source in turn (span attributes,
    then its resource's; a log record's fields, then its metadata)."""
    kept: dict[str, Any] = {}
    for name in names:
        for source in sources:
            if name in source:
                kept[name] = source[name]
                break
    return kept
