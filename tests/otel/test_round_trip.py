"""examples/traces from end to end: import, judge (the stand-in OpenAI server), export;
every verdict lands on the span that gave the judged reply (with tools: the final one)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.otel.conftest import read_back
from tests.support.cli import run_cli
from tests.support.stub_openai import StubServer

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "traces"


def replies_by_span(path: Path) -> dict[tuple[str, str], str]:
    """What each chat span of an OTLP JSON file answered, by (trace id, span id): the GenAI
    conventions' output messages, or OpenInference's."""
    found = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        for block in json.loads(line).get("resourceSpans", []):
            for scope in block["scopeSpans"]:
                for span in scope["spans"]:
                    attrs = {a["key"]: a["value"] for a in span.get("attributes", [])}
                    output = attrs.get("gen_ai.output.messages", {}).get("stringValue")
                    said = attrs.get("llm.output_messages.0.message.content", {})
                    if "stringValue" in said:
                        found[(span["traceId"], span["spanId"])] = said["stringValue"]
                    elif output:
                        parts = json.loads(output)[0]["parts"]
                        text = "".join(p.get("content", "") for p in parts if p["type"] == "text")
                        found[(span["traceId"], span["spanId"])] = text
    return found


def test_import_judge_export_parents_every_verdict_to_the_replys_span(
    stub: StubServer, tmp_path: Path
) -> None:
    files = [EXAMPLES / "otel-genai.jsonl", EXAMPLES / "otel-agent.jsonl"]
    rows, judged = tmp_path / "rows.jsonl", tmp_path / "judged"
    done = run_cli("import", *map(str, files), "--out", str(rows), "--turns", "all")
    assert done.returncode == 0, done.stderr
    imported: list[dict[str, Any]] = [json.loads(x) for x in rows.read_text().splitlines()]
    assert all(r["trace_id"] and r["span_id"] for r in imported)
    replies = tmp_path / "replies.jsonl"  # a candidate's reply beside production's
    replies.write_text(
        "".join(json.dumps({**r, "response": "Candidate."}) + "\n" for r in imported)
    )
    done = run_cli(
        "run", str(replies), "-p", "pairwise-chat-quality", "--judge", "openai/judge",
        "--base-url", stub.base_url, "--quiet", "--out", str(judged),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = tmp_path / "evaluations.jsonl"
    done = run_cli("export", str(judged), "--otlp", str(out))
    assert done.returncode == 0, done.stderr
    records = read_back(out)
    assert len(records) == len(imported)
    spans = {k: v for f in files for k, v in replies_by_span(f).items()}
    by_id = {r["id"]: r for r in imported}
    tool_turns = 0
    for record, attrs in records:
        row = by_id[attrs["chatjudge.row_id"]]
        parent = (record.trace_id.hex(), record.span_id.hex())
        assert parent == (row["trace_id"], row["span_id"])
        # The span is the one whose reply was judged: the final message after any tools.
        assert spans[parent] == row["baseline_model_response"]
        tool_turns += "baseline_trajectory" in row
        assert attrs["gen_ai.evaluation.score.label"] in ("CANDIDATE", "BASELINE", "TIE")
        assert attrs["chatjudge.judge"] == "openai/judge"
    assert tool_turns > 0
