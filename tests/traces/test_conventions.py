"""Every convention and file kind `chatjudge import` reads, beyond the instrumentations of
test_instrumented: the older GenAI events (on the span, and as log records in a file of
their own), the first GenAI form, OpenLLMetry's indexed attributes, recorded conversation
and session ids (with production truncating the history), span tables as Parquet and CSV.
The conventions are read by the importer (`imported`, in this process); the command's own
behaviour is checked through the CLI with the bundled exports and the duplicate spans."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pandas as pd
import pytest

from chatjudge.options import ImportOptions
from chatjudge.traces import import_traces
from tests.support.cli import run_cli
from tests.traces.conftest import read_rows
from tests.traces.otlp_files import Span, assistant, genai, user, write_otlp

SYSTEM = {"role": "system", "content": "Be brief."}
TOOL = {
    "type": "function",
    "function": {
        "name": "lookup",
        "description": "Look a word up.",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
    },
}


def imported(tmp_path: Path, *files: Path, turns: str = "all") -> list[dict]:
    """The rows `chatjudge import FILES --turns TURNS` writes, imported in this process
    (each import replaces the test's earlier one); none skipped (the command's exit 0)."""
    out = tmp_path / "rows.jsonl"
    done = import_traces(list(files), out, ImportOptions(turns=turns, overwrite=True))
    assert not done.skipped, done.skipped
    return read_rows(out)


def test_older_genai_events_as_log_records_joined_to_their_spans(tmp_path: Path) -> None:
    chat = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m-1"}
    call = [
        {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": '{"q":"x"}'}}
    ]
    spans = [
        Span(
            chat,
            0,
            logs=[
                ("gen_ai.system.message", {"content": "Be brief."}),
                ("gen_ai.user.message", {"content": "Look x up."}),
                (
                    "gen_ai.choice",
                    {
                        "index": 0,
                        "finish_reason": "tool_calls",
                        "message": {"role": "assistant", "tool_calls": call},
                    },
                ),
            ],
        ),
        Span(
            chat,
            1,
            logs=[
                ("gen_ai.system.message", {"content": "Be brief."}),
                ("gen_ai.user.message", {"content": "Look x up."}),
                ("gen_ai.assistant.message", {"tool_calls": call}),
                ("gen_ai.tool.message", {"content": "x is 42", "id": "c1"}),
                (
                    "gen_ai.choice",
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": "It is 42."},
                    },
                ),
            ],
        ),
    ]
    spans_file, logs_file = tmp_path / "spans.jsonl", tmp_path / "logs.jsonl"
    write_otlp(spans, spans_file, logs=logs_file)
    [row] = imported(tmp_path, spans_file, logs_file)
    assert row["history"] == [SYSTEM]
    assert row["prompt"] == "Look x up."
    assert row["baseline_model_response"] == "It is 42."
    assert row["baseline_trajectory"] == [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": '{"q": "x"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "x is 42"},
        {"role": "assistant", "content": "It is 42."},
    ]
    assert (row["turn"], row["tool_calls"], row["model"]) == (1, 1, "m-1")


def test_older_genai_events_on_the_span_and_the_first_form(tmp_path: Path) -> None:
    chat = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m-1"}
    first = [SYSTEM, user("Hi")]
    spans = [
        Span(
            chat,
            0,
            events=[
                ("gen_ai.content.prompt", {"gen_ai.prompt": json.dumps(first)}),
                (
                    "gen_ai.content.completion",
                    {"gen_ai.completion": json.dumps([assistant("Hello!")])},
                ),
            ],
        ),
        Span(
            chat,
            1,
            events=[
                ("gen_ai.system.message", {"content": "Be brief."}),
                ("gen_ai.user.message", {"content": "Hi"}),
                ("gen_ai.assistant.message", {"content": "Hello!"}),
                ("gen_ai.user.message", {"content": "Bye"}),
                ("gen_ai.choice", {"index": 0, "message": json.dumps(assistant("Goodbye."))}),
            ],
        ),
    ]
    write_otlp(spans, tmp_path / "spans.jsonl")
    rows = imported(tmp_path, tmp_path / "spans.jsonl")
    assert [(r["turn"], r["prompt"], r["baseline_model_response"]) for r in rows] == [
        (1, "Hi", "Hello!"),
        (2, "Bye", "Goodbye."),
    ]
    assert len({r["conversation_id"] for r in rows}) == 1


def test_openllmetry_indexed_attributes(tmp_path: Path) -> None:
    attrs = {
        "llm.request.type": "chat",
        "gen_ai.system": "openai",
        "gen_ai.response.model": "gpt-x",
        "gen_ai.prompt.0.role": "system",
        "gen_ai.prompt.0.content": "Be brief.",
        "gen_ai.prompt.1.role": "user",
        "gen_ai.prompt.1.content": "Hi",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": "Hello!",
    }
    write_otlp([Span(attrs, 0)], tmp_path / "spans.jsonl")
    [row] = imported(tmp_path, tmp_path / "spans.jsonl")
    assert (row["history"], row["prompt"], row["baseline_model_response"], row["model"]) == (
        [SYSTEM],
        "Hi",
        "Hello!",
        "gpt-x",
    )


def test_recorded_conversation_ids_group_and_truncated_history_is_kept_as_seen(
    tmp_path: Path,
) -> None:
    """Two conversations with identical messages told apart by gen_ai.conversation.id; the
    system prompt in gen_ai.system_instructions; production drops the first exchange from
    the third call's history, and the row holds exactly what that call saw."""
    instructions = json.dumps([{"type": "text", "content": "Be brief."}])

    def span(conversation: str, at: int, messages: list, reply: str) -> Span:
        return Span(
            genai(
                messages,
                reply,
                **{
                    "gen_ai.conversation.id": conversation,
                    "gen_ai.system_instructions": instructions,
                },
            ),
            at,
        )

    spans = [
        span("a", 0, [user("One")], "1"),
        span("b", 1, [user("One")], "1"),
        span("a", 2, [user("One"), assistant("1"), user("Two")], "2"),
        span("a", 3, [user("Two"), assistant("2"), user("Three")], "3"),  # truncated
        span("b", 4, [user("One"), assistant("1"), user("Deux")], "2"),
    ]
    write_otlp(spans, tmp_path / "spans.jsonl")
    rows = imported(tmp_path, tmp_path / "spans.jsonl")
    got = {(r["conversation_id"], r["turn"]): r for r in rows}
    assert sorted(got) == [("a", 1), ("a", 2), ("a", 3), ("b", 1), ("b", 2)]
    assert got[("a", 3)]["history"] == [SYSTEM, user("Two"), assistant("2")]
    assert got[("b", 2)]["prompt"] == "Deux"
    assert got[("a", 1)]["history"] == [SYSTEM]


