"""`chatjudge export RUN --otlp-endpoint URL`: the SDK's OTLP/HTTP exporter sends every
record (protobuf, batches of 512) to a loopback collector that decodes them; one that
refuses or cannot be reached is exit 2, saying how many records were sent."""

from __future__ import annotations

import socket
from pathlib import Path

from tests.otel.conftest import judged, rows_from_spans, verdict
from tests.support.cli import run_cli
from tests.support.otlp_collector import Collector

N = 520  # two batches


def test_a_collector_receives_every_record_with_the_otlp_headers(tmp_path: Path) -> None:
    rows = rows_from_spans(N)
    run = judged(tmp_path, rows, lambda prompt: verdict("B", "B it is."))
    with Collector() as collector:
        done = run_cli(
            "export", str(run), "--otlp-endpoint", collector.url,
            OTEL_EXPORTER_OTLP_HEADERS="x-backend-key=backend-secret-123",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert len(collector.requests) == 2
    records = collector.records()
    assert len(records) == N
    assert all(h["x-backend-key"] == "backend-secret-123" for h in collector.headers)
    spans = {(r.trace_id.hex(), r.span_id.hex()) for r in records}
    assert spans == {(r["trace_id"], r["span_id"]) for r in rows}
    first = records[0]
    attrs = {kv.key: getattr(kv.value, kv.value.WhichOneof("value")) for kv in first.attributes}
    assert first.event_name == "gen_ai.evaluation.result"
    assert attrs["gen_ai.evaluation.name"] == "pairwise_choice"
    assert attrs["gen_ai.evaluation.explanation"] == "B it is."
    assert attrs["chatjudge.protocol"] == "pairwise-chat-quality"


def test_a_refusing_collector_is_exit_2_with_the_count_sent(tmp_path: Path) -> None:
    run = judged(tmp_path, rows_from_spans(N), lambda prompt: verdict("A"))
    with Collector(accept=1, refuse=403) as collector:
        done = run_cli("export", str(run), "--otlp-endpoint", collector.url)
    assert done.returncode == 2
    assert "512 record(s) were sent" in done.stderr and "403" in done.stderr
    assert len(collector.records()) == 512


def test_an_unreachable_collector_is_exit_2_with_the_count_sent(tmp_path: Path) -> None:
    run = judged(tmp_path, rows_from_spans(2), lambda prompt: verdict("A"))
    with socket.socket() as closed:  # a port no one listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    done = run_cli(
        "export", str(run), "--otlp-endpoint", f"http://127.0.0.1:{port}",
        OTEL_EXPORTER_OTLP_TIMEOUT="2",  # one retry, whose warning names the cause
    )  # fmt: skip
    assert done.returncode == 2
    assert "0 record(s) were sent" in done.stderr and "Connection refused" in done.stderr


def test_an_endpoints_path_and_query_are_kept_and_its_password_never_printed(
    tmp_path: Path,
) -> None:
    """D13: the logs path goes after the endpoint's own path, before its query; a password
    in the URL is `***` in what export says, whether the collector takes the records or not."""
    password = "collector-password-42"
    run = judged(tmp_path, rows_from_spans(2), lambda prompt: verdict("B"))
    with Collector() as collector:
        url = f"http://ops:{password}@127.0.0.1:{collector.port}/tenant-a/?team=eval"
        done = run_cli("export", str(run), "--otlp-endpoint", url)
    assert done.returncode == 0, done.stderr
    assert collector.paths == ["/tenant-a/v1/logs?team=eval"]
    assert len(collector.records()) == 2
    assert password not in done.stdout + done.stderr
    assert f"ops:***@127.0.0.1:{collector.port}/tenant-a/?team=eval" in done.stderr
    with Collector(accept=0) as refusing:
        url = f"http://ops:{password}@127.0.0.1:{refusing.port}/v1/logs"
        refused = run_cli("export", str(run), "--otlp-endpoint", url)
    assert refused.returncode == 2 and "0 record(s) were sent" in refused.stderr
    assert password not in refused.stdout + refused.stderr
    assert f"ops:***@127.0.0.1:{refusing.port}/v1/logs" in refused.stderr
