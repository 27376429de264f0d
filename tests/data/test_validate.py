"""Each kind of invalid row gets its own message naming row and field; all are listed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatjudge.data import Source, validate
from chatjudge.errors import DataValidationError, UsageError
from chatjudge.protocols import get_protocol
from tests.support.cli import run_cli
from tests.support.stub_openai import StubServer

IA = get_protocol("interactivity-accuracy")
PW = get_protocol("pairwise-chat-quality")
GOOD = {"chat": "**user**: hi", "question": "q", "answer": "a"}


def _problems(rows, protocol=IA) -> list[str]:
    with pytest.raises(DataValidationError) as info:
        validate(Source(rows), protocol.fields)
    return [str(p) for p in info.value.problems]


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ({"question": "q", "answer": "a"}, "row 1, field 'chat': missing required field"),
        ({**GOOD, "answer": None}, "row 1, field 'answer': required field is empty"),
        ({**GOOD, "question": "   "}, "row 1, field 'question': required field is empty"),
        ({**GOOD, "question": ["x"]}, "row 1, field 'question': expected a string, got a list"),
        (
            {**GOOD, "chat": {"role": "user"}},
            "field 'chat': expected a string or a list of messages",
        ),
        ({**GOOD, "chat": [{"role": "bot", "content": "x"}]}, "message 1: unknown role 'bot'"),
        ({**GOOD, "chat": [{"role": "user"}]}, "message 1: content must be a string, got missing"),
        ({**GOOD, "chat": [{"role": "user", "content": 3}]}, "content must be a string, got int"),
        ({**GOOD, "chat": ["hello"]}, "message 1: expected an object with role and content"),
        ({**GOOD, "id": [1]}, "row 1, field 'id': expected a string or integer"),
        (
            {**GOOD, "chat": 42},
            "row 1, field 'chat': expected a string or a list of messages, got int",
        ),
        (
            {**GOOD, "chat": True},
            "row 1, field 'chat': expected a string or a list of messages, got bool",
        ),
        ({**GOOD, "chat": []}, "row 1, field 'chat': required field is empty"),
        ({**GOOD, "chat": ""}, "row 1, field 'chat': required field is empty"),
    ],
)
def test_each_kind_of_problem_has_its_message(row: dict, expected: str) -> None:
    problems = _problems([row])
    assert len(problems) == 1
    assert expected in problems[0]


def test_every_problem_is_listed_with_its_row() -> None:
    rows = [GOOD, {"question": "q"}, GOOD, {**GOOD, "chat": [{"role": "robot", "content": "x"}]}]
    problems = _problems(rows)
    assert problems == [
        "row 2, field 'chat': missing required field",
        "row 2, field 'answer': missing required field",
        "row 4, field 'chat': message 1: unknown role 'robot' "
        "(use user, assistant, system or tool)",
    ]


def test_unparseable_jsonl_line_and_non_object(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(GOOD) + "\n{not json\n[1, 2]\n")
    problems = _problems(path)
    assert problems[0].startswith("row 2, field '(row)': unparseable JSON line")
    assert problems[1] == "row 3, field '(row)': expected an object with named fields, got list"


def test_duplicate_ids_and_empty_data() -> None:
    problems = _problems([{**GOOD, "id": "x"}, {**GOOD, "id": "x"}])
    assert problems == ["row 2, field 'id': duplicate id 'x' (first at row 1)"]
    assert _problems([]) == ["row 0, field '(data)': the dataset has no rows"]


def test_optional_fields_may_be_missing_and_pairwise_fields_checked() -> None:
    assert validate(Source([GOOD]), IA.fields).n_rows == 1
    problems = _problems([{"prompt": "p", "response": "r"}], PW)
    assert problems == ["row 1, field 'baseline_model_response': missing required field"]


def test_limit_validates_only_the_rows_judged() -> None:
    assert validate(Source([GOOD, {"bad": 1}]), IA.fields, limit=1).n_rows == 1


def test_an_empty_response_is_data_but_an_empty_prompt_is_not() -> None:
    """A model can answer nothing: the judge sees it. A judge cannot do without the prompt."""
    row = {"prompt": "Say hi.", "baseline_model_response": "", "response": "Hi!"}
    assert (
        validate(
            Source([row, {**row, "response": "  ", "baseline_model_response": "Hello"}]), PW.fields
        ).n_rows
        == 2
    )
    assert _problems([{**row, "prompt": ""}], PW) == [
        "row 1, field 'prompt': required field is empty"
    ]
    assert _problems([{**row, "response": None}], PW) == [
        "row 1, field 'response': required field is empty"
    ]


def test_a_number_is_accepted_where_a_string_goes_but_not_as_a_conversation() -> None:
    assert validate(Source([{**GOOD, "answer": 60}]), IA.fields).n_rows == 1
    assert _problems([{**GOOD, "answer": 60, "chat": 60}]) == [
        "row 1, field 'chat': expected a string or a list of messages, got int"
    ]


def test_skip_invalid_keeps_the_valid_rows_and_lists_the_rest() -> None:
    rows = [GOOD, {"question": "q"}, GOOD, {**GOOD, "chat": 42}]
    validation = validate(Source(rows), IA.fields, skip_invalid=True)
    assert validation.n_rows == 2
    assert validation.skipped_rows == {2, 4}
    assert validation.skipped() == [
        {"row": 2, "field": "chat", "message": "missing required field"},
        {"row": 2, "field": "answer", "message": "missing required field"},
        {"row": 4, "field": "chat", "message": "expected a string or a list of messages, got int"},
    ]
    with pytest.raises(DataValidationError):  # nothing valid: still an error
        validate(Source([{"question": "q"}]), IA.fields, skip_invalid=True)


def test_a_line_that_is_not_utf8_names_its_row_and_bytes(tmp_path: Path) -> None:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(
        json.dumps(GOOD).encode() + b'\n{"chat": "caf\xe9", "question": "q", "answer": "a"}\n'
    )
    assert _problems(path) == [
        "row 2, field '(row)': not valid UTF-8: byte 0xe9 at column 14 (save the file as UTF-8)"
    ]
    csv = tmp_path / "latin1.csv"
    csv.write_bytes(b"chat,question,answer\nhi,q,a\ncaf\xe9,q,a\n")
    assert _problems(csv) == [
        "row 3, field '(row)': line 3 of the file is not valid UTF-8: byte 0xe9 at column 4 "
        "(save the file as UTF-8)"
    ]


def test_nan_and_infinity_in_jsonl_are_missing_values(tmp_path: Path) -> None:
    """pandas writes NaN into JSONL; a goal of "nan" must never reach a model."""
    path = tmp_path / "nan.jsonl"
    path.write_text(
        '{"chat": "**user**: hi", "question": NaN, "answer": "a"}\n'
        '{"chat": "**user**: hi", "question": "q", "answer": Infinity}\n'
        '{"chat": "**user**: hi", "question": "q", "answer": "a", "chat_history": -Infinity}\n'
    )
    assert _problems(path) == [
        "row 1, field 'question': required field is empty",
        "row 2, field 'answer': required field is empty",
    ]


def test_an_empty_cell_reads_the_same_in_csv_parquet_and_jsonl(tmp_path: Path) -> None:
    import pandas as pd

    frame = pd.DataFrame([{"chat": "**user**: hi", "question": "", "answer": "a"}])
    frame.to_csv(tmp_path / "d.csv", index=False)
    frame.to_parquet(tmp_path / "d.parquet")
    (tmp_path / "d.jsonl").write_text('{"chat": "**user**: hi", "question": null, "answer": "a"}\n')
    expected = ["row 1, field 'question': required field is empty"]
    for name in ("d.csv", "d.parquet", "d.jsonl"):
        assert _problems(tmp_path / name) == expected, name


def test_a_map_from_a_column_the_data_lacks_is_named() -> None:
    with pytest.raises(UsageError, match="--map nonexistent=chat: the data has no column") as e:
        validate(Source([GOOD], {"nonexistent": "chat"}), IA.fields)
    assert "answer, chat, question" in str(e.value)
    assert validate(Source([{**GOOD, "talk": "x"}], {"talk": "chat"}), IA.fields).n_rows == 1


# Conversations with tool calls, and the `tools` column.

CALL = {"id": "c1", "type": "function",
        "function": {"name": "weather", "arguments": '{"city": "Paris"}'}}  # fmt: skip
ASK = {"role": "user", "content": "Weather in Paris?"}
CALLS = {"role": "assistant", "content": None, "tool_calls": [CALL]}
RESULT = {"role": "tool", "tool_call_id": "c1", "content": "21 °C"}
ANSWER = {"role": "assistant", "content": "21 °C in Paris."}
TOOL_ROW = {**GOOD, "chat": [ASK, CALLS, RESULT, ANSWER]}
BAD_TOOL_ROWS = [
    (
        {**GOOD, "chat": [ASK, RESULT, ANSWER]},
        "row 1, field 'chat': message 2: tool result answers no earlier call (id 'c1')",
    ),
    (
        {**GOOD, "chat_history": [ASK, {"role": "critic", "content": "x"}]},
        "row 1, field 'chat_history': message 2: unknown role 'critic' "
        "(use user, assistant, system or tool)",
    ),
    (
        {
            **GOOD,
            "chat": [
                {"role": "user", "parts": [{"text": "Paris?"}]},
                {
                    "role": "user",
                    "parts": [{"functionResponse": {"name": "weather", "response": {"temp": 21}}}],
                },
            ],
        },
        "row 1, field 'chat': message 2: tool result of 'weather' answers no earlier call (no "
        "id; every call before it has its result)",
    ),
    (
        {**TOOL_ROW, "tools": [{"name": "weather", "parameters": {"type": "obj"}}]},
        "row 1, field 'tools': tool 1 ('weather'): parameters is not a JSON Schema: 'obj' is not "
        "valid under any of the given schemas (at type)",
    ),
]


@pytest.mark.parametrize(("row", "expected"), BAD_TOOL_ROWS)
def test_each_tool_problem_names_row_field_and_message(row: dict, expected: str) -> None:
    assert _problems([row]) == [expected]


def test_rows_with_derived_tools_and_unparsed_arguments_are_counted() -> None:
    broken = {
        **CALLS,
        "tool_calls": [{**CALL, "function": {"name": "weather", "arguments": "{city: Paris"}}],
    }
    tools = [{"name": "weather"}]
    rows = [
        GOOD,
        TOOL_ROW,  # derived
        {**TOOL_ROW, "tools": tools},
        {**GOOD, "chat": [ASK, broken, RESULT, ANSWER], "tools": tools},  # unparsed
        {**GOOD, "chat": [ASK, broken, RESULT, ANSWER], "chat_history": [ASK, broken]},  # both
        {**TOOL_ROW, "answer": None},  # invalid: skipped, so not counted
    ]  # fmt: skip
    validation = validate(Source(rows), IA.fields, skip_invalid=True)
    assert (validation.n_rows, validation.derived_tool_definitions) == (5, 2)
    assert validation.unparsed_tool_arguments == 3


@pytest.mark.parametrize(("row", "expected"), BAD_TOOL_ROWS)
def test_a_bad_tool_row_exits_2_with_nothing_sent(
    stub: StubServer, tmp_path: Path, row: dict, expected: str
) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps(GOOD) + "\n" + json.dumps(row) + "\n")
    out = tmp_path / "run"
    done = run_cli("run", str(data), "-p", "interactivity-accuracy", "-j", "openai/stub",
                   "--base-url", stub.base_url, "--out", str(out), key="sk-test")  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert expected.replace("row 1", "row 2") in " ".join(done.stderr.split())
    assert "nothing was sent" in done.stderr
    assert stub.stats.requests == 0 and not out.exists()


PW_ROW = {"prompt": "Weather in Paris?", "response": "Sunny.", "baseline_model_response": "21 °C."}


@pytest.mark.parametrize(
    ("trajectory", "expected"),
    [
        (
            [CALLS, RESULT, ASK, ANSWER],
            "row 1, field 'baseline_trajectory': message 3: a trajectory holds the assistant's "
            "messages and tool results, not user messages",
        ),
        (
            [CALLS, RESULT, {"role": "assistant", "content": "Rainy."}],
            "row 1, field 'baseline_trajectory': message 3: the trajectory's final text is not "
            "its baseline_model_response",
        ),
        (
            [RESULT, ANSWER],
            "row 1, field 'baseline_trajectory': message 1: tool result answers no earlier call "
            "(id 'c1')",
        ),
        ("21 °C.", "row 1, field 'baseline_trajectory': expected a list of messages, got str"),
    ],
)
def test_a_bad_baseline_trajectory_is_named(trajectory: object, expected: str) -> None:
    assert _problems([{**PW_ROW, "baseline_trajectory": trajectory}], PW) == [expected]


def test_a_trajectory_of_json_text_is_checked_as_the_list_it_holds() -> None:
    answer = {"role": "assistant", "content": "21 °C."}
    text = json.dumps([CALLS, RESULT, answer])
    validation = validate(Source([{**PW_ROW, "baseline_trajectory": text}]), PW.fields)
    assert (validation.n_rows, validation.read_as_written) == (1, False)  # read, not as written
    assert _problems([{**PW_ROW, "baseline_trajectory": json.dumps([RESULT, answer])}], PW) == [
        "row 1, field 'baseline_trajectory': message 1: tool result answers no earlier call "
        "(id 'c1')"
    ]
    [problem] = _problems([{**PW_ROW, "response_trajectory": text[:-3]}], PW)
    assert problem.startswith(
        "row 1, field 'response_trajectory': is text that is not JSON (expected a list of messages)"
    )


def test_a_baseline_trajectory_may_end_on_its_answer_or_on_calls_cut_at_a_cap() -> None:
    answer = {"role": "assistant", "content": "21 °C."}
    rows = [{**PW_ROW, "baseline_trajectory": [CALLS, RESULT, answer]},
            {**PW_ROW, "baseline_trajectory": [CALLS, RESULT, CALLS | {"tool_calls": [
                {**CALL, "id": "c2"}]}]}]  # fmt: skip
    validation = validate(Source(rows), PW.fields)
    assert (validation.n_rows, validation.derived_tool_definitions) == (2, 2)


@pytest.mark.parametrize(
    ("command", "field", "row"),
    [
        (
            "simulate -a --assistant-base-url",
            "chat_history",
            {**TOOL_ROW, "chat_history": TOOL_ROW["chat"]},
        ),
    ],
)
def test_a_command_that_offers_no_tools_refuses_a_tool_history_with_nothing_sent(
    stub: StubServer, tmp_path: Path, command: str, field: str, row: dict
) -> None:
    name, model_flag, url_flag = command.split()
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps(row) + "\n")
    out = tmp_path / "out.jsonl"
    done = run_cli(name, str(data), model_flag, "openai/stub", url_flag, stub.base_url,
                   "--out", str(out), key="sk-test")  # fmt: skip
    assert done.returncode == 2, done.stderr
    said = " ".join(done.stderr.split())
    assert f"row 1, field '{field}': holds tool calls or tool results" in said, said
    assert stub.stats.requests == 0 and not out.exists()
