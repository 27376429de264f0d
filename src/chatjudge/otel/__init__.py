"""Verdicts back to the traces: `gen_ai.evaluation.result` log records over OpenTelemetry."""

from chatjudge.otel.export import Exported, export_run
from chatjudge.otel.sdk import SendError

__all__ = ["Exported", "SendError", "export_run"]
