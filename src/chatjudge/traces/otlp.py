"""OTLP JSON files, as the OpenTelemetry Collector's file exporter and the Python SDK's
OTLP JSON file exporter write them: one `ExportTraceServiceRequest` (`resourceSpans`) or
`ExportLogsServiceRequest` (`resourceLogs`) per line, or one such object in the whole file.

Files are read a line at a time; only calls leave the reader (compact, messages interned).
GenAI messages recorded as log records (the older event form) are joined to their span by
span id, across files, once everything has been read.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chatjudge import jsoncodec
from chatjudge.traces.genai import EVENT_NAMES, Event
from chatjudge.traces.spans import NO_MESSAGES, SpanInfo, call_of_span, is_call
from chatjudge.traces.traced_calls import (
    Call,
    DuplicateSpan,
    FailedCall,
    Interner,
    TraceProblem,
    Where,
)


def is_otlp(record: Any) -> bool:
    return isinstance(record, dict) and ("resourceSpans" in record or "resourceLogs" in record)


def any_value(value: Any) -> Any:
    """An OTLP `AnyValue` as plain Python."""
    if not isinstance(value, dict):
        return value
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return int(value["intValue"])
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        return [any_value(v) for v in value["arrayValue"].get("values", [])]
    if "kvlistValue" in value:
        return attributes(value["kvlistValue"].get("values", []))
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


def attributes(pairs: Any) -> dict[str, Any]:
    """OTLP's list of {"key", "value"} pairs as a dict; anything else is not OTLP."""
    out: dict[str, Any] = {}
    for pair in pairs or ():
        if not isinstance(pair, dict):
            raise TypeError(f"an attribute is {pair!r}, not a key and a value")
        if "key" in pair:
            out[pair["key"]] = any_value(pair.get("value"))
    return out


def hex_id(value: Any) -> str | None:
    """A trace or span id as hex: OTLP JSON writes hex, protobuf's JSON mapping base64."""
    if not value:
        return None
    text = str(value)
    if len(text) in (24, 12) and not all(c in "0123456789abcdefABCDEF" for c in text):
        return base64.b64decode(text).hex()
    return text.lower()


