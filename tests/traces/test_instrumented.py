"""Real instrumentation: the official `openai` client, instrumented by
`opentelemetry-instrumentation-openai-v2` (current GenAI attributes on the spans, or in log
records linked to them) or `openinference-instrumentation-openai`, or logging its own
calls, holds four conversations (two with an identical opening, two calling a tool);
`chatjudge import` must give back, message for message, what each call sent and received,
tool calls and results as OpenAI-format messages with their recorded ids, the tools'
definitions where the trace records them, and production's tool calls in the judged turn
as `baseline_trajectory`; `run` must accept the rows as they are."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run_cli
from tests.support.stub_openai import StubServer
from tests.traces.conftest import Traced, read_rows
from tests.traces.instrumented_app import WEATHER_TOOL

WEATHER = '{"city": "Paris", "temp_c": 12, "sky": "cloudy"}'
# What the tool turn that ends a conversation holds, as its row must: production's call
# (its id as the stand-in server made it), the tool's result, the reply.
LAST_TOOL_TURN = [
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "call_2",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_2", "content": WEATHER},
    {"role": "assistant", "content": f"The tool says: {WEATHER}."},
]
# Which kinds record the definitions of the tools the call was offered: openai-v2 2.4b0
# records no `gen_ai.tool.definitions`; OpenInference records `llm.tools`; the app's own
# log holds the request's `tools`.
RECORDS_TOOLS = {"openai-v2": False, "openai-v2-events": False, "openinference": True, "log": True}


def as_row(message: dict[str, Any]) -> dict[str, Any]:
    """A message as the app sent or received it, as a row holds it: text content ("" where
    there was none), arguments as canonical JSON."""
    out: dict[str, Any] = {"role": message["role"], "content": message.get("content") or ""}
    if message.get("tool_call_id"):
        out["tool_call_id"] = message["tool_call_id"]
    if message.get("tool_calls"):
        out["tool_calls"] = [
            {
                "id": c["id"],
                "type": "function",
                "function": {
                    "name": c["function"]["name"],
                    "arguments": json.dumps(json.loads(c["function"]["arguments"])),
                },
            }
            for c in message["tool_calls"]
        ]
    return out


def expected(conversation: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per turn, from the call that gave the final reply: history, prompt, reply, and the
    turn's messages after the prompt where it went through a tool call."""
    turns = []
    for call in conversation:
        if call["reply"].get("tool_calls"):
            continue  # a step of the turn; the next call finishes it
        sent = call["messages"]
        at = max(i for i, m in enumerate(sent) if m["role"] == "user")
        steps = [as_row(m) for m in [*sent[at + 1 :], call["reply"]]]
        turn = {
            "history": [as_row(m) for m in sent[:at]],
            "prompt": sent[at]["content"],
            "baseline_model_response": call["reply"]["content"],
        }
        if len(steps) > 1:
            turn["baseline_trajectory"] = steps
        turns.append(turn)
    return turns


