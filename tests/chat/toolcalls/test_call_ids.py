"""chatjudge.chat.toolcalls.call_ids: the one rule that pairs tool calls with their results,
and the ids they are written and sent with."""

from __future__ import annotations

from typing import Any

from chatjudge.chat.row_messages import read_conversation
from chatjudge.chat.toolcalls.call_ids import CallIds, paired


def _call(ident: Any, name: str = "f") -> dict[str, Any]:
    return {"id": ident, "type": "function", "function": {"name": name, "arguments": "{}"}}


def test_a_result_answers_the_earliest_open_call_of_its_id_else_the_earliest_open_call() -> None:
    ids = CallIds()
    first, second, unnamed = ids.call("X", "f"), ids.call("X", "g"), ids.call(None, "h")
    assert [first.written, second.written, unnamed.written] == ["X", "call_2", "call_3"]
    assert ids.result("X") is first and ids.result("X") is second
    assert ids.result("Y") is unnamed  # an id no open call has: a call recorded without one
    assert ids.result("X") is None and ids.result(None) is None  # answers no call
    late, lost = ids.call("X", "f"), ids.call("", "g")
    assert late.written == "call_4"  # "X" is the first call's
    assert ids.result(None, "g") is lost and ids.unanswered() == [late]


def test_ids_sent_to_a_provider_pair_and_ids_that_already_do_are_sent_as_they_are() -> None:
    ok = [{"role": "assistant", "content": "", "tool_calls": [_call("a"), _call("b")]},
          {"role": "tool", "tool_call_id": "b", "content": "B"},
          {"role": "tool", "tool_call_id": "a", "content": "A"}]  # fmt: skip
    assert paired(ok) is ok
    reused = [*ok[:2], {"role": "assistant", "content": "", "tool_calls": [_call("b")]},
              {"role": "tool", "tool_call_id": "b", "content": "B2"}]  # fmt: skip
    sent = paired(reused)
    assert [c["id"] for c in sent[2]["tool_calls"]] == ["call_3"]
    assert [m.get("tool_call_id") for m in sent] == [None, "b", None, "call_3"]
    assert reused[3]["tool_call_id"] == "b"  # the caller's messages are left as they were


def test_a_result_naming_its_tool_never_answers_a_call_to_another() -> None:
    ids = CallIds()
    search, calc = ids.call(None, "search"), ids.call(None, "calc")
    assert ids.result(None, "weather") is None  # answers no call: a row error, not a guess
    assert ids.result(None, "calc") is calc and ids.result(None) is search


def test_a_result_whose_id_is_not_text_is_read_as_one_without_an_id() -> None:
    """A recording's id written as a list or an object: no crash, no unhashable lookup."""
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "", "tool_calls": [_call("a")]},
        {"role": "tool", "tool_call_id": ["a"], "content": "x"},
    ]
    read = read_conversation(messages)
    assert read.problems == []
    assert read.messages[2] == {"role": "tool", "tool_call_id": "a", "content": "x"}
    sent = paired(messages)
    assert sent is not messages and sent[2]["tool_call_id"] == "a"
