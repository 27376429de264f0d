"""Items: a validated row read once more for its item. Where every row's message lists read
as they are written (OpenAI's format), the item takes them as they are; where one does not
(Anthropic's or Gemini's format, a `null` content), every item is read again."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chatjudge.data import Source, iter_items, validate
from chatjudge.protocols import get_protocol

IA = get_protocol("interactivity-accuracy")
ASK = {"role": "user", "content": "Weather in Paris?"}


def call(ident: str, name: str) -> dict[str, Any]:
    return {"id": ident, "type": "function", "function": {"name": name, "arguments": "{}"}}


def openai_row(n: int, **extra: Any) -> dict[str, Any]:
    chat = [ASK, {"role": "assistant", "content": "", "tool_calls": [call("a", "time"),
                                                                      call("b", "weather")]},
            {"role": "tool", "tool_call_id": "a", "content": "noon"},
            {"role": "tool", "tool_call_id": "b", "content": "21 °C"},
            {"role": "assistant", "content": "21 °C at noon."}]  # fmt: skip
    return {"id": f"r{n}", "chat": chat, "question": "q", "answer": "a", **extra}


ANTHROPIC = {
    "id": "anthropic",
    "question": "q",
    "answer": "a",
    "chat": [
        ASK,
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t1", "name": "weather", "input": {"city": "Paris"}}
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "21 °C"}],
        },
        {"role": "assistant", "content": "21 °C."},
    ],
}
NULL_CONTENT = openai_row(9)
NULL_CONTENT["chat"][1] = {**NULL_CONTENT["chat"][1], "content": None}


def items(rows: list[dict[str, Any]], as_written: bool) -> list[Any]:
    found = list(iter_items(Source(rows), IA.fields, as_written=as_written))
    return [(i.data, i.fields, i.text, i.tools) for i in found]


def test_rows_as_written_are_their_items_as_a_second_reading_would_make_them() -> None:
    rows = [openai_row(0), openai_row(1, tools=[{"name": "weather"}]), openai_row(2)]
    validation = validate(Source(rows), IA.fields)
    assert validation.read_as_written
    assert items(rows, as_written=True) == items(rows, as_written=False)
    first = next(iter_items(Source(rows), IA.fields, as_written=True))
    assert first.data["chat"] is rows[0]["chat"]  # taken as it is
    # derived from the calls, in the order of the first call of each
    assert [t["function"]["name"] for t in first.tools] == ["time", "weather"]


@pytest.mark.parametrize("other", [ANTHROPIC, NULL_CONTENT], ids=["anthropic", "null content"])
def test_one_row_in_another_shape_has_every_item_read_again(other: dict[str, Any]) -> None:
    rows = [openai_row(0), other]
    validation = validate(Source(rows), IA.fields)
    assert not validation.read_as_written
    item = list(iter_items(Source(rows), IA.fields, as_written=validation.read_as_written))[1]
    assert item.data["chat"] != other["chat"]
    assert item.data["chat"][1]["content"] == ""
    assert item.data["chat"][1]["tool_calls"][0]["type"] == "function"


def test_a_trajectory_of_json_text_is_judged_as_the_list_it_holds() -> None:
    pairwise = get_protocol("pairwise-chat-quality")
    trajectory = [{"role": "assistant", "content": "", "tool_calls": [call("a", "weather")]},
                  {"role": "tool", "tool_call_id": "a", "content": "21 °C"},
                  {"role": "assistant", "content": "21 °C."}]  # fmt: skip
    row = {"prompt": "Weather?", "response": "Sunny.", "baseline_model_response": "21 °C."}
    rows = [{**row, "baseline_trajectory": trajectory},
            {**row, "baseline_trajectory": json.dumps(trajectory)}]  # fmt: skip
    as_list, as_text = iter_items(Source(rows), pairwise.fields)
    assert as_text.data["baseline_trajectory"] == trajectory
    assert as_text.text == as_list.text and "weather" in as_text.text["baseline_model_response"]
