"""chatjudge.chat.row_messages: a row's conversation read into OpenAI's format with tools, and
the problems that keep one from being read."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from chatjudge.chat.row_messages import message_problems, read_conversation
from tests.support.cli import run_cli


def test_a_rows_messages_are_checked_one_by_one() -> None:
    assert message_problems([{"role": "user", "content": "hi"}]) == []
    assert message_problems(
        [
            {"role": "bot", "content": "x"},
            "text",
            {"role": "user", "content": 3},
            {"role": "tool"},
        ]
    ) == [
        "message 1: unknown role 'bot' (use user, assistant, system or tool)",
        "message 2: expected an object with role and content",
        "message 3: content must be a string, got int",
        "message 4: content must be a string, got missing",
        "message 4: tool result answers no earlier call (no id; every call before it has "
        "its result)",
    ]


USER = {"role": "user", "content": "Weather in Paris?"}
FINAL = {"role": "assistant", "content": "It is 21 °C in Paris."}


def _call(call_id: str, name: str = "weather", arguments: str = '{"city": "Paris"}') -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


OPENAI = [
    USER,
    {"role": "assistant", "content": "", "tool_calls": [_call("c1")]},
    {"role": "tool", "tool_call_id": "c1", "content": "21 °C"},
    FINAL,
]


def test_a_plain_conversation_reads_as_it_is_written() -> None:
    """Byte for byte, as before tools: an SDK's dump (`"tool_calls": null`) included."""
    dumped = {**FINAL, "tool_calls": None, "function_call": None, "refusal": None}
    messages = [{"role": "system", "content": "Be brief.", "name": "x"}, USER, dumped]
    read = read_conversation(messages)
    assert read.problems == [] and read.called == [] and read.unparsed_arguments == 0
    assert read.messages is messages
    with_tools = read_conversation([*messages, *OPENAI[1:3]]).messages
    assert with_tools[:3] == [messages[0], USER, {**FINAL, "refusal": None}]  # one shape


def test_openai_tool_calls_are_read_as_they_are_and_null_content_becomes_text() -> None:
    null_content = [USER, {**OPENAI[1], "content": None}, *OPENAI[2:]]
    for messages in (OPENAI, null_content):
        read = read_conversation(messages)
        assert read.problems == [] and read.messages == OPENAI and read.called == ["weather"]
    parts = {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "21 °C"}]}
    assert read_conversation([*OPENAI[:2], parts, FINAL]).messages == OPENAI


def test_openai_tool_rows_as_sdks_write_them_are_the_messages_given() -> None:
    """Already in the shape read: the very list comes back (nothing copied), with the tools
    called in order and the arguments that are not JSON counted."""
    messages = [
        *OPENAI[:3],
        {"role": "assistant", "content": "", "tool_calls": [
            _call("c2", "search", '{"q": "x'), _call("c3")]},
        {"role": "tool", "tool_call_id": "c3", "content": "done"},
        {"role": "tool", "tool_call_id": "c2", "content": "none"},
        FINAL,
    ]  # fmt: skip
    read = read_conversation(messages)
    assert read.messages is messages and read.problems == [] and read.origins is None
    assert (read.called, read.unparsed_arguments) == (["weather", "search"], 1)
    unparsed = read_conversation(messages, count_unparsed=False)  # its caller parses them
    assert unparsed.messages is messages and unparsed.unparsed_arguments == 0
    reordered = [OPENAI[0], {"content": "", **OPENAI[1]}, *OPENAI[2:]]  # keys in another order
    again = read_conversation(reordered)
    assert again.messages is not reordered and again.messages == OPENAI


def test_problems_in_the_shape_sdks_write_are_still_found() -> None:
    calls = [_call("c1", name="")]
    messages = [USER, {"role": "assistant", "content": "", "tool_calls": calls}]
    assert read_conversation(messages).problems == ["message 2: a tool call has no function name"]


def test_anthropic_tool_use_and_tool_result_blocks_become_openai_messages() -> None:
    messages = [
        USER,
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "toolu_1", "name": "weather",
                 "input": {"city": "Paris"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1",
                 "content": [{"type": "text", "text": "21 °C"}]},
                {"type": "text", "text": "And tomorrow?"},
            ],
        },
    ]  # fmt: skip
    read = read_conversation(messages)
    assert read.problems == []
    assert read.messages == [
        USER,
        {"role": "assistant", "content": "Let me look.", "tool_calls": [_call("toolu_1")]},
        {"role": "tool", "tool_call_id": "toolu_1", "content": "21 °C"},
        {"role": "user", "content": "And tomorrow?"},
    ]


