"""The OpenAI model over real HTTP against the stand-in chat-completions server.

What every provider does alike (verdicts, the common error statuses, keys never shown) is
checked in test_contract.py; here is what only the OpenAI wire format does: the request
body, the `response_format` fallback for servers that refuse it, several replicas, which
base URLs need a key, and its own error details.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from typing import Any

import pytest

from chatjudge.chat.types import GenerationSettings, Message, ModelRequest, OutputSchema
from chatjudge.errors import (
    AuthError,
    BadRequestError,
    ModelConnectionError,
    RateLimitError,
    ServerError,
    UsageError,
)
from chatjudge.models import get_model
from chatjudge.models.openai import OpenAIModel
from chatjudge.options import ClientOptions
from chatjudge.protocols import get_protocol
from chatjudge.verdicts.parse import parse_verdict
from tests.models.conftest import OPENAI_KEY, REUSED_IDS, SENT_IDS, WEATHER, Closing
from tests.support.stub_openai import StubServer

PROTOCOL = get_protocol("pairwise-chat-quality")
SCHEMA = OutputSchema("pairwise_chat_quality", PROTOCOL.verdict_schema, PROTOCOL.output_instruction)
INSTRUCTION = PROTOCOL.output_instruction
PROMPT = "Compare Response A and Response B."
JSON_SCHEMA_FORMAT = {
    "type": "json_schema",
    "json_schema": {
        "name": "pairwise_chat_quality",
        "schema": PROTOCOL.verdict_schema,
        "strict": True,
    },
}
JSON_OBJECT_FORMAT = {"type": "json_object", "schema": PROTOCOL.verdict_schema}
CONVERSATION: list[Message] = [
    {"role": "system", "content": "You are a careful judge."},
    {"role": "user", "content": PROMPT},
    {"role": "assistant", "content": "Which criteria should I use?"},
    {"role": "user", "content": "Helpfulness. Response B is longer."},
]


def judge_request(
    messages: list[Message] | None = None, settings: GenerationSettings | None = None
) -> ModelRequest:
    return ModelRequest(
        messages or [{"role": "user", "content": PROMPT}], settings or GenerationSettings(), SCHEMA
    )


def model_at(*stubs: StubServer) -> OpenAIModel:
    return OpenAIModel("gpt-x", ClientOptions(base_url=tuple(s.base_url for s in stubs)))


def sent(stub: StubServer) -> list[dict[str, Any]]:
    """The bodies the stub received, oldest first."""
    return [r["body"] for r in stub.stats.recorded]


async def test_request_body_carries_model_settings_and_the_json_schema(
    closing: Closing, openai_stub: StubServer
) -> None:
    model = closing(model_at(openai_stub))
    settings = GenerationSettings(temperature=0.3, max_tokens=200)
    reply = await model.generate(judge_request(settings=settings))

    last = openai_stub.stats.last_request
    assert last is not None and last["path"] == "/v1/chat/completions"
    assert last["body"] == {  # whole: no `seed` when none is set, nothing else either
        "model": "gpt-x",
        "temperature": 0.3,
        "max_tokens": 200,
        "response_format": JSON_SCHEMA_FORMAT,
        "messages": [{"role": "user", "content": PROMPT}],  # no instruction: the schema is sent
    }
    assert parse_verdict(reply.text, PROTOCOL).label in ("A", "SAME", "B")
    assert reply.input_tokens == len(PROMPT) // 4
    assert reply.output_tokens == len(reply.text) // 4

    await model.generate(judge_request(settings=GenerationSettings(seed=5)))
    body = sent(openai_stub)[-1]
    assert (body["seed"], body["temperature"], body["max_tokens"]) == (5, 0.0, 1024)


async def test_system_and_multi_turn_messages_pass_through_unchanged(
    closing: Closing, openai_stub: StubServer
) -> None:
    model = closing(model_at(openai_stub))
    await model.generate(judge_request(CONVERSATION))
    assert sent(openai_stub)[-1]["messages"] == CONVERSATION


async def test_a_model_under_test_request_sends_no_response_format(
    closing: Closing, openai_stub: StubServer
) -> None:
    chat: list[Message] = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Capital of Italy?"},
    ]
    model = closing(model_at(openai_stub))
    reply = await model.generate(ModelRequest(chat))
    body = sent(openai_stub)[-1]
    assert "response_format" not in body
    assert body["messages"] == chat  # and no instruction: there is no schema to describe
    assert reply.text.startswith("Stub reply")  # the stub's plain answer to a plain prompt


async def test_a_refused_json_schema_falls_back_to_json_object_and_is_remembered(
    closing: Closing, openai_stub: StubServer
) -> None:
    openai_stub.configure(reject_format_types=("json_schema",))  # as llama-cpp-python's server
    model = closing(model_at(openai_stub))
    reply = await model.generate(judge_request(CONVERSATION))

    refused, accepted = sent(openai_stub)
    assert refused["response_format"] == JSON_SCHEMA_FORMAT
    assert refused["messages"] == CONVERSATION
    assert accepted["response_format"] == JSON_OBJECT_FORMAT
    assert accepted["messages"][:3] == CONVERSATION[:3]  # the instruction goes to the last user
    assert accepted["messages"][3] == {
        "role": "user",
        "content": CONVERSATION[3]["content"] + INSTRUCTION,
    }
    assert parse_verdict(reply.text, PROTOCOL).label in ("A", "SAME", "B")
    assert openai_stub.stats.rejected["response_format"] == 1

    await model.generate(judge_request())  # remembered: straight to json_object
    [again] = sent(openai_stub)[2:]
    assert again["response_format"] == JSON_OBJECT_FORMAT
    assert again["messages"] == [{"role": "user", "content": PROMPT + INSTRUCTION}]
    await model.generate(ModelRequest([{"role": "user", "content": PROMPT}]))  # no schema
    plain = sent(openai_stub)[-1]
    assert "response_format" not in plain and plain["messages"][0]["content"] == PROMPT
    assert openai_stub.stats.rejected["response_format"] == 1


async def test_a_server_refusing_every_response_format_gets_the_instruction_only(
    closing: Closing, openai_stub: StubServer
) -> None:
    openai_stub.configure(reject_response_format=True)
    model = closing(model_at(openai_stub))
    reply = await model.generate(judge_request())

    first, second, third = sent(openai_stub)
    assert first["response_format"] == JSON_SCHEMA_FORMAT
    assert second["response_format"] == JSON_OBJECT_FORMAT
    assert "response_format" not in third
    assert third["messages"] == [{"role": "user", "content": PROMPT + INSTRUCTION}]
    assert parse_verdict(reply.text, PROTOCOL).label in ("A", "SAME", "B")

    await model.generate(judge_request())  # remembered: one request, instruction only
    [again] = sent(openai_stub)[3:]
    assert "response_format" not in again
    assert again["messages"][0]["content"].endswith(INSTRUCTION)
    assert openai_stub.stats.rejected["response_format"] == 2


async def test_other_bad_requests_keep_the_json_schema(
    closing: Closing, openai_stub: StubServer
) -> None:
    openai_stub.configure(permanent={"BAD": "400"})
    model = closing(model_at(openai_stub))
    with pytest.raises(BadRequestError, match="HTTP 400: Invalid value for 'max_tokens'"):
        await model.generate(judge_request([{"role": "user", "content": "BAD " + PROMPT}]))
    assert len(sent(openai_stub)) == 1  # not taken for a refused response_format
    await model.generate(judge_request())
    assert sent(openai_stub)[-1]["response_format"] == JSON_SCHEMA_FORMAT


async def test_calls_spread_over_base_urls_evenly(
    closing: Closing, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    async with StubServer(latency=0.05) as a, StubServer(latency=0.05) as b:
        model = closing(model_at(a, b))
        await asyncio.gather(*(model.generate(judge_request()) for _ in range(20)))
        assert (a.stats.requests, b.stats.requests) == (10, 10)


async def test_a_call_goes_to_the_base_url_with_the_fewest_calls_in_flight(
    closing: Closing, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    async with StubServer(latency=5.0) as slow, StubServer() as fast:
        model = closing(model_at(slow, fast))
        held = asyncio.create_task(model.generate(judge_request()))  # the first goes to `slow`
        while slow.stats.in_flight == 0:
            await asyncio.sleep(0.01)
        for _ in range(4):  # taking turns would send two of these to the busy one
            await model.generate(judge_request())
        assert (slow.stats.requests, fast.stats.requests) == (1, 4)
        held.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await held


@pytest.mark.parametrize("url", ["localhost:8000/v1", "ftp://127.0.0.1/v1", "127.0.0.1:8000"])
def test_a_base_url_that_is_not_http_is_a_usage_error(url: str) -> None:
    with pytest.raises(UsageError, match="--base-url must start with http:// or https://"):
        get_model("openai/gpt-x", ClientOptions(base_url=url))
    ok = ClientOptions(base_url=("http://127.0.0.1:8000/v1", url))
    with pytest.raises(UsageError, match=re.escape(repr(url))):
        OpenAIModel("gpt-x", ok)  # every URL is checked, not the first only


def test_only_openais_own_api_needs_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(AuthError, match="^OPENAI_API_KEY is not set: export it, or use --base-url"):
        get_model("openai/gpt-x")
    with pytest.raises(AuthError, match="OPENAI_API_KEY is not set"):  # among replicas too
        get_model(
            "openai/gpt-x",
            ClientOptions(base_url=("http://127.0.0.1:8000/v1", "https://api.openai.com/v1/")),
        )

    local = get_model("openai/my-model", ClientOptions(base_url="http://127.0.0.1:8000/v1"))
    assert local.needs_key is False and local.name == "openai/my-model"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8001/v1/")
    from_env = get_model("openai/my-model")
    assert from_env.needs_key is False
    assert from_env.identity()["base_urls"] == ["http://127.0.0.1:8001/v1"]

    monkeypatch.delenv("OPENAI_BASE_URL")
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    official = get_model("openai/gpt-x")
    assert official.needs_key is True and official.credentials_found()
    assert official.identity() == {
        "provider": "openai",
        "model": "gpt-x",
        "base_urls": ["https://api.openai.com/v1"],
    }


def test_identity_names_the_base_urls_sorted_and_without_trailing_slashes() -> None:
    model = OpenAIModel(
        "gpt-x", ClientOptions(base_url=("http://b.internal:8000/v1/", "http://a.internal:8000/v1"))
    )
    assert model.identity()["base_urls"] == [
        "http://a.internal:8000/v1",
        "http://b.internal:8000/v1",
    ]
    assert model.base_urls == ["http://b.internal:8000/v1", "http://a.internal:8000/v1"]


async def test_the_key_goes_as_a_bearer_token_and_a_wrong_one_is_fatal(
    closing: Closing, openai_stub: StubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = closing(model_at(openai_stub))
    await model.generate(judge_request())
    last = openai_stub.stats.last_request
    assert last is not None and last["headers"]["Authorization"] == f"Bearer {OPENAI_KEY}"

    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-key-9876")
    wrong = closing(model_at(openai_stub))
    with pytest.raises(
        AuthError, match=r"HTTP 401: Incorrect API key provided: sk-\*\*\*9876"
    ) as info:
        await wrong.generate(judge_request())
    assert info.value.fatal and info.value.status == 401


async def test_no_authorization_header_without_a_key(
    closing: Closing, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    async with StubServer(record=True) as stub:
        model = closing(model_at(stub))
        await model.generate(judge_request())
        last = stub.stats.last_request
        assert last is not None and "Authorization" not in last["headers"]


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        (("Retry-After", "retry-after-ms"), 2.5),
        (("Retry-After",), 2.5),
        (("retry-after-ms",), 2.5),
        ((), None),
    ],
    ids=["both", "seconds", "milliseconds", "none"],
)
async def test_a_rate_limit_reads_retry_after_in_seconds_or_milliseconds(
    closing: Closing, openai_stub: StubServer, headers: tuple[str, ...], expected: float | None
) -> None:
    openai_stub.configure(permanent={"LIMIT": "429"}, retry_after=2.5, retry_after_headers=headers)
    model = closing(model_at(openai_stub))
    with pytest.raises(RateLimitError) as info:
        await model.generate(judge_request([{"role": "user", "content": "LIMIT " + PROMPT}]))
    assert info.value.retry_after == expected
    assert info.value.status == 429 and info.value.retryable
    assert "HTTP 429: Rate limit reached for requests" in str(info.value)  # the body's message


async def test_a_malformed_200_body_is_a_server_error(
    closing: Closing, openai_stub: StubServer
) -> None:
    openai_stub.configure(permanent={"GARBLED": "garbled"})
    model = closing(model_at(openai_stub))
    with pytest.raises(ServerError, match="malformed chat-completions response: b'<html>") as info:
        await model.generate(judge_request([{"role": "user", "content": "GARBLED " + PROMPT}]))
    assert info.value.retryable


async def test_a_reply_without_a_verdict_is_a_reply_not_an_error(
    closing: Closing, openai_stub: StubServer
) -> None:
    openai_stub.configure(permanent={"PROSE": "malformed"})
    model = closing(model_at(openai_stub))
    reply = await model.generate(judge_request([{"role": "user", "content": "PROSE " + PROMPT}]))
    assert reply.text == "I'm sorry, I can't rate this conversation."  # the runner's to judge


async def test_a_reset_connection_is_a_connection_error(
    closing: Closing, openai_stub: StubServer
) -> None:
    openai_stub.configure(permanent={"RESET": "reset"})
    model = closing(model_at(openai_stub))
    with pytest.raises(ModelConnectionError) as info:
        await model.generate(judge_request([{"role": "user", "content": "RESET " + PROMPT}]))
    assert info.value.retryable
    reply = await model.generate(judge_request())  # the next call gets a new connection
    assert parse_verdict(reply.text, PROTOCOL).label in ("A", "SAME", "B")


async def test_tools_are_offered_as_sent_and_the_reply_s_calls_come_back(
    closing: Closing, openai_stub: StubServer
) -> None:
    openai_stub.configure(record=True, tool_steps=1)
    model = closing(model_at(openai_stub))
    asked: list[Message] = [{"role": "user", "content": "Weather in Oslo?"}]
    reply = await model.generate(ModelRequest(asked, tools=[WEATHER]))

    assert sent(openai_stub)[-1]["tools"] == [WEATHER]
    (call,) = reply.tool_calls
    assert call.name == "weather" and json.loads(call.arguments)["step"] == 1
    assert reply.text == ""
    answered: list[Message] = [
        *asked,
        {"role": "assistant", "content": "", "tool_calls": [call.as_openai()]},
        {"role": "tool", "tool_call_id": call.id, "content": "Sunny, 21 C"},
    ]
    final = await model.generate(ModelRequest(answered, tools=[WEATHER]))
    assert sent(openai_stub)[-1]["messages"] == answered  # OpenAI's own format, unchanged
    assert final.tool_calls == () and "Sunny, 21 C" in final.text
    plain = await model.generate(ModelRequest(asked))
    assert "tools" not in sent(openai_stub)[-1] and plain.tool_calls == ()


@pytest.mark.parametrize(
    "call",
    [
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": {"a": 1}}},
        {"id": "c", "type": "function", "function": {"name": "f"}},
    ],
)
def test_arguments_sent_as_an_object_or_left_out_read_as_json_text(call: dict) -> None:
    from chatjudge.models.openai import _reply

    body = {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [call]}}]}
    (use,) = _reply(json.dumps(body).encode()).tool_calls
    assert json.loads(use.arguments) == call["function"].get("arguments", {})


def test_a_call_without_a_name_is_a_malformed_reply() -> None:
    from chatjudge.models.openai import _reply

    body = {"choices": [{"message": {"content": None, "tool_calls": [{"id": "c"}]}}]}
    with pytest.raises(ServerError, match="malformed tool_calls"):
        _reply(json.dumps(body).encode())


async def test_the_official_client_and_chatjudge_speak_the_same_tool_calling_wire(
    closing: Closing, openai_stub: StubServer
) -> None:
    """The stand-in's tool calls are the real wire format (the official `openai` client
    parses them into its own types), chatjudge sends a tool-calling conversation as that
    client does, and reads the same reply into the same calls."""
    import openai

    openai_stub.configure(record=True, tool_steps=1)
    client = openai.AsyncOpenAI(base_url=openai_stub.base_url, api_key=OPENAI_KEY, max_retries=0)
    model = closing(model_at(openai_stub))
    asked: list[Any] = [{"role": "user", "content": "Weather in Oslo?"}]
    try:
        official = await client.chat.completions.create(
            model="gpt-x", messages=asked, tools=[WEATHER]
        )
        choice = official.choices[0]
        assert choice.finish_reason == "tool_calls"
        (official_call,) = choice.message.tool_calls or []
        assert official_call.type == "function"
        ours = await model.generate(ModelRequest(asked, tools=[WEATHER]))
        (call,) = ours.tool_calls
        assert (call.id, call.name, call.arguments) == (
            official_call.id,
            official_call.function.name,
            official_call.function.arguments,
        )

        # The assistant message as the official client's users send it back, then the result.
        answered = [
            *asked,
            choice.message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": official_call.id, "content": "Sunny, 21 C"},
        ]
        final = await client.chat.completions.create(
            model="gpt-x", messages=answered, tools=[WEATHER]
        )
        ours_answered: list[Message] = [
            *asked,
            {"role": "assistant", "content": "", "tool_calls": [call.as_openai()]},
            {"role": "tool", "tool_call_id": call.id, "content": "Sunny, 21 C"},
        ]
        our_final = await model.generate(ModelRequest(ours_answered, tools=[WEATHER]))
    finally:
        await client.close()

    official_body, our_body = sent(openai_stub)[-2:]
    assert our_body["tools"] == official_body["tools"] == [WEATHER]
    # The same calls, results and order; the official client leaves out empty content
    # where chatjudge sends "" (both are valid), and `model_dump` keeps the role it read.
    for theirs, mine in zip(official_body["messages"], our_body["messages"], strict=True):
        assert {k: v for k, v in theirs.items() if k != "content"} == {
            k: v for k, v in mine.items() if k != "content"
        }
        assert (theirs.get("content") or "") == mine["content"]
    assert final.choices[0].message.content == our_final.text == "From the tool: Sunny, 21 C"
    assert final.choices[0].message.tool_calls is None and our_final.tool_calls == ()


async def test_ids_reused_or_missing_are_sent_as_ids_of_their_own(
    closing: Closing, openai_stub: StubServer
) -> None:
    openai_stub.configure(record=True, tool_steps=4)
    model = closing(model_at(openai_stub))
    await model.generate(ModelRequest(REUSED_IDS, tools=[WEATHER]))
    messages = sent(openai_stub)[-1]["messages"]
    assert [c["id"] for m in messages for c in m.get("tool_calls", ())] == SENT_IDS
    assert [m["tool_call_id"] for m in messages if m["role"] == "tool"] == SENT_IDS
    assert [m["content"] for m in messages[2::2]] == ["Sunny", "Rain", "Snow"]
