"""OTLP JSON files of chosen spans, written by the OpenTelemetry SDK and its OTLP JSON file
exporter (the encoding production uses), for conventions and faults that the tested
instrumentations do not produce: the older GenAI events (on the span, or as log records
linked to it), OpenLLMetry's indexed attributes, recorded conversation and session ids."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

T0 = 1_760_000_000_000_000_000  # nanoseconds: 2025-10-09


@dataclass
class Span:
    attributes: dict[str, Any]
    at: int  # seconds after T0: when the call started (it lasts half a second)
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # span events
    logs: list[tuple[str, Any]] = field(default_factory=list)  # (event name, body) log records
    name: str = "chat assistant-v1"
    parent: int | None = None  # an earlier span's index: this one joins its trace
    failed: bool = False  # ended with an error status, as a call that raised


def write_otlp(
    spans: list[Span],
    path: Path,
    *,
    logs: Path | None = None,
    resource: dict[str, Any] | None = None,
) -> list[str]:
    """Write the spans (and their log records, to `logs`); their span ids, in hex."""
    from opentelemetry import trace
    from opentelemetry._logs import LogRecord
    from opentelemetry.exporter.otlp.json.file import FileSpanExporter
    from opentelemetry.exporter.otlp.json.file._log_exporter import FileLogExporter
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.trace import StatusCode

    where = Resource.create({"service.name": "assistant", **(resource or {})})
    tracers = TracerProvider(resource=where)
    tracers.add_span_processor(SimpleSpanProcessor(FileSpanExporter(path)))
    loggers = LoggerProvider(resource=where)
    if logs is not None:
        loggers.add_log_record_processor(SimpleLogRecordProcessor(FileLogExporter(logs)))
    tracer, logger = tracers.get_tracer("test"), loggers.get_logger("test")
    ids, made = [], []
    for spec in spans:
        start = T0 + spec.at * 1_000_000_000
        parent = None if spec.parent is None else trace.set_span_in_context(made[spec.parent])
        span = tracer.start_span(
            spec.name, context=parent, start_time=start, attributes=spec.attributes
        )
        made.append(span)
        for name, attributes in spec.events:
            span.add_event(name, attributes, timestamp=start + 1)
        for i, (name, body) in enumerate(spec.logs):
            logger.emit(
                LogRecord(
                    timestamp=start + 1 + i,
                    context=trace.set_span_in_context(span),
                    event_name=name,
                    body=body,
                    attributes={"gen_ai.system": "openai"},
                )
            )
        if spec.failed:
            span.set_status(StatusCode.ERROR, "Connection error.")
        ids.append(format(span.get_span_context().span_id, "016x"))
        span.end(end_time=start + 500_000_000)
    tracers.shutdown()
    loggers.shutdown()
    return ids


def genai(messages: list[dict[str, Any]], reply: str, **more: Any) -> dict[str, Any]:
    """Current GenAI attributes of a chat span: OpenAI-style messages as `parts`."""

    def parts(m: dict[str, Any]) -> dict[str, Any]:
        return {"role": m["role"], "parts": [{"type": "text", "content": m["content"]}]}

    return {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "assistant-v1",
        "gen_ai.input.messages": json.dumps([parts(m) for m in messages]),
        "gen_ai.output.messages": json.dumps(
            [{**parts({"role": "assistant", "content": reply}), "finish_reason": "stop"}]
        ),
        **more,
    }


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, str]:
    return {"role": "assistant", "content": text}