def test_gemini_parts_are_read_and_calls_without_ids_paired_with_responses_in_order() -> None:
    calls = {
        "role": "model",
        "parts": [
            {"functionCall": {"name": "weather", "args": {"city": "Paris"}}},
            {"functionCall": {"name": "weather", "args": {"city": "Rome"}}},
            {"functionCall": {"name": "time", "args": {}}},
        ],
    }
    answers = {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "time", "response": {"now": "12:00"}}},
            {"functionResponse": {"name": "weather", "response": {"temp": 21}}},
            {"functionResponse": {"name": "weather", "response": {"temp": 25}}},
        ],
    }
    messages = [{"role": "user", "parts": [{"text": "Paris, Rome?"}]}, calls, answers]
    read = read_conversation([*messages, {"role": "model", "parts": [{"text": "21, 25."}]}])
    assert read.problems == [] and read.called == ["weather", "time"]
    assert read.messages == [
        {"role": "user", "content": "Paris, Rome?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                _call("call_1"),
                _call("call_2", arguments='{"city": "Rome"}'),
                _call("call_3", "time", "{}"),
            ],
        },
        {"role": "tool", "tool_call_id": "call_3", "content": '{"now": "12:00"}'},
        {"role": "tool", "tool_call_id": "call_1", "content": '{"temp": 21}'},
        {"role": "tool", "tool_call_id": "call_2", "content": '{"temp": 25}'},
        {"role": "assistant", "content": "21, 25."},
    ]
    assert read_conversation(messages).messages == read.messages[:-1]  # the same ids each time
    with_ids = [
        {"role": "model", "parts": [{"function_call": {"id": "g1", "name": "time", "args": {}}}]},
        {"role": "user", "parts": [{"function_response": {"id": "g1", "name": "time",
                                                          "response": "noon"}}]},
    ]  # fmt: skip
    assert read_conversation(with_ids).messages == [
        {"role": "assistant", "content": "", "tool_calls": [_call("g1", "time", "{}")]},
        {"role": "tool", "tool_call_id": "g1", "content": "noon"},
    ]


def test_arguments_that_are_not_json_are_kept_as_recorded_and_counted() -> None:
    broken = '{"city": "Par'
    messages = [USER, {"role": "assistant", "tool_calls": [_call("c1", arguments=broken),
                                                           _call("c2")]}]  # fmt: skip
    read = read_conversation(messages)
    assert read.problems == [] and read.unparsed_arguments == 1
    assert read.messages[1]["tool_calls"][0]["function"]["arguments"] == broken


def test_a_call_whose_result_was_not_recorded_is_data_at_the_end_or_before_more() -> None:
    """A trajectory cut at --max-tool-steps, and a call whose result the recording lacks
    (a tool that failed, a recorder that dropped it): both read as they are written."""
    again = [{"role": "assistant", "content": "", "tool_calls": [_call("c2")]},
             {"role": "tool", "tool_call_id": "c2", "content": "22 °C"}]  # fmt: skip
    for messages in (OPENAI[:2], [*OPENAI[:2], FINAL], [*OPENAI[:2], *again, FINAL]):
        read = read_conversation(messages)
        assert read.problems == [] and read.messages == messages


