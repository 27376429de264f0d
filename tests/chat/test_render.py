"""chatjudge.chat.render: one rendering of conversations for judges and models."""

from __future__ import annotations

import json

from chatjudge.chat.fields import FieldSpec
from chatjudge.chat.render import (
    JudgeView,
    as_messages,
    as_text,
    cut,
    judge_texts,
    render_messages,
    transcript,
    without_tools,
)

CHAT = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": "hello"},
]


def test_render_messages_directly() -> None:
    text = render_messages(
        [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    )
    assert text == "**user**: a\n**assistant**: b"


def test_system_messages_reach_the_judge_only_when_asked() -> None:
    assert render_messages(CHAT) == "**user**: hi\n**assistant**: hello"
    assert render_messages(CHAT, include_system=True) == (
        "**system**: Be brief.\n**user**: hi\n**assistant**: hello"
    )


def test_a_field_as_the_judge_reads_it() -> None:
    assert as_text(None) == ""
    assert as_text("plain text") == "plain text"
    assert as_text(60) == "60"
    assert as_text(CHAT) == "**user**: hi\n**assistant**: hello"
    assert as_text(CHAT, include_system=True).startswith("**system**: Be brief.\n")


def test_the_simulated_user_reads_its_own_turns_as_you() -> None:
    assert transcript(CHAT) == "**you**: hi\n**assistant**: hello"
    assert transcript([], you="user") == ""


def test_a_field_as_a_model_under_test_reads_it() -> None:
    with_extra = [{**CHAT[1], "name": "ann"}, CHAT[0]]
    assert as_messages(with_extra, label="Earlier") == [
        {"role": "user", "content": "hi"},
        {"role": "system", "content": "Be brief."},  # kept: it instructs the model
    ]
    assert as_messages("a recap", label="Earlier") == [
        {"role": "system", "content": "Earlier:\na recap"}
    ]
    assert as_messages(None, label="x") == as_messages("", label="x") == []
    assert as_messages([], label="x") == []


# Tool calls as a judge reads them (OpenAI's chat format, as rows hold it)

CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"unit":"C", "city":"Paris"}'},
        }
    ],
}
RESULT = {"role": "tool", "tool_call_id": "c1", "content": "18 C, sunny"}
TRAJECTORY = [CALL, RESULT, {"role": "assistant", "content": "It is 18 C and sunny."}]


def test_a_tool_call_and_its_result_read_as_lines_of_the_conversation() -> None:
    chat = [{"role": "user", "content": "Weather in Paris?"}, *TRAJECTORY]
    assert render_messages(chat) == (
        "**user**: Weather in Paris?\n"
        '**assistant** called get_weather({"city": "Paris", "unit": "C"})\n'
        "**tool** (get_weather) returned: 18 C, sunny\n"
        "**assistant**: It is 18 C and sunny."
    )


def test_text_beside_calls_comes_first_and_a_result_is_named_as_it_can_be() -> None:
    steps = [
        {
            "role": "assistant",
            "content": "Checking two things.",
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "clock", "arguments": ""}},
                {"id": "b", "type": "function", "function": {"name": "log", "arguments": "{x"}},
            ],
        },
        {"role": "tool", "tool_call_id": "b", "content": ""},
        {"role": "tool", "tool_call_id": "zz", "content": "noon"},  # answers no known call
        {
            "role": "tool",
            "tool_call_id": "a",
            "name": "clock",
            "content": [{"type": "text", "text": "12:00"}],
        },
    ]
    assert render_messages(steps).splitlines() == [
        "**assistant**: Checking two things.",
        "**assistant** called clock()",
        "**assistant** called log({x)",  # not JSON: as recorded
        "**tool** (log) returned: ",
        "**tool** returned: noon",
        "**tool** (clock) returned: 12:00",
    ]


def test_a_long_result_is_cut_with_a_marker_saying_how_much() -> None:
    long = {"role": "tool", "tool_call_id": "c1", "content": "x" * 3234}
    shown = render_messages([CALL, long], tool_result_chars=2000).splitlines()[1]
    assert (
        shown
        == "**tool** (get_weather) returned: " + "x" * 2000 + "… [cut 1,234 of 3,234 characters]"
    )
    assert render_messages([CALL, long]) == render_messages([CALL, long], tool_result_chars=2000)
    assert cut("abc", 3) == "abc" and cut("abcd", 3) == "abc… [cut 1 of 4 characters]"
    assert (
        as_text([long], tool_result_chars=5)
        == "**tool** returned: xxxxx… [cut 3,229 of 3,234 characters]"
    )


PAIR = (
    FieldSpec(name="baseline_model_response", trajectory="baseline_trajectory"),
    FieldSpec(name="response", trajectory="response_trajectory"),
)


def test_a_response_slot_shows_its_trajectory_or_only_the_final_text() -> None:
    row = {
        "baseline_model_response": "It is 18 C and sunny.",
        "baseline_trajectory": TRAJECTORY,
        "response": "Sunny, 18 C.",
        "response_trajectory": json.dumps(
            [CALL, RESULT, {"role": "assistant", "content": "Sunny, 18 C."}]
        ),
    }
    seen = judge_texts(PAIR, row, JudgeView())
    assert seen["baseline_model_response"] == render_messages(TRAJECTORY)
    assert seen["response"] == seen["baseline_model_response"].replace(
        "It is 18 C and sunny.", "Sunny, 18 C."
    )  # both slots the same way, a CSV cell's JSON text read
    final = judge_texts(PAIR, row, JudgeView(judge_sees="final"))
    assert final == {"baseline_model_response": "It is 18 C and sunny.", "response": "Sunny, 18 C."}


def test_a_slot_without_a_trajectory_with_tools_shows_its_text_as_before() -> None:
    plain = [{"role": "assistant", "content": "Hi."}]
    row = {"baseline_model_response": "Hi.", "baseline_trajectory": plain, "response": "Hello."}
    assert judge_texts(PAIR, row, JudgeView()) == {
        "baseline_model_response": "Hi.",
        "response": "Hello.",
    }


def test_a_call_whose_result_was_not_recorded_is_said_so_unless_the_trajectory_ends_on_it() -> None:
    """Mid-trajectory, a call no result answers shows `(no result recorded)` where its
    result would be; calls at the very end (a trajectory cut at a cap) show as before."""

    def weather(ident: str, city: str) -> dict:
        arguments = json.dumps({"city": city})
        return {"id": ident, "type": "function",
                "function": {"name": "get_weather", "arguments": arguments}}  # fmt: skip

    lost = [
        {"role": "user", "content": "Weather in Paris and Rome?"},
        {"role": "assistant", "content": "", "tool_calls": [weather("c1", "Paris"),
                                                            weather("c2", "Rome")]},
        {"role": "tool", "tool_call_id": "c1", "content": "18 C"},
        {"role": "assistant", "content": "Paris is 18 C."},
    ]  # fmt: skip
    shown = [
        "**user**: Weather in Paris and Rome?",
        '**assistant** called get_weather({"city": "Paris"})',
        '**assistant** called get_weather({"city": "Rome"})',
        "**tool** (get_weather) returned: 18 C",
        "**tool** (get_weather): (no result recorded)",
        "**assistant**: Paris is 18 C.",
    ]
    assert render_messages(lost).splitlines() == shown
    assert render_messages(lost[:3]).splitlines() == [*shown[:4]]  # cut here: as before
    assert without_tools(lost)[1] == {"role": "assistant", "content": "\n".join(shown[1:])}
