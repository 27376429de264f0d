"""Span tables exported as Parquet or CSV (Arize Phoenix's span dataframe and the like):
one span per row, ids in `context.span_id` / `span_id`, times in `start_time` / `end_time`,
attributes either one column each (`attributes.llm.input_messages`, nested lists and
objects allowed) or one `attributes` column holding a JSON object.

Rows are read in batches (Parquet) or one at a time (CSV) and turned into calls with the
same conventions as OTLP spans.
"""

from __future__ import annotations

import csv
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from chatjudge import jsoncodec
from chatjudge.traces.spans import SpanInfo, call_of_span, is_call
from chatjudge.traces.times import nanoseconds
from chatjudge.traces.traced_calls import Call, FailedCall, Interner, TraceProblem, Where

# GenAI attributes that are JSON documents in their own right: kept whole, never flattened.
WHOLE = frozenset(
    {
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.system_instructions",
        "gen_ai.tool.definitions",
    }
)
_SPAN_ID = ("context.span_id", "span_id", "spanId")
_TRACE_ID = ("context.trace_id", "trace_id", "traceId")
_START = ("start_time", "start_time_unix_nano", "startTimeUnixNano", "timestamp")
_END = ("end_time", "end_time_unix_nano", "endTimeUnixNano")
# Columns whose cells are JSON documents (a whole attribute), as opposed to the leaves of
# flattened attributes (`...message.content`, `input.value`), whose text stays text even
# when it looks like JSON.
JSON_COLUMNS = frozenset(
    {
        "attributes",
        *(
            f"attributes.{key}"
            for key in ("llm.input_messages", "llm.output_messages", "llm.tools", *WHOLE)
        ),
    }
)


def table_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(row number, row) of a .parquet or .csv span table."""
    if path.suffix.lower() in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        number = 0
        for batch in pq.ParquetFile(path).iter_batches(batch_size=512):
            for row in batch.to_pylist():
                number += 1
                yield number, row
        return
    csv.field_size_limit(sys.maxsize)  # a cell can hold a whole conversation
    with path.open("r", encoding="utf-8", newline="") as fh:
        for number, row in enumerate(csv.DictReader(fh), 1):
            yield number, {k: v or None for k, v in row.items() if k is not None}


def _decoded(column: str, value: Any) -> Any:
    """A cell's value; a JSON column's text (CSV's only way to hold one) decoded."""
    if column in JSON_COLUMNS and isinstance(value, str) and value[:1] in ("[", "{"):
        try:
            return jsoncodec.loads(value, max_depth=jsoncodec.INPUT_DEPTH)
        except ValueError:
            return value
    return value


def flatten(key: str, value: Any, into: dict[str, Any]) -> None:
    """Nested attribute values as the flat dotted keys that OTLP spans carry."""
    if key in WHOLE or not isinstance(value, list | dict):
        if value is not None:
            into[key] = value
        return
    items = enumerate(value) if isinstance(value, list) else value.items()
    for sub, inner in items:
        flatten(f"{key}.{sub}", inner, into)


def attributes_of(row: dict[str, Any]) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    whole = _decoded("attributes", row.get("attributes"))
    if isinstance(whole, dict):
        for key, value in whole.items():
            flatten(key, value, attrs)
    for column, value in row.items():
        if column.startswith("attributes."):
            flatten(column.removeprefix("attributes."), _decoded(column, value), attrs)
    if "openinference.span.kind" not in attrs and row.get("span_kind") == "LLM":
        attrs["openinference.span.kind"] = "LLM"
    return attrs


def read_table(
    path: Path, keep: tuple[str, ...], intern: Interner
) -> Iterator[Call | FailedCall | TraceProblem]:
    """The calls of a span table's LLM rows; a failed call (status ERROR, no reply) as
    FailedCall."""
    for number, row in table_rows(path):
        attrs = attributes_of(row)
        if not is_call(attrs, []):
            continue
        span_id = next((str(row[c]) for c in _SPAN_ID if row.get(c)), None)
        where = Where(path.name, number, span_id)
        try:
            start = nanoseconds(next((row[c] for c in _START if row.get(c) is not None), None))
            end = nanoseconds(next((row[c] for c in _END if row.get(c) is not None), None))
        except ValueError as exc:
            yield TraceProblem(where, f"unreadable time: {exc}")
            continue
        trace_id = next((str(row[c]) for c in _TRACE_ID if row.get(c)), None)
        try:
            info = SpanInfo(where, start, end or start, trace_id, {})
            yield call_of_span(attrs, [], info, keep=keep, intern=intern)
        except TraceProblem as problem:
            failed = str(row.get("status_code") or row.get("status") or "").upper()
            yield FailedCall(where) if failed in ("ERROR", "STATUS_CODE_ERROR") else problem