def records(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, decoded object) for each line, a TraceProblem for a line that is not
    JSON; a file holding one JSON object (or array of them) written over many lines is read
    whole, as line 1. Only a file whose first line is no JSON can be such a file, so it is
    read whole at most once: a file of bad lines costs one pass, not one per line."""
    first = True
    with path.open("rb") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                value = jsoncodec.loads(line, max_depth=jsoncodec.INPUT_DEPTH)
            except ValueError as exc:
                if first and (whole := _whole(path)) is not None:
                    yield from _items(1, whole)
                    return
                first = False
                yield number, TraceProblem(Where(path.name, number), f"unparseable JSON: {exc}")
                continue
            first = False
            yield from _items(number, value)


def _items(number: int, value: Any) -> Iterator[tuple[int, Any]]:
    if isinstance(value, list):
        for item in value:
            yield number, item
    else:
        yield number, value


def _whole(path: Path) -> Any:
    try:
        return jsoncodec.loads(path.read_bytes(), max_depth=jsoncodec.INPUT_DEPTH)
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class _Pending:
    """A chat span that records no messages: perhaps they are log records (`finish`)."""

    span_id: str
    attrs: dict[str, Any]
    info: SpanInfo


Outcome = Call | FailedCall | TraceProblem | _Pending | None  # None: not a call


def _said(outcome: Outcome) -> Any:
    """What a span's outcome says, where it was read left out: two spans under one id that
    say the same are one span exported twice (an exporter's retry, or two exports given)."""
    if isinstance(outcome, Call):
        c = outcome
        return (c.start, c.end, c.messages, c.reply, c.model, c.conversation, c.kept)
    if isinstance(outcome, _Pending):
        return (outcome.attrs, outcome.info.start, outcome.info.end)
    if isinstance(outcome, TraceProblem):
        return str(outcome).removeprefix(str(outcome.where))
    return "failed" if isinstance(outcome, FailedCall) else None


class OtlpReader:
    """Reads any number of OTLP JSON files; calls come out as spans are read, calls whose
    messages live in log records once every file has been read (`finish`)."""

    def __init__(self, keep: tuple[str, ...], intern: Interner) -> None:
        self.keep = keep
        self.intern = intern
        self._pending: dict[str, _Pending] = {}
        self._logged: dict[str, list[tuple[int, Event]]] = {}
        # (trace id, span id) of each call read: where, and what it gave
        self._seen: dict[tuple[str | None, str], tuple[Where, Outcome]] = {}

    def read(
        self, path: Path, number: int, record: Any
    ) -> Iterator[Call | FailedCall | TraceProblem | DuplicateSpan]:
        """The calls of one decoded line of `path`; a line whose structure is not OTLP's
        (a string where an object belongs, a time that is no number) is a problem of its
        own, named by file and line."""
        try:
            for block in record.get("resourceLogs") or ():
                self._logs(block)
            for block in record.get("resourceSpans") or ():
                resource = attributes((block.get("resource") or {}).get("attributes"))
                for scope in block.get("scopeSpans") or ():
                    for span in scope.get("spans") or ():
                        found = self._span(span, resource, path, number)
                        if found is not None:
                            yield found
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            yield TraceProblem(
                Where(path.name, number), f"not OTLP JSON as exporters write it: {exc!r}"
            )

    def _span(
        self, span: dict[str, Any], resource: dict[str, Any], path: Path, number: int
    ) -> Call | FailedCall | TraceProblem | DuplicateSpan | None:
        """The span's call; a span whose ids were read before is read once if it says the
        same, and is a DuplicateSpan if not (spans without ids are each a call)."""
        span_id, trace_id = hex_id(span.get("spanId")), hex_id(span.get("traceId"))
        where = Where(path.name, number, span_id)
        outcome = self._outcome(span, resource, where, trace_id)
        if span_id:
            seen = self._seen.get((trace_id, span_id))
            if seen is not None:
                first, before = seen
                if _said(outcome) == _said(before):
                    return None
                return DuplicateSpan(where, first, trace_id)
            if outcome is not None:
                self._seen[(trace_id, span_id)] = (where, outcome)
        if isinstance(outcome, _Pending):
            self._pending[outcome.span_id] = outcome
            return None
        return outcome

    def _outcome(
        self, span: dict[str, Any], resource: dict[str, Any], where: Where, trace_id: str | None
    ) -> Outcome:
        attrs = attributes(span.get("attributes"))
        events: list[Event] = [
            (e.get("name", ""), attributes(e.get("attributes"))) for e in span.get("events") or ()
        ]
        if not is_call(attrs, events):
            return None
        info = SpanInfo(
            where,
            int(span.get("startTimeUnixNano") or 0),
            int(span.get("endTimeUnixNano") or 0),
            trace_id,
            resource,
        )
        try:
            return call_of_span(attrs, events, info, keep=self.keep, intern=self.intern)
        except TraceProblem as problem:
            if (span.get("status") or {}).get("code") in (2, "STATUS_CODE_ERROR"):
                return FailedCall(where)
            if where.span_id and str(problem).endswith(NO_MESSAGES):  # perhaps in log records
                return _Pending(where.span_id, attrs, info)
            return problem

    def _logs(self, block: dict[str, Any]) -> None:
        for scope in block.get("scopeLogs") or ():
            for log in scope.get("logRecords") or ():
                attrs = attributes(log.get("attributes"))
                name = log.get("eventName") or attrs.get("event.name")
                span_id = hex_id(log.get("spanId"))
                if name not in EVENT_NAMES or not span_id:
                    continue
                body = any_value(log.get("body"))
                payload = {**attrs, **body} if isinstance(body, dict) else attrs
                time = int(log.get("timeUnixNano") or log.get("observedTimeUnixNano") or 0)
                self._logged.setdefault(span_id, []).append((time, (name, payload)))

    def finish(self) -> Iterator[Call | TraceProblem]:
        """Spans whose messages were log records, joined with them; those that had none."""
        for span_id, pending in self._pending.items():
            logged = sorted(self._logged.get(span_id, ()), key=lambda t: t[0])
            events = [event for _, event in logged]
            try:
                yield call_of_span(
                    pending.attrs, events, pending.info, keep=self.keep, intern=self.intern
                )
            except TraceProblem as problem:
                yield problem
        self._pending.clear()
        self._logged.clear()
