"""Bad or partial traces: exit 2 naming the file and line or span id, nothing written;
`--skip-invalid` writes the rest, lists what it left out and exits 1. Exit 2 through the CLI
for a bad file and for bad flags (`refused`); each other kind of bad trace through the
importer in this process (`rejected`: the error the CLI turns into exit 2)."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

import pytest

from chatjudge.errors import ChatJudgeError
from chatjudge.options import ImportOptions
from chatjudge.traces import import_traces
from tests.support.cli import run_cli
from tests.traces.conftest import read_rows
from tests.traces.otlp_files import Span, assistant, genai, user, write_otlp

CHAT = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}


def refused(tmp_path: Path, *files: Path, more: tuple[str, ...] = ()) -> str:
    """`chatjudge import FILES MORE` refused through the CLI: exit 2, nothing written."""
    out = tmp_path / "rows.jsonl"
    done = run_cli("import", *map(str, files), "--out", str(out), *more)
    assert done.returncode == 2, done.stderr
    assert not out.exists()
    assert "nothing was written" in done.stderr or "error:" in done.stderr
    return " ".join(done.stderr.split())  # rich may wrap long lines


def rejected(tmp_path: Path, *files: Path, **options: Any) -> str:
    """The importer's refusal of FILES, in this process (the error `refused` shows as exit
    2): its message; nothing written."""
    out = tmp_path / "rows.jsonl"
    with pytest.raises(ChatJudgeError) as refusal:
        import_traces(list(files), out, ImportOptions(**options))
    assert not out.exists()
    return " ".join(str(refusal.value).split())


def test_a_line_that_is_not_json(tmp_path: Path) -> None:
    write_otlp([Span(genai([user("Hi")], "Hello"), 0)], tmp_path / "t.jsonl")
    with (tmp_path / "t.jsonl").open("a") as fh:
        fh.write('{"resourceSpans": [\n')
    assert "t.jsonl:2: unparseable JSON" in refused(tmp_path, tmp_path / "t.jsonl")


def test_a_span_without_messages_names_the_span_and_content_capture(tmp_path: Path) -> None:
    [span_id] = write_otlp([Span(CHAT, 0)], tmp_path / "t.jsonl")
    message = rejected(tmp_path, tmp_path / "t.jsonl")
    assert f"t.jsonl:1 span {span_id}: span without messages" in message
    assert "docs/traces.md" in message


@pytest.mark.parametrize(
    ("attrs", "why"),
    [
        (
            {**CHAT, "gen_ai.input.messages": "[{'role': 'user'", "gen_ai.output.messages": "[]"},
            "unknown attribute layout (GenAI): gen_ai.input.messages is not JSON",
        ),
        (
            {
                **CHAT,
                "gen_ai.input.messages": json.dumps([{"parts": []}]),
                "gen_ai.output.messages": "[]",
            },
            "unknown attribute layout (GenAI): a GenAI message must be an object with a role",
        ),
        (
            {
                "openinference.span.kind": "LLM",
                "llm.input_messages.0.role": "user",
                "llm.input_messages.0.content": "Hi",
                "llm.output_messages.0.role": "assistant",
            },
            "unknown attribute layout (OpenInference): expected message.* keys",
        ),
        (
            {
                **genai([user("Hi")], "Hello"),
                "gen_ai.input.messages": json.dumps([{"role": "narrator", "parts": []}]),
            },
            "unknown attribute layout (GenAI): unknown message role 'narrator'",
        ),
        (  # orjson reads 1,024 levels; Python cannot walk them
            {
                **genai([user("Hi")], "Hello"),
                "gen_ai.input.messages": '[{"role": "user", "parts": ['
                + "[" * 1_018
                + "]" * 1_018
                + "]}]",
            },
            "unknown attribute layout (GenAI): messages nested too deeply to read",
        ),
    ],
    ids=["not-json", "no-role", "openinference-keys", "unknown-role", "nested-too-deep"],
)
def test_an_unknown_attribute_layout(tmp_path: Path, attrs: dict, why: str) -> None:
    [span_id] = write_otlp([Span(attrs, 0)], tmp_path / "t.jsonl")
    assert f"t.jsonl:1 span {span_id}: {why}" in rejected(tmp_path, tmp_path / "t.jsonl")


def test_a_conversation_whose_turns_contradict_each_other(tmp_path: Path) -> None:
    """One session id holding two conversations: turn 2 says the assistant answered
    otherwise than turn 1's span recorded."""
    ids = write_otlp(
        [
            Span(genai([user("Hi")], "Hello", **{"gen_ai.conversation.id": "s"}), 0),
            Span(
                genai(
                    [user("Hi"), assistant("Go away"), user("Why?")],
                    "Sorry",
                    **{"gen_ai.conversation.id": "s"},
                ),
                1,
            ),
        ],
        tmp_path / "t.jsonl",
    )
    message = rejected(tmp_path, tmp_path / "t.jsonl", turns="all")
    assert f"span {ids[1]}: conversation 's' contradicts itself" in message
    assert f"'Go away' to 'Hi', but t.jsonl:1 span {ids[0]} recorded 'Hello'" in message


