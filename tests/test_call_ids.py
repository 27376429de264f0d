"""chatjudge.call_ids: the one rule that pairs tool calls with their results, and the ids
they are written and sent with."""

from __future__ import annotations

from typing import Any

from chatjudge.call_ids import CallIds, paired


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
