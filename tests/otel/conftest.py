"""Runs to export, judged in-process by Python callables, and the exported file read back
with the OpenTelemetry proto types."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import chatjudge

PAIRWISE = "pairwise-chat-quality"


def judged(
    tmp_path: Path,
    rows: list[dict[str, Any]],
    judge: Callable[[str], str],
    protocol: str = PAIRWISE,
    name: str = "run",
) -> Path:
    out = tmp_path / name
    chatjudge.evaluate(rows, protocol=protocol, judge=judge, out=out, report=False)
    return out


def rows_from_spans(n: int) -> list[dict[str, Any]]:
    """Pairwise rows as `import` writes them (a span each), with a candidate's reply."""
    return [
        {
            "id": f"conv-{i}#1",
            "history": [],
            "prompt": f"Question {i}?",
            "baseline_model_response": f"Production answer {i}.",
            "response": f"Candidate answer {i}.",
            "trace_id": f"{i + 1:032x}",
            "span_id": f"{i + 1:016x}",
            "response_id": f"chatcmpl-{i}",
        }
        for i in range(n)
    ]


def verdict(choice: str, explanation: str = "Because.") -> str:
    return json.dumps({"explanation": explanation, "pairwise_choice": choice})


def read_back(path: Path) -> list[tuple[Any, dict[str, Any]]]:
    """Every log record of an OTLP/JSON file, as the proto types read it, with its
    attributes as a dict."""
    from opentelemetry.proto_json.collector.logs.v1.logs_service import (
        ExportLogsServiceRequest,
    )

    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        request = ExportLogsServiceRequest.from_dict(json.loads(line))
        for resource in request.resource_logs:
            for scope in resource.scope_logs:
                assert scope.scope is not None and scope.scope.name == "chatjudge"
                for record in scope.log_records:
                    found.append((record, {kv.key: value(kv.value) for kv in record.attributes}))
    return found


def value(any_value: Any) -> Any:
    for name in ("string_value", "double_value", "bool_value", "int_value"):
        found = getattr(any_value, name)
        if found is not None:
            return found
    raise AssertionError(f"an attribute value of another kind: {any_value}")