def test_openinference_session_ids_in_a_parquet_span_table(tmp_path: Path) -> None:
    """A span table as Phoenix exports it: nested message lists in attribute columns, the
    tools offered as `attributes.llm.tools` (a list of `{"tool": {"json_schema": ...}}`)."""

    def message(role: str, content: str) -> dict:
        return {"message.role": role, "message.content": content}

    start = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)
    table = pd.DataFrame(
        {
            "context.span_id": ["s1", "s2", "s3"],
            "context.trace_id": ["t1", "t2", "t3"],
            "span_kind": ["LLM", "LLM", "CHAIN"],
            "start_time": [start + dt.timedelta(seconds=s) for s in (10, 0, 5)],
            "end_time": [start + dt.timedelta(seconds=s + 1) for s in (10, 0, 5)],
            "attributes.session.id": ["s-1", "s-1", None],
            "attributes.llm.model_name": ["m-2", "m-2", None],
            "attributes.llm.input_messages": [
                [message("user", "Hi"), message("assistant", "Hello"), message("user", "More")],
                [message("user", "Hi")],
                None,
            ],
            "attributes.llm.output_messages": [
                [message("assistant", "Sure.")],
                [message("assistant", "Hello")],
                None,
            ],
            "attributes.llm.tools": [[{"tool": {"json_schema": json.dumps(TOOL)}}], None, None],
        }
    )
    table.to_parquet(tmp_path / "spans.parquet")
    rows = imported(tmp_path, tmp_path / "spans.parquet")
    assert [
        (r["conversation_id"], r["turn"], r["prompt"], r["baseline_model_response"]) for r in rows
    ] == [("s-1", 1, "Hi", "Hello"), ("s-1", 2, "More", "Sure.")]
    assert rows[1]["source"] == "spans.parquet:1 span s1"
    assert rows[1]["start_time"] == "2025-01-01T00:00:10.000Z"
    assert (rows[1]["tools"], "tools" in rows[0]) == ([TOOL], False)


