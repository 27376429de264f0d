"""Expected tool calls: each comparator, extra arguments, match modes and every problem a
row can have, by hand."""

from __future__ import annotations

from typing import Any

import pytest

from chatjudge.chat.toolcalls.expected import (
    ExpectedCall,
    json_equal,
    read_expected_calls,
    read_match,
    render_expected_calls,
)


def one(entry: dict[str, Any]) -> ExpectedCall:
    calls, problems = read_expected_calls([entry])
    assert problems == []
    return calls[0]


def test_exact_is_json_equality_whatever_the_key_order_and_spacing() -> None:
    call = one({"name": "book", "arguments": {"when": {"day": 2, "hour": 9}, "n": 1}})
    assert call.accepts("book", {"n": 1.0, "when": {"hour": 9, "day": 2}})
    assert not call.accepts("book", {"n": 1, "when": {"hour": 9, "day": 3}})
    assert not call.accepts("book", {"n": True, "when": {"hour": 9, "day": 2}})  # true is not 1
    assert not call.accepts("cancel", {"n": 1, "when": {"hour": 9, "day": 2}})
    assert not call.accepts("book", {"when": {"hour": 9, "day": 2}})  # an argument missing
    assert not json_equal([1, 2], [2, 1]) and json_equal(None, None)


def test_extra_arguments_only_when_the_expected_call_allows_them() -> None:
    strict = one({"name": "f", "arguments": {"a": 1}})
    loose = one({"name": "f", "arguments": {"a": 1}, "extra_arguments": True})
    assert not strict.accepts("f", {"a": 1, "b": 2})
    assert loose.accepts("f", {"a": 1, "b": 2})
    named_only = one({"name": "f", "extra_arguments": True})  # the name alone is compared
    assert named_only.accepts("f", {"anything": [1]}) and named_only.accepts("f", "not json")
    no_arguments = one({"name": "f"})
    assert no_arguments.accepts("f", None) and no_arguments.accepts("f", "")
    assert not no_arguments.accepts("f", {"a": 1}) and not no_arguments.accepts("f", "{oops")


def test_subset_compares_only_the_expected_keys_recursively() -> None:
    call = one(
        {
            "name": "f",
            "arguments": {"filter": {"city": "Paris", "when": {"day": 2}}},
            "compare": {"filter": "subset"},
        }
    )
    assert call.accepts("f", {"filter": {"city": "Paris", "when": {"day": 2, "h": 9}, "x": 1}})
    assert not call.accepts("f", {"filter": {"city": "Paris", "when": {"h": 9}}})
    assert not call.accepts("f", {"filter": "Paris"})


def test_ignore_takes_any_value_or_none() -> None:
    call = one({"name": "f", "arguments": {"a": 1, "b": None}, "compare": {"b": "ignore"}})
    assert call.accepts("f", {"a": 1, "b": [1, 2]})
    assert call.accepts("f", {"a": 1})
    assert not call.accepts("f", {"a": 2, "b": 0})


def test_tolerance_compares_numbers_within_x() -> None:
    call = one({"name": "f", "arguments": {"t": 20.0}, "compare": {"t": {"tolerance": 0.5}}})
    assert call.accepts("f", {"t": 20.5}) and call.accepts("f", {"t": 19.5})
    assert not call.accepts("f", {"t": 20.51})
    assert not call.accepts("f", {"t": "20"}) and not call.accepts("f", {"t": True})


def test_regex_is_a_full_match_on_the_text() -> None:
    call = one({"name": "search", "compare": {"q": {"regex": "(?i)weather in paris.*"}}})
    assert call.accepts("search", {"q": "Weather in Paris today"})
    assert not call.accepts("search", {"q": "the weather in Paris"})  # not a full match
    assert not call.accepts("search", {"q": "Weather in Paris", "lang": "fr"})  # extra: no
    number = one({"name": "f", "compare": {"n": {"regex": "4[0-9]"}}})
    assert number.accepts("f", {"n": 42}) and not number.accepts("f", {"n": 402})


