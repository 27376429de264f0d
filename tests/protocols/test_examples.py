"""The bundled examples validate against their protocols and render into judge prompts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatjudge.data import Source, iter_items, validate
from chatjudge.protocols import get_protocol

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PAIRS = [
    ("interactivity_accuracy.jsonl", "interactivity-accuracy"),
    ("pairwise_chat_quality.jsonl", "pairwise-chat-quality"),
    ("pairwise_chat_quality.jsonl", str(EXAMPLES / "chat_quality_1to5.toml")),
]


def rows(filename: str) -> list[dict]:
    lines = (EXAMPLES / filename).read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines]


@pytest.mark.parametrize(("filename", "protocol"), PAIRS)
def test_example_validates_and_every_row_renders(filename: str, protocol: str) -> None:
    p = get_protocol(protocol)
    source = Source(EXAMPLES / filename)
    assert validate(source, p.fields).n_rows >= 14
    for item in iter_items(source, p.fields):
        prompt = p.parsed_template.render(item.text)
        for name in p.required_fields:
            assert item.text[name] and item.text[name] in prompt


@pytest.mark.parametrize(
    "filename", ["interactivity_accuracy.jsonl", "pairwise_chat_quality.jsonl"]
)
def test_example_rows_are_well_formed(filename: str) -> None:
    data = rows(filename)
    assert len({r["id"] for r in data}) == len(data) >= 14
    for r in data:
        for value in r.values():
            if isinstance(value, list):
                assert all(set(m) == {"role", "content"} for m in value)
                assert all(m["role"] in ("user", "assistant", "system") for m in value)
                assert all(isinstance(m["content"], str) and m["content"] for m in value)
            else:
                assert isinstance(value, str) and value


def test_interactivity_example_mixes_histories() -> None:
    data = rows("interactivity_accuracy.jsonl")
    assert any(r["chat_history"] == [] for r in data)
    assert any(r["chat_history"] for r in data)
    assert all(2 <= len(r["chat"]) <= 8 for r in data)


def test_braces_in_example_data_reach_the_prompt_literally() -> None:
    p = get_protocol("pairwise-chat-quality")
    items = list(iter_items(Source(EXAMPLES / "pairwise_chat_quality.jsonl"), p.fields))
    item = next(i for i in items if "{answer}" in i.text["prompt"])
    assert "}}" in item.text["response"] and '"{".format()' in item.text["prompt"]
    prompt = p.parsed_template.render(item.text)
    assert f"### Current User Prompt\n{item.text['prompt']}\n" in prompt
    assert prompt.endswith(f"### Response B\n{item.text['response']}\n")


def test_tool_calls_example_scores_as_worked_out_by_hand(tmp_path: Path) -> None:
    import chatjudge

    result = chatjudge.evaluate(EXAMPLES / "tool_calls.jsonl", "tool-trajectory", out=tmp_path)
    matched = dict(zip(result.table["id"], result.table["trajectory_match"], strict=True))
    assert matched == {
        "weather-paris": 1,
        "weather-wrong-city": 0,  # Paris for Lyon
        "flight-search-then-book": 1,
        "flight-booked-blind": 0,  # in-order: it booked without searching
        "two-cities-any-order": 1,
        "convert-with-tolerance": 1,  # 100.0 within 0.01 of 100, "usd" matches (?i)usd
        "no-tool-needed": 1,
        "cut-at-max-steps": 1,  # superset: a call cut without its result is still a call
    }
    assert result.report_path.is_file()


def test_tool_use_judge_places_the_tools_and_the_trajectory() -> None:
    protocol = get_protocol(str(EXAMPLES / "tool_use_judge.toml"))
    source = Source(EXAMPLES / "tool_calls.jsonl")
    assert validate(source, protocol.fields).n_rows == 8
    items = {item.id: item for item in iter_items(source, protocol.fields)}
    prompt = protocol.render(items["flight-search-then-book"].text)
    tools = "# Tools it could call\nsearch_flights: Flights between two airports on a date.\n"
    assert tools in prompt
    assert '  parameters: {"properties": {"flight_id": {"type": "string"}}' in prompt
    assert (
        '# What it did\n**assistant** called search_flights({"date": "2025-03-14", '
        '"destination": "JFK", "origin": "CDG"})\n**tool** (search_flights) returned: [{"id": '
    ) in prompt
    assert prompt.endswith("**assistant**: Booked AF22 for 540 EUR.")
