"""A Python callable as a model: sync or async, with or without the schema, errors mapped."""

from __future__ import annotations

import asyncio
import functools
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import chatjudge
from chatjudge.chat.types import Message, ModelRequest, OutputSchema, Reply, ToolUse
from chatjudge.errors import ModelError, RateLimitError, UsageError
from chatjudge.models import get_model
from chatjudge.models.function import FunctionModel, ToolFunctionModel
from chatjudge.protocols import get_protocol
from chatjudge.verdicts.parse import parse_verdict

PROTOCOL = get_protocol("pairwise-chat-quality")
SCHEMA = OutputSchema("pairwise_chat_quality", PROTOCOL.verdict_schema, PROTOCOL.output_instruction)
VERDICT = {"explanation": "B answers the question.", "pairwise_choice": "B"}
PROMPT = "Compare A and B."


def request(*contents: str, schema: OutputSchema | None = SCHEMA) -> ModelRequest:
    messages: list[Message] = [{"role": "user", "content": c} for c in contents or (PROMPT,)]
    return ModelRequest(messages, schema=schema)


def sync_judge(prompt: str) -> str:
    sync_judge.seen.append((prompt, threading.get_ident()))  # type: ignore[attr-defined]
    return json.dumps(VERDICT)


sync_judge.seen = []  # type: ignore[attr-defined]


async def test_sync_function_gets_the_prompt_as_given_in_a_worker_thread() -> None:
    sync_judge.seen.clear()  # type: ignore[attr-defined]
    model = FunctionModel(sync_judge)
    reply = await model.generate(request())
    [(prompt, thread)] = sync_judge.seen  # type: ignore[attr-defined]
    assert prompt == PROMPT  # the runner, not the model, appends the output instruction
    assert thread != threading.get_ident()
    assert reply == Reply(json.dumps(VERDICT))
    verdict = parse_verdict(reply.text, PROTOCOL)
    assert verdict.scores == {"pairwise_choice": "CANDIDATE"}
    assert model.supports_schema is False and model.is_async is False


async def test_several_messages_are_joined_into_one_prompt() -> None:
    seen: list[str] = []
    model = FunctionModel(lambda prompt: seen.append(prompt) or "ok")
    await model.generate(request("First part.", "Second part."))
    assert seen == ["First part.\n\nSecond part."]


async def test_async_function_with_schema_parameter_gets_the_schema() -> None:
    calls: list[tuple[str, dict[str, Any] | None]] = []

    async def judge_fn(prompt: str, schema: dict[str, Any] | None) -> dict[str, Any]:
        calls.append((prompt, schema))
        return VERDICT

    model = FunctionModel(judge_fn)
    reply = await model.generate(request())
    assert calls == [(PROMPT, PROTOCOL.verdict_schema)]
    assert json.loads(reply.text) == VERDICT  # a dict comes back as JSON text
    assert model.is_async and model.takes_schema
    await model.generate(request(schema=None))  # no schema asked for: None in its place
    assert calls[-1] == (PROMPT, None)


@pytest.mark.parametrize(
    "fn",
    [
        lambda prompt, schema=None: json.dumps({"schema": schema is not None}),
        lambda *args: json.dumps({"schema": len(args) == 2 and args[1] is not None}),
    ],
    ids=["optional-second-parameter", "var-positional"],
)
async def test_a_function_that_accepts_a_second_argument_gets_the_schema(fn: Any) -> None:
    reply = await FunctionModel(fn).generate(request())
    assert json.loads(reply.text) == {"schema": True}


async def test_a_model_under_test_is_called_with_the_messages() -> None:
    seen: list[Any] = []

    def chat(messages: list[dict[str, str]], *rest: Any) -> str:
        seen.append((messages, rest))
        return "Rome."

    messages: list[Message] = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Capital of Italy?"},
    ]
    model = get_model(chat, call_with="messages")
    assert isinstance(model, FunctionModel) and not model.takes_schema
    reply = await model.generate(ModelRequest(messages))
    assert reply == Reply("Rome.")
    assert seen == [(messages, ())]
    assert seen[0][0] is not messages  # a copy: the function cannot change the run's messages