def test_genai_attributes_in_a_csv_span_table(tmp_path: Path) -> None:
    """One `attributes` column of JSON; `gen_ai.tool.definitions` in it as a list, whole."""
    first = genai([user("Hi")], "Hello", **{"gen_ai.tool.definitions": [TOOL["function"]]})
    second = genai([user("Hi"), assistant("Hello"), user("Bye")], "Ciao")
    table = pd.DataFrame(
        {
            "span_id": ["a1", "a2"],
            "start_time": ["2025-01-01T00:00:00Z", "2025-01-01T00:01:00Z"],
            "attributes": [json.dumps(first), json.dumps(second)],
        }
    )
    table.to_csv(tmp_path / "spans.csv", index=False)
    rows = imported(tmp_path, tmp_path / "spans.csv")
    assert [(r["turn"], r["history"], r["prompt"]) for r in rows] == [
        (1, [], "Hi"),
        (2, [user("Hi"), assistant("Hello")], "Bye"),
    ]
    assert (rows[0]["tools"], "tools" in rows[1]) == ([TOOL], False)


def test_identical_openings_are_told_apart_by_trace_then_by_waiting_longest(
    tmp_path: Path,
) -> None:
    """A and B open identically. B's second call is in B's trace (the app wraps a
    conversation in one trace), so it continues B although A has waited longer; A's second
    call, in a trace of its own, then continues A, the only conversation left at that tip."""
    opening = [user("Hi")]
    spans = [
        Span(genai(opening, "Hello"), 0),  # A
        Span(genai(opening, "Hello"), 1),  # B
        Span(genai([*opening, assistant("Hello"), user("B asks")], "b"), 2, parent=1),
        Span(genai([*opening, assistant("Hello"), user("A asks")], "a"), 3),
    ]
    ids = write_otlp(spans, tmp_path / "spans.jsonl")
    rows = imported(tmp_path, tmp_path / "spans.jsonl")
    conversation = {r["source"].split(" span ")[1]: r["conversation_id"] for r in rows}
    assert conversation[ids[2]] == conversation[ids[1]] != conversation[ids[0]]
    assert conversation[ids[3]] == conversation[ids[0]]


def test_the_bundled_example_export(tmp_path: Path) -> None:
    """examples/traces/otel-genai.jsonl (recorded by examples/traces/record.py with the
    openai-v2 instrumentation) imports into the rows the README's commands use."""
    example = Path(__file__).resolve().parents[2] / "examples" / "traces" / "otel-genai.jsonl"
    out = tmp_path / "rows.jsonl"
    done = run_cli("import", str(example), "--keep", "user.tier", "--out", str(out))
    assert done.returncode == 0, done.stderr
    rows = read_rows(out)
    assert len(rows) == 6 and {r["user.tier"] for r in rows} == {"free", "pro"}
    assert all(r["history"][0]["role"] == "system" for r in rows)
    # The tool turn ends its conversation: its last turn holds production's trajectory, and
    # no last turn's history holds a tool call (`generate` offers a candidate no tools yet).
    assert [r["prompt"] for r in rows if "baseline_trajectory" in r] == [
        "What will the weather be like there right now?"
    ]
    assert not any(m["role"] == "tool" or "tool_calls" in m for r in rows for m in r["history"])
    weather = imported(tmp_path, example)
    assert sum(r["tool_calls"] for r in weather) == 1