def by_conversation(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        found.setdefault(row["conversation_id"], []).append(row)
    return {k: sorted(v, key=lambda r: r["turn"]) for k, v in found.items()}


@pytest.mark.parametrize("kind", ["openai-v2", "openai-v2-events", "openinference", "log"])
def test_import_gives_back_every_turn_message_for_message(
    traced: Traced, tmp_path: Path, kind: str
) -> None:
    files, sent = traced(kind)
    out = tmp_path / "rows.jsonl"
    done = run_cli("import", *map(str, files), "--out", str(out), "--turns", "all")
    assert done.returncode == 0, done.stderr
    conversations = by_conversation(read_rows(out))
    assert len(conversations) == len(sent) == 4
    # Each reconstructed conversation is one the app held, turn by turn, in order.
    remaining = [expected(c) for c in sent]
    columns = ("history", "prompt", "baseline_model_response", "baseline_trajectory")
    for rows in conversations.values():
        assert [r["turn"] for r in rows] == list(range(1, len(rows) + 1))
        got = [{k: r[k] for k in columns if k in r} for r in rows]
        assert got in remaining, f"a conversation the app never held: {got}"
        remaining.remove(got)
        assert all(r["id"] == f"{r['conversation_id']}#{r['turn']}" for r in rows)
        assert all(r["model"] == "assistant-v1" for r in rows)
        starts = [r["start_time"] for r in rows]
        assert starts == sorted(starts) and all(s and s.endswith("Z") for s in starts)
    rows = [r for found in conversations.values() for r in found]
    # The mid-conversation tool turn: its call and result stay messages in the next turn's
    # history, with the id the server gave the call.
    weather = next(r for r in rows if r["prompt"] == "What's the weather in Paris?")
    assert weather["tool_calls"] == 1 and weather["baseline_trajectory"][0]["tool_calls"]
    thanks = next(r for r in rows if r["prompt"] == "Thanks!")
    assert "[tool call]" not in json.dumps(thanks)
    assert [m["role"] for m in thanks["history"][-3:]] == ["assistant", "tool", "assistant"]
    assert thanks["history"][-2] == {"role": "tool", "tool_call_id": "call_4", "content": WEATHER}
    assert (thanks["tool_calls"], "baseline_trajectory" in thanks) == (0, False)
    # The definitions, in the rows' shape, where the trace records them.
    assert all(("tools" in r) is RECORDS_TOOLS[kind] for r in rows)
    if RECORDS_TOOLS[kind]:
        assert all(r["tools"] == [WEATHER_TOOL] for r in rows)


@pytest.mark.parametrize("kind", ["openai-v2", "openinference"])
def test_the_last_turn_by_default_with_the_span_it_came_from(
    traced: Traced, tmp_path: Path, kind: str
) -> None:
    [trace], sent = traced(kind)
    out = tmp_path / "rows.jsonl"
    done = run_cli("import", str(trace), "--out", str(out), "--keep", "deployment.tier")
    assert done.returncode == 0, done.stderr
    rows = read_rows(out)
    assert sorted(r["prompt"] for r in rows) == sorted(
        next(m for m in reversed(c[-1]["messages"]) if m["role"] == "user")["content"] for c in sent
    )
    assert sorted(r["turn"] for r in rows) == [1, 2, 2, 3]
    spans = [json.loads(line) for line in trace.read_text().splitlines()]
    span_ids = {
        s["spanId"]
        for record in spans
        for block in record["resourceSpans"]
        for scope in block["scopeSpans"]
        for s in scope["spans"]
    }
    assert all(r["source"].split(" span ")[1] in span_ids for r in rows)
    assert all(r["deployment.tier"] == "pro" for r in rows)  # a resource attribute, kept
    # The conversation whose last turn called the tool: production's trajectory, its text.
    umbrella = next(r for r in rows if "umbrella" in r["prompt"])
    assert umbrella["baseline_trajectory"] == LAST_TOOL_TURN
    assert umbrella["baseline_model_response"] == LAST_TOOL_TURN[-1]["content"]
    assert umbrella["history"] == [sent[3][0]["messages"][0]]  # the system prompt alone


@pytest.mark.parametrize("kind", ["openai-v2", "openinference"])
def test_run_judges_the_imported_rows_and_the_judge_reads_the_tool_calls(
    traced: Traced, stub: StubServer, tmp_path: Path, kind: str
) -> None:
    """The rows, with a candidate's reply beside production's (what `generate` adds), pass
    `run -p pairwise-chat-quality`'s checks as they are (tool history, trajectory,
    definitions), and the judge (a stand-in) reads the calls and results as the transcript
    renders them, never the old `[tool call]` lines."""
    files, _ = traced(kind)
    out, replies = tmp_path / "rows.jsonl", tmp_path / "replies.jsonl"
    done = run_cli("import", *map(str, files), "--out", str(out), "--turns", "all")
    assert done.returncode == 0, done.stderr
    rows = read_rows(out)
    replies.write_text("".join(json.dumps({**r, "response": "Candidate."}) + "\n" for r in rows))
    stub.configure(record=True)
    done = run_cli(
        "run", str(replies), "-p", "pairwise-chat-quality", "--judge", "openai/judge",
        "--base-url", stub.base_url, "--quiet", "--out", str(tmp_path / "judged"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert len(read_rows(tmp_path / "judged" / "results.jsonl")) == len(rows) == 8
    prompts = [m["content"] for r in stub.stats.recorded for m in r["body"]["messages"]]
    called = '**assistant** called get_weather({"city": "Paris"})'
    returned = f"**tool** (get_weather) returned: {WEATHER}"
    assert any(called in p and returned in p for p in prompts)
    assert not any("[tool call]" in p for p in prompts)