def test_arguments_may_be_json_text_as_openai_writes_them() -> None:
    call = one({"name": "f", "arguments": '{"a": [1, 2]}'})
    assert call.accepts("f", {"a": [1, 2]})


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"name": 3, "arguments": {}}, "call 1: name must be a non-empty string, got 3"),
        ({"arguments": {}}, "call 1: name must be a non-empty string, got None"),
        ({"name": "f", "argument": {}}, "call 1: unknown key 'argument'"),
        ({"name": "f", "arguments": [1]}, "call 1: arguments must be an object, got list"),
        (
            {"name": "f", "arguments": {"a": 1}, "compare": {"a": "fuzzy"}},
            "call 1: compare['a']: unknown comparator 'fuzzy'",
        ),
        (
            {"name": "f", "compare": {"a": {"regex": "(unclosed"}}},
            "call 1: compare['a']: regex '(unclosed' does not compile",
        ),
        (
            {"name": "f", "arguments": {"a": 1}, "compare": {"a": {"tolerance": -1}}},
            "call 1: compare['a']: tolerance must be a number >= 0",
        ),
        (
            {"name": "f", "arguments": {"a": "x"}, "compare": {"a": {"tolerance": 1}}},
            "call 1: compare['a']: a tolerance compares numbers",
        ),
        (
            {"name": "f", "compare": {"a": "exact"}},
            "call 1: compare['a']: compares 'a' with 'exact', but arguments holds no value",
        ),
        ({"name": "f", "extra_arguments": "yes"}, "call 1: extra_arguments must be true or false"),
    ],
)
def test_every_bad_expected_call_is_named(entry: dict[str, Any], problem: str) -> None:
    calls, problems = read_expected_calls([{"name": "ok"}, entry])
    assert [c.name for c in calls] == ["ok"]
    assert len(problems) == 1 and problems[0].startswith(problem.replace("call 1", "call 2"))


def test_the_column_must_be_a_list() -> None:
    assert read_expected_calls({"name": "f"})[1] == ["expected a list of calls, got dict"]
    assert read_expected_calls("[{")[1] == ["is text that is not JSON (expected a list of calls)"]
    assert read_expected_calls('[{"name": "f"}]')[0][0].name == "f"  # a CSV cell: JSON text


def test_match_modes() -> None:
    assert read_match(None) == ("exact", None)
    assert read_match(None, "subset") == ("subset", None)
    assert read_match("in-order") == ("in-order", None)
    mode, problem = read_match("unordered")
    assert problem is not None and "unknown match mode 'unordered'" in problem


def test_expected_calls_render_one_line_each() -> None:
    text = render_expected_calls(
        [{"name": "f", "arguments": {"b": 1, "a": "é"}}, {"name": "g", "compare": {"q": "ignore"}}]
    )
    assert text == 'f({"a": "é", "b": 1})\ng({}) compared {"q": "ignore"}'


BIG = 123456789012345678901234567890  # beyond 64 bits: orjson would read it as a float


def test_integers_beyond_64_bits_compare_exactly() -> None:
    call = one({"name": "f", "arguments": f'{{"n": {BIG}}}'})  # OpenAI's JSON text
    assert call.accepts("f", {"n": BIG}) and not call.accepts("f", {"n": BIG + 1})
    assert not call.accepts("f", {"n": float(BIG)})  # not the same number
    near = one({"name": "f", "arguments": {"n": BIG}, "compare": {"n": {"tolerance": 1}}})
    assert near.accepts("f", {"n": BIG + 1}) and not near.accepts("f", {"n": BIG + 2})
    huge = one({"name": "f", "arguments": {"n": 1.5}, "compare": {"n": {"tolerance": 10**400}}})
    assert huge.accepts("f", {"n": 10**399}) and not near.accepts("f", {"n": 10**400})
    assert not one({"name": "f", "arguments": {"n": 1.5}, "compare": {"n": {"tolerance": 1}}}
                   ).accepts("f", {"n": 10**400})  # fmt: skip