def test_the_bundled_agent_export(tmp_path: Path) -> None:
    """examples/traces/otel-agent.jsonl (recorded by examples/traces/record_agent.py with the
    OpenInference instrumentation): an assistant calling tools one at a time, in sequence and
    two at once; every row holds the tools offered, each tool turn production's trajectory,
    and `run` accepts the rows beside a candidate's reply."""
    example = Path(__file__).resolve().parents[2] / "examples" / "traces" / "otel-agent.jsonl"
    rows = imported(tmp_path, example)
    assert len(rows) == 9 and len({r["conversation_id"] for r in rows}) == 6  # session ids
    names = {"lookup_order", "track_parcel", "shop_policy"}
    assert all({t["function"]["name"] for t in r["tools"]} == names for r in rows)
    first = next(r for r in rows if r["id"] == "s-81f2#1")
    asked = [m for m in first["baseline_trajectory"] if m["role"] == "assistant"]
    assert [[c["function"]["name"] for c in m.get("tool_calls", [])] for m in asked] == [
        ["lookup_order"],
        ["track_parcel"],
        [],
    ]
    both = next(r for r in rows if r["id"] == "s-90c4#1")["baseline_trajectory"]
    call_ids = [c["id"] for c in both[0]["tool_calls"]]
    assert [m["tool_call_id"] for m in both[1:3]] == call_ids and len(set(call_ids)) == 2
    later = next(r for r in rows if r["id"] == "s-90c4#2")
    assert [m["role"] for m in later["history"]] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]
    replies = tmp_path / "replies.jsonl"
    replies.write_text("".join(json.dumps({**r, "response": "Candidate."}) + "\n" for r in rows))
    done = run_cli(
        "run", str(replies), "-p", "pairwise-chat-quality", "--dry-run",
        "--out", str(tmp_path / "judged"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_a_pretty_printed_export_and_a_json_array_log(tmp_path: Path) -> None:
    """One OTLP object written over many lines (as `json.dump(..., indent=2)` does), and a
    log kept as one JSON array of records."""
    write_otlp([Span(genai([user("Hi")], "Hello"), 0)], tmp_path / "one.jsonl")
    record = json.loads((tmp_path / "one.jsonl").read_text())
    (tmp_path / "pretty.json").write_text(json.dumps(record, indent=2))
    [row] = imported(tmp_path, tmp_path / "pretty.json")
    assert (row["prompt"], row["source"].split(" span ")[0]) == ("Hi", "pretty.json:1")
    calls = [
        {"messages": [user("Hi")], "choices": [{"message": assistant("Hello")}], "created": 1},
        {
            "messages": [user("Hi"), assistant("Hello"), user("Bye")],
            "choices": [{"message": assistant("Ciao")}],
            "created": 2,
        },
    ]
    (tmp_path / "log.json").write_text(json.dumps(calls, indent=1))
    [last] = imported(tmp_path, tmp_path / "log.json", turns="last")
    assert (last["turn"], last["prompt"], last["baseline_model_response"]) == (2, "Bye", "Ciao")


def test_a_tool_step_missing_from_the_export_does_not_merge_two_turns(tmp_path: Path) -> None:
    """The span of turn 2's first step (the one that asked for the tool) is missing: the
    call that sends the tool result still starts turn 2, not a continuation of turn 1."""
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    second = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"},
        {"role": "user", "content": "Use f"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "42"},
    ]
    records = [
        {
            "conversation_id": "k",
            "created": 1,
            "messages": second[:1],
            "choices": [{"message": assistant("Hello")}],
        },
        {
            "conversation_id": "k",
            "created": 2,
            "messages": second,
            "choices": [{"message": assistant("It is 42.")}],
        },
    ]
    (tmp_path / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    rows = imported(tmp_path, tmp_path / "log.jsonl")
    assert [(r["turn"], r["prompt"]) for r in rows] == [(1, "Hi"), (2, "Use f")]
    assert rows[1]["baseline_model_response"] == "It is 42."
    assert rows[1]["baseline_trajectory"] == [
        {**second[3], "content": ""},  # no text beside the call: "" in a row
        second[4],
        assistant("It is 42."),
    ]


def test_events_named_by_attribute_and_ids_in_base64(tmp_path: Path) -> None:
    """Older SDKs' Events API named a log record's event in its `event.name` attribute, and
    protobuf's own JSON mapping writes trace and span ids in base64: both are read."""
    import base64

    span_id = bytes.fromhex("00f067aa0ba902b7")
    trace_id = bytes.fromhex("4bf92f3577b34da6a3ce929d0e0e4736")
    b64 = {
        "traceId": base64.b64encode(trace_id).decode(),
        "spanId": base64.b64encode(span_id).decode(),
    }

    def s(value: str) -> dict:
        return {"stringValue": value}

    def log(name: str, body: dict) -> dict:
        return {
            **b64,
            "timeUnixNano": "1700000000000000001",
            "attributes": [{"key": "event.name", "value": s(name)}],
            "body": {"kvlistValue": {"values": [{"key": k, "value": v} for k, v in body.items()]}},
        }

    logs = {
        "resourceLogs": [
            {
                "scopeLogs": [
                    {
                        "logRecords": [
                            log("gen_ai.user.message", {"content": s("Hi")}),
                            log(
                                "gen_ai.choice",
                                {
                                    "index": {"intValue": "0"},
                                    "message": {
                                        "kvlistValue": {
                                            "values": [
                                                {"key": "role", "value": s("assistant")},
                                                {"key": "content", "value": s("Hello")},
                                            ]
                                        }
                                    },
                                },
                            ),
                        ]
                    }
                ]
            }
        ]
    }
    spans = {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                **b64,
                                "name": "chat m",
                                "startTimeUnixNano": "1700000000000000000",
                                "endTimeUnixNano": "1700000000500000000",
                                "attributes": [
                                    {"key": "gen_ai.operation.name", "value": s("chat")}
                                ],
                            }
                        ]
                    }
                ]
            }
        ]
    }
    (tmp_path / "t.jsonl").write_text(json.dumps(logs) + "\n" + json.dumps(spans) + "\n")
    [row] = imported(tmp_path, tmp_path / "t.jsonl")
    assert (row["prompt"], row["baseline_model_response"]) == ("Hi", "Hello")
    assert row["source"] == "t.jsonl:2 span 00f067aa0ba902b7"
    assert row["start_time"] == "2023-11-14T22:13:20.000Z"


