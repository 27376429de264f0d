"""Batches of records as OTLP/JSON `ExportLogsServiceRequest` lines, the JSON that the
OpenTelemetry SDK's OTLP JSON file exporter (`opentelemetry-exporter-otlp-json-file`)
writes for the same records (tests/otel holds the two equal; only the spelling of
non-ASCII text differs: UTF-8 here, ASCII escapes there).

Written here rather than through the SDK: its record objects and encoder cost many times
what these dicts and orjson do a record, and an export writes one per call
(bench/README.md, `export_otlp.py`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from chatjudge.otel.records import EVENT, IDENTITY, Evaluation

BATCH = 512  # records a line: the SDK's batch processor's `max_export_batch_size`


def any_value(value: Any) -> dict[str, Any]:
    """An attribute value as OTLP/JSON's `AnyValue` (int64 as a string, as proto3 JSON)."""
    if value is None:
        return {}
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        if math.isnan(value):
            return {"doubleValue": "NaN"}
        if math.isinf(value):
            return {"doubleValue": "Infinity" if value > 0 else "-Infinity"}
        return {"doubleValue": value}
    if isinstance(value, Sequence):
        return (
            {"arrayValue": {"values": [any_value(v) for v in value]}}
            if value
            else {"arrayValue": {}}
        )
    if isinstance(value, Mapping):
        return {"kvlistValue": {"values": key_values(value)}} if value else {"kvlistValue": {}}
    raise TypeError(f"an attribute of type {type(value).__name__}: {value!r}")


def key_values(attributes: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": any_value(v)} for k, v in attributes.items()]


class Encoder:
    """Lines of one export: the resource and scope (the same for every line), the time."""

    def __init__(
        self,
        resource: Mapping[str, Any],
        scope: tuple[str, str],
        time_unix_nano: int,
        observed_unix_nano: int,
    ) -> None:
        self._resource = {"attributes": key_values(resource)} if resource else {}
        name, version = scope
        self._scope = {"name": name, "version": version}
        self._same: dict[tuple[str, Any], dict[str, Any]] = {}  # identity pairs, encoded once
        self._times = {
            "timeUnixNano": str(time_unix_nano),
            "observedTimeUnixNano": str(observed_unix_nano),
        }

    def record(self, evaluation: Evaluation) -> dict[str, Any]:
        record: dict[str, Any] = {
            **self._times,
            "body": {},  # the SDK's encoding of no body
            "attributes": self._attributes(evaluation.attributes),
        }
        if evaluation.trace_id and evaluation.span_id:
            record["flags"] = 1  # sampled, as the span it joins was
            record["traceId"] = evaluation.trace_id
            record["spanId"] = evaluation.span_id
        record["eventName"] = EVENT
        return record

    def _attributes(self, attributes: Mapping[str, Any]) -> list[dict[str, Any]]:
        out = []
        for key, value in attributes.items():
            if key in IDENTITY:
                pair = self._same.get((key, value))
                if pair is None:
                    pair = self._same[(key, value)] = {"key": key, "value": any_value(value)}
                out.append(pair)
            else:
                out.append({"key": key, "value": any_value(value)})
        return out

    def line(self, batch: Sequence[Evaluation]) -> bytes:
        """One `ExportLogsServiceRequest` holding the batch, and its newline."""
        request = {
            "resourceLogs": [
                {
                    "resource": self._resource,
                    "scopeLogs": [
                        {"scope": self._scope, "logRecords": [self.record(e) for e in batch]}
                    ],
                }
            ]
        }
        return orjson.dumps(request) + b"\n"
