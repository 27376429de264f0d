"""chatjudge.conversation: one rendering of conversations for judges, models and rows."""

from __future__ import annotations

from chatjudge.conversation import (
    as_messages,
    as_text,
    render_messages,
    rendered_history,
    rendered_reply,
    transcript,
)
from chatjudge.messages import Msg, ToolCall

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


def test_what_the_assistant_did_with_tools_becomes_lines_of_its_message() -> None:
    history = [
        Msg("system", "You can look up the weather."),
        Msg("user", "Weather in Paris?"),
        Msg("assistant", "", (ToolCall("get_weather", '{"city": "Paris"}', "c1"),)),
        Msg("tool", "18 C", tool_call_id="c1"),  # its tool named through the call's id
        Msg("assistant", "It is 18 C."),
        Msg("user", "Thanks"),
    ]
    assert rendered_history(history) == [
        {"role": "system", "content": "You can look up the weather."},
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": '[tool call] get_weather({"city": "Paris"})\n'
            "[tool result get_weather] 18 C\nIt is 18 C.",
        },
        {"role": "user", "content": "Thanks"},
    ]


def test_a_turns_reply_holds_its_tool_calls_and_results_then_the_text() -> None:
    steps = [
        Msg("assistant", "Let me check.", (ToolCall("clock", "", "t"),)),
        Msg("tool", "noon", tool_call_id="unknown"),
        Msg("tool", "ok", name="log"),
        Msg("assistant", "It is noon."),
    ]
    assert rendered_reply(steps) == (
        "Let me check.\n[tool call] clock()\n[tool result] noon\n[tool result log] ok\nIt is noon."
    )
    assert rendered_reply([Msg("assistant", "")]) == ""
