"""chatjudge.produce.tool_answers: which recorded result a replayed call gets. Arguments are
compared as canonical JSON (key order and spacing aside, every value's type kept), and a
call that matches none is told so with its arguments written canonically. The user's
functions: held to their timeout even when async and blocking; whatever they raise is their
error; their results are valid JSON."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time

import pytest

from chatjudge.chat.types import ToolUse
from chatjudge.produce.tool_answers import Functions, Recording, ToolAnswer


def recorded(*calls: tuple[str, str]) -> Recording:
    """A trajectory calling `search` with each arguments text, answered `result N`."""
    messages: list[dict] = []
    for n, (arguments, result) in enumerate(calls):
        call = {"id": f"c{n}", "type": "function",
                "function": {"name": "search", "arguments": arguments}}  # fmt: skip
        messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": result})
    return Recording.of([None, messages])


def answer(recording: Recording, arguments: str) -> ToolAnswer:
    return asyncio.run(recording.replay().answer(ToolUse("x", "search", arguments)))


@pytest.mark.parametrize(
    ("recorded_arguments", "called", "matches"),
    [
        ('{"q": "é", "n": [1, 2.5, true, null]}', '{"n":[1,2.5,true,null],"q":"\\u00e9"}', True),
        ('{"n": 1}', '{"n": 1}', True),  # written alike
        ('{"n": 1}', '{"n": 1.0}', False),  # an integer is not a float
        ('{"n": 1}', '{"n": true}', False),
        ('{"n": 0.0}', '{"n": -0.0}', False),
        ('{"n": NaN}', '{"n":  NaN}', True),  # read as `json` reads it
        ('{"n": NaN}', '{"n": null}', False),  # orjson would write both as null
        ('{"n": Infinity}', '{"n": null}', False),
        ('{"id": 123456789012345678901}', '{"id":123456789012345678901}', True),
        ('{"id": 123456789012345678901}', '{"id": 123456789012345678902}', False),  # >64 bits
        ("not json {", "not json {", True),  # kept as recorded, compared as written
        ("not json {", "not  json {", False),
        ("", "", True),
    ],
)
def test_arguments_match_as_canonical_json(
    recorded_arguments: str, called: str, matches: bool
) -> None:
    got = answer(recorded((recorded_arguments, "RESULT")), called)
    assert (got == ToolAnswer("RESULT")) is matches, got


def test_equal_calls_get_the_recorded_results_in_order_then_the_last() -> None:
    recording = recorded(('{"a": 1}', "first"), ('{ "a" : 1 }', "second"), ('{"a": 2}', "other"))
    replay = recording.replay()
    call = ToolUse("x", "search", '{"a":1}')
    got = [asyncio.run(replay.answer(call)).text for _ in range(3)]
    assert got == ["first", "second", "second"]


def test_a_call_with_no_recorded_result_is_told_its_canonical_arguments() -> None:
    got = answer(recorded(('{"a": 1}', "R")), '{"b":[1,{"d":null,"c":"é"}],"a":2}')
    canonical = json.dumps({"a": 2, "b": [1, {"c": "é", "d": None}]}, ensure_ascii=False)
    assert got == ToolAnswer(
        f"no recorded result: the recording holds no call of search with the arguments {canonical}",
        "unmatched",
    )
    assert answer(recorded(('{"a": 1}', "R")), "").text.endswith("the arguments (none)")


# --- --tools: the user's functions -------------------------------------------------------------


def called(fn, timeout: float = 5.0, arguments: str = "{}") -> ToolAnswer:
    """`fn`'s answer to one call, as `--tools {"tool": fn}` gives it."""
    functions = Functions({"tool": fn}, timeout)
    return asyncio.run(functions.answer(ToolUse("x", "tool", arguments)))


def test_an_async_function_that_blocks_is_held_to_its_timeout() -> None:
    async def blocking() -> str:
        time.sleep(3)  # blocks whatever loop runs it
        return "late"

    started = time.monotonic()
    assert called(blocking, timeout=0.2) == ToolAnswer("error: tool timed out after 0.2 s", "error")
    assert time.monotonic() - started < 2


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_system_exit_from_a_function_is_its_error_not_the_end_of_the_command(kind: str) -> None:
    def exiting() -> str:
        sys.exit("no more")

    async def exiting_async() -> str:
        sys.exit(3)

    if kind == "sync":
        assert called(exiting) == ToolAnswer("error: SystemExit: no more", "error")
    else:
        assert called(exiting_async) == ToolAnswer("error: SystemExit: 3", "error")


def test_an_async_function_still_awaits_what_it_awaits() -> None:
    async def waiting(n: int) -> dict:
        await asyncio.sleep(0.01)
        return {"n": n, "async": True}

    assert called(waiting, arguments='{"n": 2}') == ToolAnswer('{"n": 2, "async": true}')


def test_nan_and_infinity_in_a_result_are_written_as_valid_json() -> None:
    def measured() -> dict:
        return {"mean": float("nan"), "bounds": [float("-inf"), 1.5, float("inf")]}

    def strict(constant: str) -> None:
        raise ValueError(f"{constant} is not JSON")

    got = called(measured)
    assert got.miss is None
    assert json.loads(got.text, parse_constant=strict) == {
        "mean": None,
        "bounds": [None, 1.5, None],
    }


def test_a_result_json_cannot_hold_is_the_function_s_error() -> None:
    def cyclic() -> list:
        loop: list = []
        loop.append(loop)
        return loop

    got = called(cyclic)
    assert got.miss == "error" and got.text.startswith("error: tool returned what JSON cannot hold")


def test_the_recording_pairs_results_with_calls_by_the_one_rule() -> None:
    """Two parallel calls under one id, then results without ids: each result is the
    recorded result of its own call (`chatjudge.chat.toolcalls.call_ids`)."""

    def step(ident: str | None, *cities: str) -> dict:
        calls = [{"id": ident, "type": "function",
                  "function": {"name": "search", "arguments": json.dumps({"q": city})}}
                 for city in cities]  # fmt: skip
        return {"role": "assistant", "content": "", "tool_calls": calls}

    messages = [
        step("X", "Oslo", "Rome"),
        {"role": "tool", "tool_call_id": "X", "content": "Oslo: sun"},
        {"role": "tool", "tool_call_id": "X", "content": "Rome: rain"},
        step(None, "Paris"),
        {"role": "tool", "content": "Paris: snow"},
    ]
    recording = Recording.of([messages])
    for city, result in (("Oslo", "sun"), ("Rome", "rain"), ("Paris", "snow")):
        assert answer(recording, json.dumps({"q": city})) == ToolAnswer(f"{city}: {result}")


def test_a_tool_thread_that_cannot_start_is_the_calls_error_not_the_end_of_the_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Timed-out tools keep their threads: when no new one can start, that call says so."""

    def refused(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", refused)
    assert called(lambda: "never") == ToolAnswer(
        "error: RuntimeError: can't start new thread", "error"
    )


def test_an_error_whose_message_cannot_be_read_is_still_the_tools_error() -> None:
    class Mute(Exception):
        def __str__(self) -> str:
            raise ValueError("no words")

    def failing() -> str:
        raise Mute

    assert called(failing) == ToolAnswer(
        "error: Mute: (its message could not be read: ValueError)", "error"
    )
