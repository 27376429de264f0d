"""Every input format yields the same items; conversation fields render as `**role**: content`."""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import pandas as pd
import pytest

from chatjudge.chat.render import JudgeView
from chatjudge.data import Source, iter_items, validate
from chatjudge.errors import UsageError
from chatjudge.protocols import get_protocol

PROTOCOL = get_protocol("interactivity-accuracy")
ROWS = [
    {
        "id": "a",
        "chat_history": [],
        "chat": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "How many grams in 2.5 kg?"},
            {"role": "assistant", "content": "2,500 g."},
        ],
        "question": "How many grams are in 2.5 kg?",
        "answer": "2500",
    },
    {
        "id": "b",
        "chat_history": "user: hi\nassistant: hello",
        "chat": [{"role": "user", "content": "A {literal} brace"}],
        "question": "q?",
        "answer": 42,
    },
]


def _items(data, **kw):
    source = Source(data, kw.pop("column_map", None))
    validate(source, PROTOCOL.fields)
    return list(iter_items(source, PROTOCOL.fields, **kw))


def _as_dicts(items):
    return [(i.id, i.row, i.text) for i in items]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    jsonl = tmp_path / "d.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n\n", encoding="utf-8")
    frame = pd.DataFrame(
        [{k: (json.dumps(v) if isinstance(v, list) else v) for k, v in r.items()} for r in ROWS]
    )
    csv = tmp_path / "d.csv"
    frame.to_csv(csv, index=False)
    parquet = tmp_path / "d.parquet"
    # Parquet holds native list columns; a column mixing lists and text is stored as JSON text.
    native = pd.DataFrame(ROWS).astype({"answer": str})
    native["chat_history"] = frame["chat_history"]
    native.to_parquet(parquet)
    return {"jsonl": jsonl, "csv": csv, "parquet": parquet}


def test_all_formats_give_the_same_items(files: dict[str, Path]) -> None:
    expected = _as_dicts(_items(ROWS))
    assert _as_dicts(_items(files["jsonl"])) == expected
    assert _as_dicts(_items(files["csv"])) == expected
    assert _as_dicts(_items(files["parquet"])) == expected
    assert _as_dicts(_items(pd.DataFrame(ROWS))) == expected


def test_messages_render_one_per_line_without_system() -> None:
    item = _items(ROWS)[0]
    assert item.text["chat"] == "**user**: How many grams in 2.5 kg?\n**assistant**: 2,500 g."
    assert item.text["chat_history"] == ""
    assert item.fields["chat"] == ROWS[0]["chat"]  # originals kept for the report
    with_system = _items(ROWS, view=JudgeView(include_system=True))[0]
    assert with_system.text["chat"].startswith("**system**: Be brief.\n**user**:")


def test_strings_used_as_is_and_numbers_as_text() -> None:
    item = _items(ROWS)[1]
    assert item.text["chat_history"] == "user: hi\nassistant: hello"
    assert item.text["answer"] == "42"


def test_column_map_renames_columns() -> None:
    renamed = [{("conversation" if k == "chat" else k): v for k, v in r.items()} for r in ROWS]
    items = _items(renamed, column_map={"conversation": "chat"})
    assert items[0].text["chat"].startswith("**user**: How many grams")


def test_id_falls_back_to_row_number_and_limit() -> None:
    rows = [{k: v for k, v in r.items() if k != "id"} for r in ROWS]
    items = _items(rows, limit=1)
    assert [i.id for i in items] == ["1"]


def test_jsonl_row_numbers_are_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "gaps.jsonl"
    path.write_text("\n" + json.dumps(ROWS[0]) + "\n\n" + json.dumps(ROWS[1]) + "\n")
    assert [i.row for i in _items(path)] == [2, 4]


def test_unknown_format_and_missing_file_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not found"):
        Source(tmp_path / "nope.jsonl")
    bad = tmp_path / "data.xlsx"
    bad.write_text("x")
    with pytest.raises(UsageError, match="unknown data format"):
        Source(bad)
    with pytest.raises(UsageError, match="unsupported data"):
        Source(42)


def test_a_byte_order_mark_is_no_data(files: dict[str, Path], tmp_path: Path) -> None:
    """Editors on Windows save UTF-8 with a BOM: such a file loads as the same items."""
    expected = _as_dicts(_items(ROWS))
    for kind in ("jsonl", "csv"):
        marked = tmp_path / f"bom.{kind}"
        marked.write_bytes(codecs.BOM_UTF8 + files[kind].read_bytes())
        assert _as_dicts(_items(marked)) == expected, kind


