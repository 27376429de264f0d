"""chatjudge.traces.chat_format: a row's messages in OpenAI's chat format, every tool call
with an id and every result with the id of the call it answers."""

from __future__ import annotations

from chatjudge.chat.messages import Msg, ToolCall
from chatjudge.chat.row_messages import read_conversation
from chatjudge.traces.chat_format import chat_messages


def _ids(messages: list[dict]) -> list[str]:
    return [
        m.get("tool_call_id") or ",".join(c["id"] for c in m.get("tool_calls", ()))
        for m in messages
    ]


def test_recorded_ids_are_kept_and_the_messages_read_as_a_rows_do() -> None:
    messages = [
        Msg("user", "Weather in Paris?"),
        Msg("assistant", "Let me check.", (ToolCall("get_weather", '{"city": "Paris"}', "c1"),)),
        Msg("tool", "18 C", tool_call_id="c1"),
        Msg("assistant", "It is 18 C."),
    ]
    written = chat_messages(messages)
    assert written == [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": "Let me check.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "18 C"},
        {"role": "assistant", "content": "It is 18 C."},
    ]
    assert read_conversation(written).problems == []


def test_calls_without_ids_get_deterministic_ones_and_results_pair_by_tool_then_order() -> None:
    """No recorded ids (OpenLLMetry, older events): `call_<n>`; the results pair with the
    call to their tool where they name one, else with the first call still unanswered."""
    messages = [
        Msg("user", "Time and weather?"),
        Msg("assistant", "", (ToolCall("clock", "{}"), ToolCall("weather", "{}"))),
        Msg("tool", "sunny", name="weather"),
        Msg("tool", "noon"),
        Msg("assistant", "Noon and sunny."),
    ]
    written = chat_messages(messages)
    assert _ids(written) == ["", "call_1,call_2", "call_2", "call_1", ""]
    assert chat_messages(messages) == written  # the same ids on every import
    assert read_conversation(written).problems == []


def test_an_id_a_provider_reuses_each_turn_is_renamed_and_its_result_follows() -> None:
    messages = [
        Msg("user", "A?"),
        Msg("assistant", "", (ToolCall("f", "{}", "call_0"),)),
        Msg("tool", "a", tool_call_id="call_0"),
        Msg("assistant", "A."),
        Msg("user", "B?"),
        Msg("assistant", "", (ToolCall("f", "{}", "call_0"),)),
        Msg("tool", "b", tool_call_id="call_0"),
        Msg("assistant", "B."),
    ]
    written = chat_messages(messages)
    assert _ids(written) == ["", "call_0", "call_0", "", "", "call_2", "call_2", ""]
    assert read_conversation(written).problems == []


def test_a_result_that_answers_no_call_keeps_its_id_for_the_rows_check_to_name() -> None:
    written = chat_messages([Msg("user", "?"), Msg("tool", "orphan", tool_call_id="gone")])
    assert written[1] == {"role": "tool", "tool_call_id": "gone", "content": "orphan"}
    assert read_conversation(written).problems == [
        "message 2: tool result answers no earlier call (id 'gone')"
    ]


def test_a_call_whose_result_was_not_recorded_is_kept_with_the_ids_a_row_reads_alike() -> None:
    """One id for two parallel calls, and one of them left without a result (a tool that
    failed): imported, and written with the very ids the row's reading gives the same
    messages as a row holds them (one rule, `chatjudge.chat.toolcalls.call_ids`)."""
    oslo, rome = (
        ToolCall("weather", '{"city": "Oslo"}', "call_0"),
        ToolCall("weather", '{"city": "Rome"}', "call_0"),
    )
    messages = [
        Msg("user", "Weather in Oslo and Rome?"),
        Msg("assistant", "", (oslo, rome)),
        Msg("tool", "Sunny", tool_call_id="call_0"),
        Msg("assistant", "Oslo is sunny; Rome did not answer."),
    ]
    written = chat_messages(messages)
    assert _ids(written) == ["", "call_0,call_2", "call_0", ""]
    read = read_conversation(written)
    assert read.problems == [] and read.messages is written  # read as written
    as_a_row_holds_them = [
        {**m, "tool_calls": [{**c, "id": "call_0"} for c in m["tool_calls"]]}
        if m.get("tool_calls")
        else m
        for m in written
    ]
    assert read_conversation(as_a_row_holds_them).messages == written