def test_json_looking_text_in_leaf_columns_of_a_csv_table_stays_text(tmp_path: Path) -> None:
    """Only whole-attribute columns hold JSON; a message whose text happens to be JSON (a
    reply `{"sorted": [1, 2, 3]}`, a user message `[3, 1, 2]`) is kept as written."""
    table = pd.DataFrame(
        {
            "context.span_id": ["s1"],
            "span_kind": ["LLM"],
            "start_time": ["2025-01-01T00:00:00Z"],
            "attributes.llm.input_messages.0.message.role": ["user"],
            "attributes.llm.input_messages.0.message.content": ["[3, 1, 2]"],
            "attributes.llm.output_messages.0.message.role": ["assistant"],
            "attributes.llm.output_messages.0.message.content": ['{"sorted": [1, 2, 3]}'],
        }
    )
    table.to_csv(tmp_path / "spans.csv", index=False)
    [row] = imported(tmp_path, tmp_path / "spans.csv")
    assert (row["prompt"], row["baseline_model_response"]) == ("[3, 1, 2]", '{"sorted": [1, 2, 3]}')


@pytest.mark.parametrize(
    "created",
    [1_732_540_000, 1_732_540_000_000, 1_732_540_000_000_000, 1_732_540_000_000_000_000],
    ids=["seconds", "milliseconds", "microseconds", "nanoseconds"],
)
def test_epoch_times_in_any_unit_in_a_log_and_a_table(tmp_path: Path, created: int) -> None:
    log = {
        "timestamp": created,
        "messages": [user("Hi")],
        "choices": [{"message": assistant("Yo")}],
    }
    (tmp_path / "log.jsonl").write_text(json.dumps(log) + "\n")
    table = pd.DataFrame(
        {
            "span_id": ["a1"],
            "start_time": [created],
            "attributes": [json.dumps(genai([user("Hi")], "Yo"))],
        }
    )
    table.to_csv(tmp_path / "spans.csv", index=False)
    for source in (tmp_path / "log.jsonl", tmp_path / "spans.csv"):
        [row] = imported(tmp_path, source)
        assert row["start_time"] == "2024-11-25T13:06:40.000Z", source


def test_spans_without_ids_are_each_a_call(tmp_path: Path) -> None:
    """Only a span id repeated marks an exporter's retry: spans that have none (a
    hand-made or converted export) are all read."""

    def span(prompt: str, reply: str) -> dict:
        attrs = genai([user(prompt)], reply)
        return {
            "name": "chat",
            "startTimeUnixNano": "1760000000000000000",
            "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()],
        }

    spans = [span("Hi", "Hello"), span("Yo", "Hey")]
    export = {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}
    (tmp_path / "spans.jsonl").write_text(json.dumps(export) + "\n")
    rows = imported(tmp_path, tmp_path / "spans.jsonl")
    assert sorted(r["prompt"] for r in rows) == ["Hi", "Yo"]


def test_openinference_request_and_response_json_take_the_first_choice(tmp_path: Path) -> None:
    """`input.value` / `output.value` are read as a chat-completions log record is: the
    reply is the choice of the lowest index, wherever it is in the list."""
    attrs = {
        "openinference.span.kind": "LLM",
        "input.value": json.dumps({"model": "m", "messages": [SYSTEM, user("Hi")]}),
        "output.value": json.dumps(
            {
                "choices": [
                    {"index": 1, "message": assistant("Second")},
                    {"index": 0, "message": assistant("First")},
                ]
            }
        ),
    }
    write_otlp([Span(attrs, 0)], tmp_path / "spans.jsonl")
    [row] = imported(tmp_path, tmp_path / "spans.jsonl")
    assert (row["history"], row["prompt"], row["baseline_model_response"]) == (
        [SYSTEM],
        "Hi",
        "First",
    )