@pytest.mark.parametrize(
    ("messages", "problem"),
    [
        (
            [USER, {"role": "tool", "tool_call_id": "c9", "content": "x"}],
            "message 2: tool result answers no earlier call (id 'c9')",
        ),
        (
            [*OPENAI[:3], {"role": "tool", "tool_call_id": "c1", "content": "again"}],
            "message 4: tool result answers no earlier call (id 'c1')",
        ),
        (
            [USER, {"role": "tool", "content": "x"}],
            "message 2: tool result answers no earlier call (no id; every call before it",
        ),
        (
            [USER, {"role": "user", "content": "x", "tool_calls": [_call("c1")]}],
            "message 2: only an assistant message may hold tool_calls, not user",
        ),
        (
            [{"role": "assistant", "tool_calls": [{"id": "c1", "name": "weather"}]}],
            'message 1: a tool call must be {"id", "type": "function"',
        ),
        (
            [{"role": "user", "content": [{"type": "image", "source": {}}]}],
            "message 1: content block 'image' is not supported in a user message",
        ),
        (
            [{"role": "user", "content": [{"type": "tool_use", "id": "t", "name": "f"}]}],
            "message 1: content block 'tool_use' is not supported in a user message",
        ),
        (
            [{"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]}],
            "message 1: tool result of 'f' answers no earlier call (no id",
        ),
        ([{"role": "narrator", "parts": []}], "message 1: unknown role 'narrator'"),
        ([{"role": "function", "content": "x"}], "message 1: unknown role 'function'"),
    ],
)
def test_each_tool_problem_names_its_message(messages: list, problem: str) -> None:
    problems = read_conversation(messages).problems
    assert len(problems) == 1 and problems[0].startswith(problem), problems
    assert message_problems(messages) == problems


# --- the one pairing rule, as recordings and other tools write ids ------------------------


def _steps(n: int, ident: Callable[[int], str | None]) -> list[dict[str, Any]]:
    """A trajectory of `n` steps, one call and its result each, then the final text; the
    call of step k recorded with the id `ident(k)` and its result with the same (no key at
    all where it is None, as agentevals and LangChain before ids write them)."""
    messages: list[dict[str, Any]] = []
    for k in range(1, n + 1):
        call = _call("", "lookup", json.dumps({"step": k}))
        result = {"role": "tool", "tool_call_id": "", "content": f"result {k}"}
        if ident(k) is None:
            del call["id"], result["tool_call_id"]
        else:
            call["id"] = result["tool_call_id"] = ident(k)
        messages += [{"role": "assistant", "content": "", "tool_calls": [call]}, result]
    return [*messages, {"role": "assistant", "content": "Done."}]


def _pairs(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Each result's text beside the arguments of the call its id names (ids unique)."""
    calls = {c["id"]: c["function"]["arguments"] for m in messages for c in m.get("tool_calls", ())}
    return [(calls[m["tool_call_id"]], m["content"]) for m in messages if m["role"] == "tool"]


def test_an_id_reused_in_every_step_or_none_at_all_pairs_each_result_with_its_step() -> None:
    """50 steps under one id (`call_X`: a server numbering each step anew), and 50 with
    neither ids nor tool_call_ids: read, each result paired with its own step's call, and
    written with ids of their own (the first use of an id kept, then `call_<n>`)."""
    unique = _steps(50, lambda k: f"c{k}")
    assert read_conversation(unique).messages is unique
    expected = [(json.dumps({"step": k}), f"result {k}") for k in range(1, 51)]
    for given in (_steps(50, lambda k: "call_X"), _steps(50, lambda k: None)):
        read = read_conversation(given)
        assert read.problems == [] and read.called == ["lookup"]
        ids = [c["id"] for m in read.messages for c in m.get("tool_calls", ())]
        assert len(set(ids)) == 50 and ids[1:3] == ["call_2", "call_3"]
        assert ids[0] == ("call_X" if given[0]["tool_calls"][0].get("id") else "call_1")
        assert _pairs(read.messages) == expected
        assert read_conversation(read.messages).messages is read.messages  # as written now


def test_two_parallel_calls_under_one_id_and_results_without_ids_pair_in_order() -> None:
    """One id for two calls of a step: the results answer them in order. Results without
    ids answer the earliest open call, that of their tool where they name one."""
    twice = [
        USER,
        {"role": "assistant", "content": "", "tool_calls": [
            _call("X", arguments='{"city": "Paris"}'), _call("X", arguments='{"city": "Rome"}')]},
        {"role": "tool", "tool_call_id": "X", "content": "21"},
        {"role": "tool", "tool_call_id": "X", "content": "25"},
    ]  # fmt: skip
    read = read_conversation(twice)
    assert read.problems == [] and [m.get("tool_call_id") for m in read.messages[2:]] == [
        "X",
        "call_2",
    ]
    assert _pairs(read.messages) == [('{"city": "Paris"}', "21"), ('{"city": "Rome"}', "25")]
    named = [
        USER,
        {"role": "assistant", "content": "", "tool_calls": [_call("a", "clock", "{}"), _call("b")]},
        {"role": "tool", "name": "weather", "content": "sunny"},
        {"role": "tool", "content": "noon"},
    ]
    weather = _call("b")["function"]["arguments"]
    assert _pairs(read_conversation(named).messages) == [(weather, "sunny"), ("{}", "noon")]


def test_a_trajectory_scores_alike_whatever_ids_it_was_recorded_with(tmp_path: Path) -> None:
    """`run -p tool-trajectory` on the 50 steps: with unique ids, one id reused in every
    step, neither ids nor tool_call_ids: the same scores and the same comparison."""
    expected = [{"name": "lookup", "arguments": {"step": k}} for k in (*range(1, 50), 99)]
    rows = [
        {"id": name, "response_trajectory": trajectory, "expected_tool_calls": expected}
        for name, trajectory in (
            ("unique", _steps(50, lambda k: f"c{k}")),
            ("reused", _steps(50, lambda k: "call_X")),
            ("none", _steps(50, lambda k: None)),
        )
    ]
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = run_cli("run", str(data), "-p", "tool-trajectory", "--out", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr
    records = {r["id"]: r for r in map(json.loads, (tmp_path / "run" / "results.jsonl").open())}
    unique = records["unique"]
    assert unique["scores"]["matched_calls"] == 49 and unique["scores"]["trajectory_match"] == 0
    for name in ("reused", "none"):
        assert records[name]["scores"] == unique["scores"]
        assert records[name]["tool_calls"] == unique["tool_calls"]
        assert records[name]["rationale"] == unique["rationale"]


def test_a_result_that_answers_no_call_is_a_row_error_naming_row_and_field(
    tmp_path: Path,
) -> None:
    orphan = [*_steps(2, lambda k: f"c{k}")[:4],
              {"role": "tool", "tool_call_id": "c2", "content": "again"},
              {"role": "assistant", "content": "Done."}]  # fmt: skip
    rows = [
        {"id": "ok", "response_trajectory": _steps(2, lambda k: "X")},
        {"id": "bad", "response_trajectory": orphan},
    ]
    for row in rows:
        row["expected_tool_calls"] = [{"name": "lookup"}]
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = run_cli("run", str(data), "-p", "tool-trajectory", "--out", str(tmp_path / "run"))
    assert done.returncode == 2
    err = " ".join(done.stderr.split())
    assert (
        "row 2, field 'response_trajectory': message 5: tool result answers no earlier call "
        "(id 'c2')" in err
    )
    assert "row 1" not in err and not (tmp_path / "run").exists()
