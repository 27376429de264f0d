"""A Python callable as judge: sync or async, with or without the schema, errors mapped."""

from __future__ import annotations

import asyncio
import functools
import json
import threading
import time
from typing import Any

import pytest

from chatjudge.errors import JudgeError, RateLimitError, UsageError
from chatjudge.judges import get_judge
from chatjudge.judges.function import FunctionJudge
from chatjudge.protocols import get_protocol
from chatjudge.types import JudgeRequest, Reply
from chatjudge.verdicts.parse import parse_verdict

PROTOCOL = get_protocol("pairwise-chat-quality")
VERDICT = {"explanation": "B answers the question.", "pairwise_choice": "B"}


def request(prompt: str = "Compare A and B.") -> JudgeRequest:
    return JudgeRequest(
        prompt=prompt,
        schema=PROTOCOL.verdict_schema,
        schema_name="pairwise_chat_quality",
        instruction=PROTOCOL.output_instruction,
    )


def sync_judge(prompt: str) -> str:
    sync_judge.seen.append((prompt, threading.get_ident()))  # type: ignore[attr-defined]
    return json.dumps(VERDICT)


sync_judge.seen = []  # type: ignore[attr-defined]


async def test_sync_function_gets_prompt_with_instruction_in_a_worker_thread() -> None:
    sync_judge.seen.clear()  # type: ignore[attr-defined]
    judge = FunctionJudge(sync_judge)
    reply = await judge.generate(request())
    [(prompt, thread)] = sync_judge.seen  # type: ignore[attr-defined]
    assert prompt == "Compare A and B." + PROTOCOL.output_instruction
    assert thread != threading.get_ident()
    assert reply == Reply(json.dumps(VERDICT))
    verdict = parse_verdict(reply.text, PROTOCOL)
    assert verdict.scores == {"pairwise_choice": "CANDIDATE"}
    assert judge.supports_schema is False and judge.is_async is False


async def test_async_function_with_schema_parameter_gets_the_schema() -> None:
    calls: list[tuple[str, dict[str, Any]]] = []

    async def judge_fn(prompt: str, schema: dict[str, Any]) -> dict[str, Any]:
        calls.append((prompt, schema))
        return VERDICT

    judge = FunctionJudge(judge_fn)
    reply = await judge.generate(request())
    assert calls == [("Compare A and B." + PROTOCOL.output_instruction, PROTOCOL.verdict_schema)]
    assert json.loads(reply.text) == VERDICT  # a dict comes back as JSON text
    assert judge.is_async and judge.takes_schema


@pytest.mark.parametrize(
    "fn",
    [
        lambda prompt, schema=None: json.dumps({"schema": schema is not None}),
        lambda *args: json.dumps({"schema": len(args) == 2}),
    ],
    ids=["optional-second-parameter", "var-positional"],
)
async def test_a_function_that_accepts_a_second_argument_gets_the_schema(fn: Any) -> None:
    reply = await FunctionJudge(fn).generate(request())
    assert json.loads(reply.text) == {"schema": True}


async def test_sync_function_returning_an_awaitable_is_awaited() -> None:
    async def answer(prompt: str) -> str:
        await asyncio.sleep(0)
        return f"echo: {prompt[:5]}"

    judge = FunctionJudge(lambda prompt: answer(prompt))
    assert not judge.is_async
    assert (await judge.generate(request())).text == "echo: Compa"


async def test_object_with_async_call_and_partial_are_supported() -> None:
    class Grader:
        async def __call__(self, prompt: str) -> str:
            return "graded"

    def tagged(tag: str, prompt: str) -> str:
        return f"{tag}:{len(prompt)}"

    grader = FunctionJudge(Grader())
    assert grader.is_async and grader.name.endswith("<locals>.Grader")
    assert (await grader.generate(request())).text == "graded"
    partial = FunctionJudge(functools.partial(tagged, "t"))
    assert not partial.takes_schema
    expected = f"t:{len('Compare A and B.' + PROTOCOL.output_instruction)}"
    assert (await partial.generate(request())).text == expected


async def test_reply_with_usage_passes_through() -> None:
    judge = FunctionJudge(lambda prompt: Reply("{}", input_tokens=12, output_tokens=3))
    assert await judge.generate(request()) == Reply("{}", 12, 3)


async def test_sync_functions_do_not_block_the_event_loop() -> None:
    def slow(prompt: str) -> str:
        time.sleep(0.3)
        return "done"

    judge = FunctionJudge(slow)
    start = time.perf_counter()
    replies = await asyncio.gather(*(judge.generate(request()) for _ in range(3)))
    elapsed = time.perf_counter() - start
    assert [r.text for r in replies] == ["done"] * 3
    assert elapsed < 0.75, f"three 0.3 s calls took {elapsed:.2f} s: they ran one after another"


async def test_ordinary_exception_becomes_a_non_retryable_judge_error() -> None:
    def broken(prompt: str) -> str:
        raise ValueError("model server said no")

    with pytest.raises(JudgeError) as info:
        await FunctionJudge(broken).generate(request())
    assert type(info.value) is JudgeError
    assert not info.value.retryable and not info.value.fatal
    assert "ValueError: model server said no" in str(info.value)
    assert isinstance(info.value.__cause__, ValueError)


async def test_judge_errors_pass_through_with_their_retry_policy() -> None:
    async def limited(prompt: str) -> str:
        raise RateLimitError("slow down", retry_after=2.5)

    with pytest.raises(RateLimitError) as info:
        await FunctionJudge(limited).generate(request())
    assert info.value.retryable and info.value.retry_after == 2.5


async def test_unsupported_return_type_is_a_judge_error() -> None:
    with pytest.raises(JudgeError, match="returned int; expected str, dict or Reply"):
        await FunctionJudge(lambda prompt: 42).generate(request())


@pytest.mark.parametrize(
    "fn",
    [lambda: "x", lambda prompt, *, model: "x", lambda prompt, schema, extra: "x"],
    ids=["no-parameter", "required-keyword", "three-required"],
)
def test_unusable_signatures_are_rejected_up_front(fn: Any) -> None:
    with pytest.raises(UsageError, match="fn\\(prompt|prompt as its first argument"):
        FunctionJudge(fn)


def test_name_identity_and_routing() -> None:
    judge = get_judge(sync_judge)
    assert isinstance(judge, FunctionJudge)
    assert judge.name == "python/sync_judge"
    assert judge.identity() == {"provider": "python", "model": f"{__name__}.sync_judge"}
    assert judge.needs_key is False
