"""chatjudge.chat.messages: messages of any supported format read into one shape."""

from __future__ import annotations

import pytest

from chatjudge.chat.messages import LayoutError, Msg, ToolCall, openai_message


def test_roles_content_parts_and_tool_calls_are_read_from_each_form() -> None:
    assert openai_message({"role": "Human", "content": "hi"}) == Msg("user", "hi")
    assert openai_message({"role": "developer", "content": None}) == Msg("system", "")
    parts = [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {}}]
    assert openai_message({"role": "user", "content": parts}).content == "look\n[image_url]"
    nested = {
        "role": "assistant",
        "tool_calls": [{"id": "a", "function": {"name": "f", "arguments": '{"x":  1}'}}],
    }
    flat = {"tool_calls": [{"id": "b", "name": "f", "arguments": {"x": 1}}]}
    older = {"role": "ai", "function_call": {"name": "f", "arguments": '{"x": 1}'}}
    expected = Msg("assistant", "", (ToolCall("f", '{"x": 1}'),))
    assert openai_message(nested) == openai_message(flat) == openai_message(older) == expected
    result = openai_message({"role": "function", "content": "2", "name": "f", "tool_call_id": "a"})
    assert (result.role, result.name, result.tool_call_id) == ("tool", "f", "a")
    assert openai_message({"role": "user", "content": "x", "name": "ann"}).name is None


@pytest.mark.parametrize(
    ("message", "why"),
    [
        ("text", "a message must be an object, got str"),
        ({"role": "robot"}, "unknown message role 'robot'"),
        ({"role": None}, "unknown message role None"),
        ({"tool_calls": {"name": "f"}}, "tool calls must be a list, got dict"),
        ({"tool_calls": ["f"]}, "a tool call must be an object"),
        ({"tool_calls": [{"function": {"arguments": "{}"}}]}, "a tool call has no function name"),
    ],
)
def test_a_message_no_format_writes_is_a_layout_error(message: object, why: str) -> None:
    with pytest.raises(LayoutError) as raised:
        openai_message(message)
    assert str(raised.value) == why


# A row's conversation with tools, read into OpenAI's chat format.