def test_a_file_of_another_layout_and_a_call_with_no_user_message(tmp_path: Path) -> None:
    (tmp_path / "other.jsonl").write_text('{"question": "?", "answer": "!"}\n')
    assert "other.jsonl:1: unknown layout" in rejected(tmp_path, tmp_path / "other.jsonl")
    log = {
        "messages": [{"role": "system", "content": "Be brief."}],
        "choices": [{"message": {"role": "assistant", "content": "Hi"}}],
    }
    (tmp_path / "log.jsonl").write_text(json.dumps(log) + "\n")
    assert "log.jsonl:1: the call's input has no user message" in rejected(
        tmp_path, tmp_path / "log.jsonl"
    )


def test_a_log_record_without_a_reply_and_a_bad_time(tmp_path: Path) -> None:
    good = {"messages": [user("Hi")], "choices": [{"message": assistant("Hello")}]}
    lines = [good, {**good, "choices": []}, {**good, "timestamp": "yesterday"}]
    (tmp_path / "log.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    message = rejected(tmp_path, tmp_path / "log.jsonl")
    assert "log.jsonl:2: `choices` is empty: the call has no reply" in message
    assert "log.jsonl:3: unreadable timestamp 'yesterday'" in message


def test_skip_invalid_writes_the_rest_and_lists_what_it_left_out(tmp_path: Path) -> None:
    ids = write_otlp(
        [Span(genai([user("Hi")], "Hello"), 0), Span(CHAT, 1), Span(genai([user("Yo")], "Hey"), 2)],
        tmp_path / "t.jsonl",
    )
    out = tmp_path / "rows.jsonl"
    done = run_cli("import", str(tmp_path / "t.jsonl"), "--out", str(out), "--skip-invalid")
    assert done.returncode == 1, done.stderr
    assert sorted(r["prompt"] for r in read_rows(out)) == ["Hi", "Yo"]
    assert f"span {ids[1]}: span without messages" in " ".join(done.stderr.split())


def test_usage_errors(tmp_path: Path) -> None:
    write_otlp([Span(genai([user("Hi")], "Hello"), 0)], tmp_path / "t.jsonl")
    trace = tmp_path / "t.jsonl"
    assert "--redact '(' is not a regular expression" in refused(
        tmp_path, trace, more=("--redact", "(")
    )
    assert "--keep prompt: the rows already have a column" in refused(
        tmp_path, trace, more=("--keep", "prompt")
    )
    assert "--turns takes last or all" in refused(tmp_path, trace, more=("--turns", "first"))
    assert "file not found" in refused(tmp_path, tmp_path / "missing.jsonl")


def test_a_call_that_failed_in_production_is_passed_over_and_counted(tmp_path: Path) -> None:
    """What openai-v2 records when the request fails: the input, an error status, no reply.
    The user saw no answer, so the conversation goes on from the call before."""
    failed = {
        **CHAT,
        "gen_ai.input.messages": genai([user("Hi"), assistant("Hello"), user("And?")], "")[
            "gen_ai.input.messages"
        ],
        "error.type": "APIConnectionError",
    }
    spans = [
        Span(genai([user("Hi")], "Hello"), 0),
        Span(failed, 1, failed=True),
        Span(genai([user("Hi"), assistant("Hello"), user("And?")], "And so on."), 2),
    ]
    write_otlp(spans, tmp_path / "t.jsonl")
    out = tmp_path / "rows.jsonl"
    done = run_cli("import", str(tmp_path / "t.jsonl"), "--out", str(out), "--turns", "all")
    assert done.returncode == 0, done.stderr
    assert "passed over 1 call(s) that failed in production" in " ".join(done.stderr.split())
    rows = read_rows(out)
    assert [(r["turn"], r["baseline_model_response"]) for r in rows] == [
        (1, "Hello"),
        (2, "And so on."),
    ]
    assert len({r["conversation_id"] for r in rows}) == 1


def test_an_empty_reply_is_refused_unless_the_call_failed(tmp_path: Path) -> None:
    """A reply with no text and no tool call is no baseline to replay against: refused,
    or passed over and counted when the span's error status says the call failed."""
    empty = {"messages": [user("Hi")], "choices": [{"message": assistant("")}]}
    (tmp_path / "log.jsonl").write_text(json.dumps(empty) + "\n")
    assert "log.jsonl:1: the reply is empty" in rejected(tmp_path, tmp_path / "log.jsonl")
    [span_id] = write_otlp([Span(genai([user("Hi")], ""), 0)], tmp_path / "t.jsonl")
    assert f"t.jsonl:1 span {span_id}: the reply is empty" in rejected(
        tmp_path, tmp_path / "t.jsonl"
    )
    spans = [Span(genai([user("Hi")], ""), 0, failed=True), Span(genai([user("Yo")], "Hey"), 1)]
    write_otlp(spans, tmp_path / "failed.jsonl")
    out = tmp_path / "rows.jsonl"
    done = run_cli("import", str(tmp_path / "failed.jsonl"), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "passed over 1 call(s) that failed" in " ".join(done.stderr.split())
    assert [r["prompt"] for r in read_rows(out)] == ["Yo"]


def _choice(index: object, message: object) -> dict:
    return {"index": index, "message": message}


@pytest.mark.parametrize(
    ("choices", "why"),
    [
        ([{"message": "hello"}], "a choice's message must be an object"),
        (
            [_choice(0, assistant("a")), _choice("first", assistant("b"))],
            "a choice's index must be a whole number, got 'first'",
        ),
    ],
    ids=["message-text", "mixed-index"],
)
def test_a_log_record_with_a_malformed_choice(tmp_path: Path, choices: list, why: str) -> None:
    good = {"messages": [user("Hi")], "choices": [{"message": assistant("Hello")}]}
    (tmp_path / "log.jsonl").write_text(
        json.dumps(good) + "\n" + json.dumps({**good, "choices": choices}) + "\n"
    )
    assert f"log.jsonl:2: {why}" in rejected(tmp_path, tmp_path / "log.jsonl")
    out = tmp_path / "rows.jsonl"
    done = run_cli("import", str(tmp_path / "log.jsonl"), "--out", str(out), "--skip-invalid")
    assert done.returncode == 1, done.stderr
    assert [r["prompt"] for r in read_rows(out)] == ["Hi"]


@pytest.mark.parametrize(
    "span",
    [
        Span(
            {
                **genai([user("Hi")], "Hello"),
                "gen_ai.output.messages": json.dumps(
                    [
                        {"index": 0, "role": "assistant", "parts": []},
                        {"index": "b", "role": "assistant", "parts": []},
                    ]
                ),
            },
            0,
        ),
        Span(
            CHAT,
            0,
            events=[
                ("gen_ai.user.message", {"content": "Hi"}),
                ("gen_ai.choice", {"index": "first", "message": json.dumps(assistant("Hello"))}),
            ],
        ),
    ],
    ids=["output-messages", "choice-event"],
)
def test_a_span_whose_choices_have_no_whole_number_index(tmp_path: Path, span: Span) -> None:
    [span_id] = write_otlp([span], tmp_path / "t.jsonl")
    assert f"t.jsonl:1 span {span_id}: unknown attribute layout (GenAI): a choice's index" in (
        rejected(tmp_path, tmp_path / "t.jsonl")
    )


def test_an_unwritable_out_is_refused_before_reading(tmp_path: Path) -> None:
    write_otlp([Span(genai([user("Hi")], "Hello"), 0)], tmp_path / "t.jsonl")
    (tmp_path / "afile").write_text("")
    done = run_cli("import", str(tmp_path / "t.jsonl"), "--out", str(tmp_path / "afile" / "x"))
    assert done.returncode == 2, done.stderr
    assert "cannot write to" in " ".join(done.stderr.split())
    assert "Traceback" not in done.stderr


def test_redact_covers_the_content_a_problem_quotes(tmp_path: Path) -> None:
    spans = [
        Span(genai([user("Hi ana@example.com")], "Hello"), 0),
        Span(genai([user("Hi ana@example.com"), assistant("Go away"), user("Why?")], "Sorry"), 1),
    ]
    for span in spans:
        span.attributes["gen_ai.conversation.id"] = "s"
    write_otlp(spans, tmp_path / "t.jsonl")
    message = rejected(tmp_path, tmp_path / "t.jsonl", redact=(r"\S+@example\.com",))
    assert "contradicts itself" in message
    assert "ana@example.com" not in message
    assert "'Hi [REDACTED]'" in message


@pytest.mark.parametrize(
    "damage",
    [
        lambda span: span.update(startTimeUnixNano="yesterday"),
        lambda span: span.update(attributes=["gen_ai.operation.name"]),
    ],
    ids=["time-not-a-number", "attribute-not-an-object"],
)
def test_a_line_whose_structure_is_not_otlp_is_named(tmp_path: Path, damage) -> None:
    write_otlp([Span(genai([user("Hi")], "Hello"), 0)], tmp_path / "t.jsonl")
    record = json.loads((tmp_path / "t.jsonl").read_text())
    damage(record["resourceSpans"][0]["scopeSpans"][0]["spans"][0])
    (tmp_path / "t.jsonl").write_text(json.dumps(record) + "\n")
    message = rejected(tmp_path, tmp_path / "t.jsonl")
    assert "t.jsonl:1: not OTLP JSON as exporters write it" in message
    assert "Traceback" not in message


def test_a_file_of_junk_is_refused_in_one_pass(tmp_path: Path) -> None:
    """Each bad line used to re-read and re-parse the whole file (5 MB: 47 s); now one
    pass: the file and its first bad lines named, the rest counted."""
    junk = tmp_path / "junk.bin"
    junk.write_bytes(random.Random(0).randbytes(5 * 2**20))
    lines = sum(1 for line in junk.read_bytes().split(b"\n") if line.strip())  # not blank
    start = time.perf_counter()
    message = rejected(tmp_path, junk)
    assert time.perf_counter() - start < 15  # generous: about 1 s on the benchmark machine
    assert f"invalid traces ({lines} problem(s))" in message
    assert "junk.bin:1: unparseable JSON" in message
    assert "junk.bin:2: unparseable JSON" in message
    assert f"... and {lines - 200} more" in message


def test_a_line_nested_too_deep_is_a_row_error(tmp_path: Path) -> None:
    write_otlp([Span(genai([user("Hi")], "Hello"), 0)], tmp_path / "t.jsonl")
    with (tmp_path / "t.jsonl").open("a") as fh:
        fh.write("[" * 10_000 + "]" * 10_000 + "\n")
    message = rejected(tmp_path, tmp_path / "t.jsonl")
    assert "t.jsonl:2: unparseable JSON: nested more than 200 levels deep" in message
    assert "Traceback" not in message


def test_tool_calls_a_row_could_not_hold_are_refused_naming_the_call(tmp_path: Path) -> None:
    """A tool definition whose `parameters` is no JSON Schema; a turn whose last recorded
    call asked for a tool (the final reply's call is missing from the export); a tool result
    that answers no call. Each would make a row `run` refuses, so import names it, and
    `--skip-invalid` writes the rest."""
    schema = {"type": "function", "function": {"name": "f", "parameters": {"type": 3}}}
    bad_tools = {"messages": [user("Yo")], "choices": [{"message": assistant("Hey")}]}
    (tmp_path / "tools.jsonl").write_text(json.dumps({**bad_tools, "tools": [schema]}) + "\n")
    assert (
        "tools.jsonl:1: the request's tools: tool 1 ('f'): parameters is not a JSON Schema"
    ) in rejected(tmp_path, tmp_path / "tools.jsonl")
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    orphan = {"role": "tool", "tool_call_id": "gone", "content": "42"}
    records = [
        {"messages": [user("Use f")], "choices": [{"message": {"tool_calls": [call]}}]},
        {"messages": [orphan, user("Hi")], "choices": [{"message": assistant("Hello")}]},
        {"messages": [user("Fine?")], "choices": [{"message": assistant("Fine.")}]},
    ]
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    message = rejected(tmp_path, log)
    assert "log.jsonl:1: the turn ends on tool calls that no later call answers" in message
    assert (
        "log.jsonl:2: the row's history cannot be replayed: message 1: tool result answers no "
        "earlier call (id 'gone')"
    ) in message
    out = tmp_path / "rows.jsonl"
    done = run_cli("import", str(log), "--out", str(out), "--skip-invalid")
    assert done.returncode == 1, done.stderr
    assert [r["prompt"] for r in read_rows(out)] == ["Fine?"]
