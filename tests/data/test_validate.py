"""Each kind of invalid row gets its own message naming row and field; all are listed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatjudge.data import Source, validate
from chatjudge.errors import DataValidationError
from chatjudge.protocols import get_protocol

IA = get_protocol("interactivity-accuracy")
PW = get_protocol("pairwise-chat-quality")
GOOD = {"chat": "**user**: hi", "question": "q", "answer": "a"}


def _problems(rows, protocol=IA) -> list[str]:
    with pytest.raises(DataValidationError) as info:
        validate(Source(rows), protocol)
    return [str(p) for p in info.value.problems]


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ({"question": "q", "answer": "a"}, "row 1, field 'chat': missing required field"),
        ({**GOOD, "answer": None}, "row 1, field 'answer': missing required field"),
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
        "row 4, field 'chat': message 1: unknown role 'robot' (use user, assistant or system)",
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
    assert validate(Source([GOOD]), IA) == 1
    problems = _problems([{"prompt": "p", "response": "r"}], PW)
    assert problems == ["row 1, field 'baseline_model_response': missing required field"]


def test_limit_validates_only_the_rows_judged() -> None:
    assert validate(Source([GOOD, {"bad": 1}]), IA, limit=1) == 1
