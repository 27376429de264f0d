"""`chatjudge export RUN --otlp FILE`: the records read back with the OpenTelemetry proto
types, one per item and metric, parented to the imported span, what the SDK's own file
exporter writes for them; failures as errors; no key, and --redact's matches, in none."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import chatjudge
from chatjudge.protocols import get_protocol, protocol_sha256
from tests.otel.conftest import PAIRWISE, judged, read_back, rows_from_spans, verdict
from tests.support.cli import run_cli

IDENTITY = ("chatjudge.protocol", "chatjudge.protocol.sha256", "chatjudge.judge",
            "chatjudge.version", "chatjudge.run_id")  # fmt: skip


def test_one_record_per_item_parented_to_its_span_with_the_candidates_side(
    tmp_path: Path,
) -> None:
    """A judge that prefers whichever response is shown first: both orders disagree (a TIE
    after reduction) unless it says SAME; the label and value are the candidate's side."""
    rows = rows_from_spans(3)
    rows[2].pop("trace_id")  # a row from no span: carries its row id only

    def judge(prompt: str) -> str:
        if "Question 1?" in prompt:
            return verdict("SAME", "Equal.")
        first = prompt.index("Candidate answer") < prompt.index("Production answer")
        return verdict("A", f"A is better (candidate first: {first}).")

    run = judged(tmp_path, rows, judge)
    out = tmp_path / "evaluations.jsonl"
    done = run_cli("export", str(run), "--otlp", str(out))
    assert done.returncode == 0, done.stderr
    assert "exported 3 record(s), 2 parented" in done.stderr
    records = read_back(out)
    assert len(records) == 3
    judge_name = json.loads((run / "summary.json").read_text())["judge"]
    assert "judge" in judge_name
    by_row = {attrs["chatjudge.row_id"]: (record, attrs) for record, attrs in records}
    results = {
        r["id"]: r for r in map(json.loads, (run / "results.jsonl").read_text().splitlines())
    }
    for i, row in enumerate(rows):
        record, attrs = by_row[row["id"]]
        assert record.event_name == "gen_ai.evaluation.result"
        assert attrs["gen_ai.evaluation.name"] == "pairwise_choice"
        label = results[row["id"]]["scores"]["pairwise_choice"]
        assert attrs["gen_ai.evaluation.score.label"] == label
        value = {"CANDIDATE": 1.0, "BASELINE": 0.0, "TIE": 0.5}[label]
        assert attrs["gen_ai.evaluation.score.value"] == value
        assert (
            attrs["gen_ai.evaluation.explanation"]
            == results[row["id"]]["rationale"]["pairwise_choice"]
        )
        assert attrs["gen_ai.response.id"] == f"chatcmpl-{i}"
        if "trace_id" in row:
            assert (record.trace_id.hex(), record.span_id.hex()) == (
                row["trace_id"],
                row["span_id"],
            )
        else:
            assert (record.trace_id, record.span_id) == (b"", b"")
        assert attrs["chatjudge.protocol"] == PAIRWISE
        assert attrs["chatjudge.protocol.sha256"] == protocol_sha256(get_protocol(PAIRWISE))
        assert attrs["chatjudge.judge"] == judge_name
        assert attrs["chatjudge.run_id"] == run.name
        assert set(IDENTITY) <= set(attrs)
    assert by_row["conv-1#1"][1]["gen_ai.evaluation.score.label"] == "TIE"
    assert by_row["conv-1#1"][1]["chatjudge.consistent"] is True
    assert by_row["conv-0#1"][1]["chatjudge.consistent"] is False
    # The hex on the line itself is lowercase, as OTLP/JSON writes it.
    first = json.loads(out.read_text().splitlines()[0])
    ids = [r.get("traceId") for r in first["resourceLogs"][0]["scopeLogs"][0]["logRecords"]]
    assert ids[:2] == [rows[0]["trace_id"], rows[1]["trace_id"]]


def test_pointwise_one_record_per_score_and_failed_items_as_errors(tmp_path: Path) -> None:
    rows = [
        {
            "id": f"q{i}",
            "chat": [{"role": "user", "content": "Hi"}],
            "question": "Q?",
            "answer": f"A{i}",
        }
        for i in range(3)
    ]

    def judge(prompt: str) -> str:
        if "A2" in prompt:
            return "no verdict here"
        return json.dumps({"interactivity": {"thought": "Asked back.", "score": 3},
                           "accuracy": {"thought": "Right.", "score": 1}})  # fmt: skip

    run = judged(tmp_path, rows, judge, protocol="interactivity-accuracy")
    out = tmp_path / "evaluations.jsonl"
    done = run_cli("export", str(run), "--otlp", str(out))
    assert done.returncode == 0, done.stderr
    records = [attrs for _, attrs in read_back(out)]
    assert [(a["chatjudge.row_id"], a["gen_ai.evaluation.name"]) for a in records] == [
        (f"q{i}", name) for i in range(3) for name in ("interactivity", "accuracy")
    ]
    ok = [a for a in records if a["chatjudge.row_id"] != "q2"]
    assert {a["gen_ai.evaluation.name"]: a["gen_ai.evaluation.score.value"] for a in ok} == {
        "interactivity": 3.0, "accuracy": 1.0}  # fmt: skip
    assert {a["gen_ai.evaluation.explanation"] for a in ok} == {"Asked back.", "Right."}
    failed = [a for a in records if a["chatjudge.row_id"] == "q2"]
    assert all(a["error.type"] == "VerdictError" for a in failed)
    assert not any(k.startswith("gen_ai.evaluation.score") for a in failed for k in a)