async def test_sync_function_returning_an_awaitable_is_awaited() -> None:
    async def answer(prompt: str) -> str:
        await asyncio.sleep(0)
        return f"echo: {prompt[:5]}"

    model = FunctionModel(lambda prompt: answer(prompt))
    assert not model.is_async
    assert (await model.generate(request())).text == "echo: Compa"


async def test_object_with_async_call_and_partial_are_supported() -> None:
    class Grader:
        async def __call__(self, prompt: str) -> str:
            return "graded"

    def tagged(tag: str, prompt: str) -> str:
        return f"{tag}:{len(prompt)}"

    grader = FunctionModel(Grader())
    assert grader.is_async and grader.name.endswith("<locals>.Grader")
    assert (await grader.generate(request())).text == "graded"
    partial = FunctionModel(functools.partial(tagged, "t"))
    assert not partial.takes_schema
    assert (await partial.generate(request())).text == f"t:{len(PROMPT)}"


async def test_reply_with_usage_passes_through() -> None:
    model = FunctionModel(lambda prompt: Reply("{}", input_tokens=12, output_tokens=3))
    assert await model.generate(request()) == Reply("{}", 12, 3)


async def test_sync_functions_do_not_block_the_event_loop() -> None:
    def slow(prompt: str) -> str:
        time.sleep(0.3)
        return "done"

    model = FunctionModel(slow)
    start = time.perf_counter()
    replies = await asyncio.gather(*(model.generate(request()) for _ in range(3)))
    elapsed = time.perf_counter() - start
    assert [r.text for r in replies] == ["done"] * 3
    assert elapsed < 0.75, f"three 0.3 s calls took {elapsed:.2f} s: they ran one after another"


async def test_ordinary_exception_becomes_a_non_retryable_judge_error() -> None:
    def broken(prompt: str) -> str:
        raise ValueError("model server said no")

    with pytest.raises(ModelError) as info:
        await FunctionModel(broken).generate(request())
    assert type(info.value) is ModelError
    assert not info.value.retryable and not info.value.fatal
    assert "ValueError: model server said no" in str(info.value)
    assert isinstance(info.value.__cause__, ValueError)


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_system_exit_from_the_function_is_its_error_not_the_end_of_the_run(kind: str) -> None:
    def exiting(prompt: str) -> str:
        sys.exit("gave up")

    async def exiting_async(prompt: str) -> str:
        sys.exit("gave up")

    with pytest.raises(ModelError) as info:
        await FunctionModel(exiting if kind == "sync" else exiting_async).generate(request())
    assert type(info.value) is ModelError and not info.value.retryable
    assert "SystemExit: gave up" in str(info.value)


async def test_a_dict_reply_holding_nan_is_sent_on_as_valid_json() -> None:
    def strict(constant: str) -> None:
        raise ValueError(f"{constant} is not JSON")

    reply = await FunctionModel(
        lambda prompt: {"score": float("nan"), "n": [float("inf")]}
    ).generate(request())
    assert json.loads(reply.text, parse_constant=strict) == {"score": None, "n": [None]}


async def test_judge_errors_pass_through_with_their_retry_policy() -> None:
    async def limited(prompt: str) -> str:
        raise RateLimitError("slow down", retry_after=2.5)

    with pytest.raises(RateLimitError) as info:
        await FunctionModel(limited).generate(request())
    assert info.value.retryable and info.value.retry_after == 2.5


async def test_unsupported_return_type_is_a_judge_error() -> None:
    with pytest.raises(ModelError, match="returned int; expected str, dict or Reply"):
        await FunctionModel(lambda prompt: 42).generate(request())


@pytest.mark.parametrize(
    "fn",
    [lambda: "x", lambda prompt, *, model: "x", lambda prompt, schema, extra: "x"],
    ids=["no-parameter", "required-keyword", "three-required"],
)
def test_unusable_signatures_are_rejected_up_front(fn: Any) -> None:
    with pytest.raises(UsageError, match="fn\\(prompt|prompt as its first argument"):
        FunctionModel(fn)


