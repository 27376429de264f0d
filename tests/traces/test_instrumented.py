"""Real instrumentation: the official `openai` client, instrumented by
`opentelemetry-instrumentation-openai-v2` (current GenAI attributes on the spans, or in log
records linked to them) or `openinference-instrumentation-openai`, or logging its own
calls, holds three multi-turn conversations (two with an identical opening, one with a
tool call); `chatjudge import` must give back, message for message, what each call sent
and received."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run_cli
from tests.traces.conftest import Traced, read_rows

WEATHER = '{"city": "Paris", "sky": "cloudy", "temp_c": 12}'
# The assistant side of the tool turn, as the rows render it.
TOOL_TURN = (
    '[tool call] get_weather({"city": "Paris"})\n'
    '[tool result get_weather] {"city": "Paris", "temp_c": 12, "sky": "cloudy"}\n'
    'The tool says: {"city": "Paris", "temp_c": 12, "sky": "cloudy"}.'
)


def readable(messages: list[dict[str, Any]]) -> list[dict[str, str]]:
    """What was sent, as the rows should hold it: a tool call, its result and the reply
    after it make one assistant message."""
    out: list[dict[str, str]] = []
    for m in messages:
        if m.get("tool_calls"):
            calls = [
                f"[tool call] {c['function']['name']}"
                f"({json.dumps(json.loads(c['function']['arguments']), sort_keys=True)})"
                for c in m["tool_calls"]
            ]
            out.append({"role": "assistant", "content": "\n".join(calls)})
        elif m["role"] == "tool":
            out[-1]["content"] += f"\n[tool result get_weather] {m['content']}"
        elif m["role"] == "assistant" and out and out[-1]["content"].startswith("[tool call]"):
            out[-1]["content"] += "\n" + m["content"]
        else:
            out.append({"role": m["role"], "content": m["content"]})
    return out


def expected(conversation: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per turn, from the call that gave the final reply: history, prompt, reply."""
    turns = []
    for call in conversation:
        if call["reply"].get("tool_calls"):
            continue  # a step of the turn; the next call finishes it
        sent = call["messages"]
        at = max(i for i, m in enumerate(sent) if m["role"] == "user")
        reply = readable([*sent[at + 1 :], call["reply"]])
        turns.append(
            {
                "history": readable(sent[:at]),
                "prompt": sent[at]["content"],
                "baseline_model_response": "\n".join(m["content"] for m in reply),
            }
        )
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
    assert len(conversations) == len(sent) == 3
    # Each reconstructed conversation is one the app held, turn by turn, in order.
    remaining = [expected(c) for c in sent]
    for rows in conversations.values():
        assert [r["turn"] for r in rows] == list(range(1, len(rows) + 1))
        got = [{k: r[k] for k in ("history", "prompt", "baseline_model_response")} for r in rows]
        assert got in remaining, f"a conversation the app never held: {got}"
        remaining.remove(got)
        assert all(r["id"] == f"{r['conversation_id']}#{r['turn']}" for r in rows)
        assert all(r["model"] == "assistant-v1" for r in rows)
        starts = [r["start_time"] for r in rows]
        assert starts == sorted(starts) and all(s and s.endswith("Z") for s in starts)
    tool_turn = next(r for rows in conversations.values() for r in rows if r["tool_calls"])
    assert tool_turn["baseline_model_response"] == TOOL_TURN
    assert tool_turn["tool_calls"] == 1
    assert tool_turn["prompt"] == "What's the weather in Paris?"


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
        c[-1]["messages"][-1]["content"] for c in sent
    )
    assert sorted(r["turn"] for r in rows) == [2, 2, 3]
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
