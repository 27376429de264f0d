"""chatjudge.row_messages: a row's conversation read into OpenAI's format with tools, and
the problems that keep one from being read."""

from __future__ import annotations

import pytest

from chatjudge.row_messages import message_problems, read_conversation


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
        "message 4: a tool message needs the tool_call_id of the call it answers",
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


@pytest.mark.parametrize(
    ("calls", "problem"),
    [
        ([_call("c1"), _call("c1")], "message 2: tool call id 'c1' is used twice"),
        ([_call("c1", name="")], "message 2: a tool call has no function name"),
        ([_call("")], "message 2: tool call 'weather' has no id"),
    ],
)
def test_problems_in_the_shape_sdks_write_are_still_found(calls: list, problem: str) -> None:
    messages = [USER, {"role": "assistant", "content": "", "tool_calls": calls}]
    assert read_conversation(messages).problems == [problem]


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
                _call("call_2_1"),
                _call("call_2_2", arguments='{"city": "Rome"}'),
                _call("call_2_3", "time", "{}"),
            ],
        },
        {"role": "tool", "tool_call_id": "call_2_3", "content": '{"now": "12:00"}'},
        {"role": "tool", "tool_call_id": "call_2_1", "content": '{"temp": 21}'},
        {"role": "tool", "tool_call_id": "call_2_2", "content": '{"temp": 25}'},
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


def test_a_trajectory_may_end_on_calls_without_results() -> None:
    """A trajectory cut at --max-tool-steps is data; a call left unanswered before the next
    message is not."""
    assert read_conversation(OPENAI[:2]).problems == []
    assert read_conversation([*OPENAI[:2], FINAL]).problems == [
        "message 2: tool call 'weather' (id 'c1') has no result before message 3"
    ]


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
        ([USER, {"role": "tool", "content": "x"}], "message 2: a tool message needs the"),
        (
            [USER, {"role": "user", "content": "x", "tool_calls": [_call("c1")]}],
            "message 2: only an assistant message may hold tool_calls, not user",
        ),
        (
            [{"role": "assistant", "tool_calls": [_call("c1"), _call("c1")]}],
            "message 1: tool call id 'c1' is used twice",
        ),
        (
            [{"role": "assistant", "tool_calls": [{"id": "c1", "name": "weather"}]}],
            'message 1: a tool call must be {"id", "type": "function"',
        ),
        (
            [{"role": "assistant", "tool_calls": [{**_call("c1"), "id": None}]}],
            "message 1: tool call 'weather' has no id",
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
            "message 1: function response 'f' answers no earlier call",
        ),
        ([{"role": "narrator", "parts": []}], "message 1: unknown role 'narrator'"),
        ([{"role": "function", "content": "x"}], "message 1: unknown role 'function'"),
    ],
)
def test_each_tool_problem_names_its_message(messages: list, problem: str) -> None:
    problems = read_conversation(messages).problems
    assert len(problems) == 1 and problems[0].startswith(problem), problems
    assert message_problems(messages) == problems
