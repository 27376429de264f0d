"""The records as the OpenTelemetry SDK's own log records, and sent with its OTLP/HTTP
(protobuf) exporter: its endpoint handling, `OTEL_EXPORTER_OTLP_*` variables (headers,
timeout, compression, certificates) and its retries (transient failures, with back-off,
until the timeout). Needs the `otel` extra."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from chatjudge import secrets
from chatjudge.__about__ import __version__
from chatjudge.errors import ChatJudgeError, UsageError
from chatjudge.otel.records import EVENT, Evaluation

if TYPE_CHECKING:
    from opentelemetry.sdk._logs import ReadableLogRecord
    from opentelemetry.sdk.resources import Resource

SCOPE = ("chatjudge", __version__)
LOGS_PATH = "/v1/logs"
INSTALL = "pip install 'chatjudge[otel]'"
_EXPORTER_LOGGER = "opentelemetry.exporter.otlp.proto.http._log_exporter"


class SendError(ChatJudgeError):
    """The collector refused a batch, or could not be reached within the SDK's retries."""

    def __init__(self, message: str, sent: int) -> None:
        super().__init__(message)
        self.sent = sent


def resource() -> Resource:
    """The SDK's resource for chatjudge (`service.name` chatjudge unless OTEL_SERVICE_NAME
    or OTEL_RESOURCE_ATTRIBUTES say otherwise), with the SDK's own attributes."""
    try:
        from opentelemetry.sdk.resources import Resource
    except ImportError:
        raise UsageError(f"export needs the OpenTelemetry SDK: {INSTALL}") from None
    return Resource.create({"service.name": "chatjudge"})


def readable(
    batch: Iterable[Evaluation], where: Resource, time_unix_nano: int, observed_unix_nano: int
) -> list[ReadableLogRecord]:
    """The batch as the SDK's records, each in the context of the span it belongs to."""
    from opentelemetry import trace
    from opentelemetry._logs import LogRecord
    from opentelemetry.context import Context
    from opentelemetry.sdk._logs import ReadableLogRecord
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

    scope = InstrumentationScope(*SCOPE)
    records = []
    for evaluation in batch:
        context = Context()
        if evaluation.trace_id and evaluation.span_id:
            span = SpanContext(
                int(evaluation.trace_id, 16),
                int(evaluation.span_id, 16),
                is_remote=True,
                trace_flags=TraceFlags(TraceFlags.SAMPLED),
            )
            context = trace.set_span_in_context(NonRecordingSpan(span), context)
        record = LogRecord(
            timestamp=time_unix_nano,
            observed_timestamp=observed_unix_nano,
            context=context,
            event_name=EVENT,
            attributes=evaluation.attributes,
        )
        records.append(
            ReadableLogRecord(log_record=record, resource=where, instrumentation_scope=scope)
        )
    return records


def logs_endpoint(url: str) -> str:
    """A collector's base URL (as OTEL_EXPORTER_OTLP_ENDPOINT) gets the logs path after its
    own path, its query kept; a URL whose path ends with it is taken as it is."""
    parts = urlsplit(url)
    if parts.path.rstrip("/").endswith(LOGS_PATH):
        return url
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + LOGS_PATH))


def shown(url: str) -> str:
    """`url` as it may be printed: a password in it is `***` (and masked from then on in
    anything said, as a key is)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    secrets.remember(parts.password, "password")
    user, _, host = parts.netloc.rpartition("@")
    name = user.partition(":")[0]
    return urlunsplit(parts._replace(netloc=f"{name}:***@{host}"))


def send(
    batches: Iterator[Sequence[Evaluation]],
    url: str,
    time_unix_nano: int,
    observed_unix_nano: int,
) -> int:
    """Send every batch to `url` with the SDK's exporter, one request a batch; the number of
    records sent. SendError, with the number the collector took, at the first batch it
    refuses or cannot be sent."""
    try:
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
        from opentelemetry.sdk._logs.export import LogRecordExportResult
    except ImportError:
        raise UsageError(f"--otlp-endpoint needs the OTLP/HTTP exporter: {INSTALL}") from None
    endpoint = logs_endpoint(url)
    exporter = OTLPLogExporter(endpoint=endpoint)
    endpoint = shown(endpoint)  # what is said about it
    where = resource()
    said = _Said()
    logger = logging.getLogger(_EXPORTER_LOGGER)
    logger.addHandler(said)
    propagate, logger.propagate = logger.propagate, False
    sent = 0
    try:
        for batch in batches:
            records = readable(batch, where, time_unix_nano, observed_unix_nano)
            if exporter.export(records) is not LogRecordExportResult.SUCCESS:
                why = f": {said.last}" if said.last else ""
                raise SendError(
                    f"the OTLP collector at {endpoint} did not take the records{why}; "
                    f"{sent} record(s) were sent before it",
                    sent,
                )
            sent += len(records)
    finally:
        logger.removeHandler(said)
        logger.propagate = propagate
        exporter.shutdown()
    return sent


class _Said(logging.Handler):
    """Keeps what the SDK's exporter said went wrong (it returns only FAILURE): its last
    retry's warning (the cause: a refused connection...) and its final error."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.warning: str | None = None
        self.error: str | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.ERROR:
            self.error = record.getMessage()
        else:
            self.warning = record.getMessage()

    @property
    def last(self) -> str:
        return " ".join(m for m in (self.warning, self.error) if m)