def test_the_file_is_what_the_sdks_file_exporter_writes(tmp_path: Path) -> None:
    """The same records through the SDK's LogRecord types and its OTLP JSON file exporter:
    the same JSON, line for line (parented and not, every value type, non-ASCII text)."""
    from opentelemetry.exporter.otlp.json.file._log_exporter import FileLogExporter

    from chatjudge.otel.encode import Encoder
    from chatjudge.otel.records import Evaluation
    from chatjudge.otel.sdk import SCOPE, readable, resource

    batch = [
        Evaluation(
            {
                "gen_ai.evaluation.name": "x",
                "gen_ai.evaluation.score.value": 0.0,
                "chatjudge.consistent": False,
                "n": 3,
                "text": "café ✓",
                "empty": "",
            },
            "0af7651916cd43dd8448eb211c80319c",
            "b7ad6b7169203331",
        ),  # fmt: skip
        Evaluation({"gen_ai.evaluation.name": "y", "error.type": "_OTHER"}, None, None),
    ]
    where = resource()
    sdk_file = tmp_path / "sdk.jsonl"
    exporter = FileLogExporter(sdk_file)
    exporter.export(readable(batch, where, 1_700_000_000_000_000_000, 1_700_000_000_500_000_000))
    exporter.shutdown()
    ours = Encoder(dict(where.attributes), SCOPE, 1_700_000_000_000_000_000,
                   1_700_000_000_500_000_000).line(batch)  # fmt: skip
    assert json.loads(ours) == json.loads(sdk_file.read_text())


def test_keys_never_exported_and_redact_masks_more(tmp_path: Path) -> None:
    """A judge that quotes the environment's key in its rationale (a Python callable: the
    run, which sent no key, did not mask it): the record holds the variable's name."""
    key = "sk-export-test-0123456789abcdef"
    rows = rows_from_spans(1)

    def judge(prompt: str) -> str:
        return verdict("B", f"I was called with {key}; mail ops@example.com.")

    run = judged(tmp_path, rows, judge)
    assert key in (run / "results.jsonl").read_text()  # what the export must mask
    out = tmp_path / "evaluations.jsonl"
    done = run_cli(
        "export", str(run), "--otlp", str(out), "--redact", r"[\w.]+@example\.com", key=key
    )
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert key not in text and "ops@example.com" not in text
    [(_, attrs)] = read_back(out)
    assert attrs["gen_ai.evaluation.explanation"] == (
        "I was called with [OPENAI_API_KEY]; mail [REDACTED]."
    )


def test_bad_usage_is_exit_2_and_writes_nothing(tmp_path: Path) -> None:
    run = judged(tmp_path, rows_from_spans(1), lambda prompt: verdict("A"))
    out = tmp_path / "evaluations.jsonl"
    nothing = run_cli("export", str(run))
    assert nothing.returncode == 2 and "--otlp FILE.jsonl or --otlp-endpoint URL" in nothing.stderr
    missing = run_cli("export", str(tmp_path / "nowhere"), "--otlp", str(out))
    assert missing.returncode == 2 and "has no" in missing.stderr
    out.write_text("kept\n")
    again = run_cli("export", str(run), "--otlp", str(out))
    assert again.returncode == 2 and "--overwrite" in again.stderr
    assert out.read_text() == "kept\n"
    results = run / "results.jsonl"
    before = results.read_bytes()
    onto = run_cli("export", str(run), "--otlp", str(results), "--overwrite")
    assert onto.returncode == 2, onto.stderr
    assert "--otlp" in onto.stderr and results.read_bytes() == before


def test_a_tool_trajectory_export_carries_its_rules_hash_and_its_rationale(
    tmp_path: Path,
) -> None:
    call = {"id": "c0", "type": "function",
            "function": {"name": "search", "arguments": '{"q": "x"}'}}  # fmt: skip
    rows = [
        {
            "id": "r0",
            "response_trajectory": [
                {"role": "assistant", "content": "", "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "c0", "content": "found"},
            ],
            "expected_tool_calls": [{"name": "book", "arguments": {}}],
        }
    ]
    run = tmp_path / "run"
    chatjudge.evaluate(rows, protocol="tool-trajectory", out=run, report=False)
    out = tmp_path / "evaluations.jsonl"
    done = run_cli("export", str(run), "--otlp", str(out))
    assert done.returncode == 0, done.stderr
    records = read_back(out)
    rules = protocol_sha256(get_protocol("tool-trajectory"))
    assert rules != hashlib.sha256(b"").hexdigest()  # e3b0c442...: the empty template's
    assert {attrs["chatjudge.protocol.sha256"] for _, attrs in records} == {rules}
    [rationale] = json.loads((run / "results.jsonl").read_text())["rationale"].values()
    assert "does not match" in rationale and "missed: book" in rationale
    for _, attrs in records:
        assert attrs["gen_ai.evaluation.explanation"] == rationale