def test_a_span_exported_twice_is_read_once_and_another_under_its_id_is_named(
    tmp_path: Path,
) -> None:
    """An exporter's retry writes the same span again: read once, nothing said. A span with
    the same trace and span ids but other content is left out, counted and named."""
    ids = write_otlp(
        [Span(genai([user("Hi")], "Hello"), 0), Span(genai([user("Yo")], "Hey"), 1)],
        tmp_path / "t.jsonl",
    )
    first, second = (tmp_path / "t.jsonl").read_text().splitlines()
    again = json.loads(second)
    span = again["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert span["spanId"] == ids[1]
    span["attributes"] = [  # the same span with its keys in another order: the same span
        {"value": a["value"], "key": a["key"]} for a in span["attributes"]
    ]
    (tmp_path / "t.jsonl").write_text("\n".join([first, second, json.dumps(again)]) + "\n")
    out = tmp_path / "rows.jsonl"
    done = run_cli("import", str(tmp_path / "t.jsonl"), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr
    assert sorted(r["prompt"] for r in read_rows(out)) == ["Hi", "Yo"]

    other = json.loads(second)
    other_span = other["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    reply = next(a for a in other_span["attributes"] if a["key"] == "gen_ai.output.messages")
    reply["value"]["stringValue"] = reply["value"]["stringValue"].replace("Hey", "Go away")
    (tmp_path / "t.jsonl").write_text("\n".join([first, second, json.dumps(other)]) + "\n")
    done = run_cli("import", str(tmp_path / "t.jsonl"), "--out", str(out))
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stderr.split())
    assert "warning: 1 span(s) left out: a span read before has the same trace and span" in said
    named = f"t.jsonl:3 span {ids[1]} (trace {span['traceId']}): other content under the ids "
    assert named + f"of t.jsonl:2 span {ids[1]}, which was kept" in said
    assert sorted(r["baseline_model_response"] for r in read_rows(out)) == ["Hello", "Hey"]


def test_genai_tool_definitions_become_the_rows_tools(tmp_path: Path) -> None:
    """`gen_ai.tool.definitions` (the GenAI form: name, description and parameters beside
    `type`), as JSON text on the span, read into the rows' shape."""
    definitions = [
        {
            "type": "function",
            "name": "get_weather",
            "description": "Weather of a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
        {"type": "function", "name": "clock"},  # what is NOT RECOMMENDED by default: absent
    ]
    attrs = genai([user("Hi")], "Hello", **{"gen_ai.tool.definitions": json.dumps(definitions)})
    write_otlp([Span(attrs, 0)], tmp_path / "spans.jsonl")
    [row] = imported(tmp_path, tmp_path / "spans.jsonl")
    assert row["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather of a city.",
                "parameters": definitions[0]["parameters"],
            },
        },
        {
            "type": "function",
            "function": {"name": "clock", "description": "", "parameters": {"type": "object"}},
        },
    ]


def test_openllmetry_tool_calls_without_ids_and_its_functions(tmp_path: Path) -> None:
    """OpenLLMetry records no call ids here: the calls get `call_<n>` and their results
    pair with them; `llm.request.functions.N.*` are the definitions."""
    attrs = {
        "llm.request.type": "chat",
        "gen_ai.response.model": "gpt-x",
        "llm.request.functions.0.name": "lookup",
        "llm.request.functions.0.description": "Look a word up.",
        "llm.request.functions.0.parameters": '{"type": "object"}',
        "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": "Look x up.",
        "gen_ai.prompt.1.role": "assistant",
        "gen_ai.prompt.1.tool_calls.0.name": "lookup",
        "gen_ai.prompt.1.tool_calls.0.arguments": '{"q":"x"}',
        "gen_ai.prompt.2.role": "tool",
        "gen_ai.prompt.2.content": "x is 42",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": "It is 42.",
    }
    write_otlp([Span(attrs, 0)], tmp_path / "spans.jsonl")
    [row] = imported(tmp_path, tmp_path / "spans.jsonl")
    [call, result, reply] = row["baseline_trajectory"]
    assert call["tool_calls"][0]["id"] == result["tool_call_id"] == "call_1"
    assert call["tool_calls"][0]["function"] == {"name": "lookup", "arguments": '{"q": "x"}'}
    assert (result["content"], reply["content"]) == ("x is 42", row["baseline_model_response"])
    assert row["tools"][0]["function"]["description"] == "Look a word up."