def test_name_identity_and_routing() -> None:
    model = get_model(sync_judge)
    assert isinstance(model, FunctionModel)
    assert model.name == "python/sync_judge"
    assert model.identity() == {"provider": "python", "model": f"{__name__}.sync_judge"}
    assert model.needs_key is False and model.call_with == "prompt"


def test_the_runner_appends_the_output_instruction_for_a_function_judge(tmp_path: Path) -> None:
    """A function cannot be made to follow the schema: the prompt it gets from a run ends with
    the protocol's output-format instruction, and the schema comes as the second argument."""
    seen: list[tuple[str, dict[str, Any]]] = []

    def judge(prompt: str, schema: dict[str, Any]) -> dict[str, Any]:
        seen.append((prompt, schema))
        return VERDICT

    rows = [
        {
            "id": "p0",
            "history": [
                {"role": "user", "content": "hello"},
                {"role": "assistant", "content": "hi"},
            ],
            "prompt": "What is 2 + 2?",
            "baseline_model_response": "5",
            "response": "4",
        }
    ]
    result = chatjudge.evaluate(
        rows, "pairwise-chat-quality", judge, tmp_path / "run", report=False
    )
    assert result.summary["n_ok"] == 1
    assert len(seen) == 2  # both presentation orders
    instruction = PROTOCOL.output_instruction
    assert instruction.strip()
    for prompt, schema in seen:
        assert prompt.endswith(instruction)
        assert prompt.count(instruction) == 1  # appended once, not again by the model
        assert "What is 2 + 2?" in prompt
        assert schema == PROTOCOL.verdict_schema


WEATHER_TOOLS = [{"type": "function", "function": {"name": "weather", "parameters": {}}}]
ASKED: list[Message] = [{"role": "user", "content": "Weather in Oslo?"}]


async def test_a_model_under_test_that_takes_tools_is_offered_them_and_calls_them() -> None:
    seen: list[Any] = []

    async def agent(messages: list[dict[str, Any]], tools: list[dict] | None = None) -> Reply:
        seen.append((messages, tools))
        if tools and messages[-1]["role"] != "tool":
            return Reply("", tool_calls=(ToolUse("c1", "weather", '{"city": "Oslo"}'),))
        return Reply(f"It is {messages[-1]['content']}.")

    model = get_model(agent, call_with="messages")
    assert isinstance(model, ToolFunctionModel) and model.supports_tools
    reply = await model.generate(ModelRequest(ASKED, tools=WEATHER_TOOLS))
    assert reply.tool_calls == (ToolUse("c1", "weather", '{"city": "Oslo"}'),)
    assert seen[-1] == (ASKED, WEATHER_TOOLS) and seen[-1][1] is not WEATHER_TOOLS  # a copy

    answered: list[Message] = [
        *ASKED,
        {"role": "assistant", "content": "", "tool_calls": [reply.tool_calls[0].as_openai()]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    ]
    final = await model.generate(ModelRequest(answered, tools=WEATHER_TOOLS))
    assert final == Reply("It is sunny.")
    assert seen[-1][0] == answered  # the calls and results, in OpenAI's format
    await model.generate(ModelRequest(ASKED))
    assert seen[-1] == (ASKED, None)  # no tools offered: the keyword keeps its default


@pytest.mark.parametrize("call_with", ["messages", "prompt"])
async def test_a_function_that_takes_no_tools_cannot_be_offered_them(call_with: str) -> None:
    calls: list[Any] = []
    model = get_model(lambda *args: calls.append(args) or "ok", call_with=call_with)
    assert type(model) is FunctionModel and not model.supports_tools
    with pytest.raises(UsageError, match="cannot call tools, and this request offers 1"):
        await model.generate(ModelRequest(ASKED, tools=WEATHER_TOOLS))
    assert calls == []  # refused before the function ran


def test_a_judge_function_is_never_offered_tools_even_with_kwargs() -> None:
    model = get_model(lambda prompt, **options: "ok")  # a judge: called fn(prompt)
    assert type(model) is FunctionModel and not model.supports_tools
    assert get_model(lambda messages, **options: "ok", call_with="messages").supports_tools