def test_a_line_nested_too_deep_is_a_row_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.jsonl"
    deep = "[" * 10_000 + "]" * 10_000
    path.write_text(json.dumps(ROWS[0]) + "\n" + '{"id": "c", "chat": ' + deep + "}\n")
    rows = list(Source(path))
    assert rows[0].error is None
    assert (rows[1].number, rows[1].data) == (2, None)
    assert rows[1].error == "unparseable JSON line: nested more than 200 levels deep"


# Conversations with tool calls, and the `tools` column.

WEATHER = {
    "type": "function",
    "function": {
        "name": "weather",
        "description": "Today's weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
CALL = {"id": "c1", "type": "function",
        "function": {"name": "weather", "arguments": '{"city": "Paris"}'}}  # fmt: skip
TOOL_CHAT = [
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": "", "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "c1", "content": "21 °C"},
    {"role": "assistant", "content": "21 °C in Paris."},
]
ANTHROPIC_CHAT = [
    TOOL_CHAT[0],
    {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "weather",
                                       "input": {"city": "Paris"}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1",
                                  "content": "21 °C"}]},
    TOOL_CHAT[3],
]  # fmt: skip
TOOL_ROWS = [
    {"id": "t1", "chat": TOOL_CHAT, "question": "q", "answer": "a", "tools": [WEATHER]},
    {"id": "t2", "chat": ANTHROPIC_CHAT, "question": "q", "answer": "a",
     "tools": [WEATHER["function"]]},
    {"id": "t3", "chat": TOOL_CHAT, "question": "q", "answer": "a"},
]  # fmt: skip


def _tool_items(data):
    return [(i.id, i.fields["chat"], i.data["chat"], i.data.get("tools"), i.tools)
            for i in _items(data)]  # fmt: skip


def test_tool_conversations_and_tools_are_read_into_one_shape() -> None:
    derived = {"type": "function", "function": {"name": "weather", "description": "",
                                                "parameters": {"type": "object"}}}  # fmt: skip
    assert _tool_items(TOOL_ROWS) == [
        ("t1", TOOL_CHAT, TOOL_CHAT, [WEATHER], [WEATHER]),
        ("t2", TOOL_CHAT, TOOL_CHAT, [WEATHER], [WEATHER]),
        ("t3", TOOL_CHAT, TOOL_CHAT, None, [derived]),  # derived, and not written into the row
    ]
    assert TOOL_ROWS[1]["chat"] is ANTHROPIC_CHAT  # the caller's rows are left as they were


def test_a_plain_row_is_kept_as_it_came() -> None:
    item = _items(ROWS)[0]
    assert item.tools == [] and item.fields["chat"] is ROWS[0]["chat"]


def test_csv_and_parquet_cells_hold_tool_conversations_and_tools_as_json(tmp_path: Path) -> None:
    expected = _tool_items(TOOL_ROWS)
    as_text = pd.DataFrame(
        [{k: (json.dumps(v) if isinstance(v, list) else v) for k, v in r.items()}
         for r in TOOL_ROWS]
    )  # fmt: skip
    as_text.to_csv(tmp_path / "t.csv", index=False)
    as_text.to_parquet(tmp_path / "t.parquet")
    assert _tool_items(tmp_path / "t.csv") == expected
    assert _tool_items(tmp_path / "t.parquet") == expected
    native = pd.DataFrame([TOOL_ROWS[0], TOOL_ROWS[2]])  # structs: unset keys read as None
    native.to_parquet(tmp_path / "native.parquet")
    assert _tool_items(tmp_path / "native.parquet") == [expected[0], expected[2]]


def test_a_baseline_trajectory_is_read_into_the_same_shape() -> None:
    protocol = get_protocol("pairwise-chat-quality")
    row = {"prompt": "Weather in Paris?", "response": "Sunny.",
           "baseline_model_response": TOOL_CHAT[3]["content"],
           "baseline_trajectory": ANTHROPIC_CHAT[1:]}  # fmt: skip
    source = Source([row])
    validate(source, protocol.fields)
    (item,) = iter_items(source, protocol.fields)
    assert item.data["baseline_trajectory"] == TOOL_CHAT[1:]
    assert [t["function"]["name"] for t in item.tools] == ["weather"]  # derived from its calls
