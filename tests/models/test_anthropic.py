"""The Anthropic model over real HTTP: the official SDK against a stand-in Messages API.

What every provider does alike (verdicts, error statuses, keys, a missing SDK) is checked
in test_contract.py; here is what only Anthropic does: the forced tool, `system=`, the
options it cannot honour, and the SDK's own environment and timeout.
"""

from __future__ import annotations

import json

import pytest

from chatjudge.chat.types import GenerationSettings, Message, ModelRequest, OutputSchema
from chatjudge.errors import (
    BadRequestError,
    ModelError,
    ModelTimeoutError,
    RateLimitError,
    UsageError,
)
from chatjudge.models import check_options, get_model
from chatjudge.models.anthropic import AnthropicModel, tool_name
from chatjudge.options import ClientOptions, RunConfig
from chatjudge.protocols import get_protocol
from tests.models.conftest import REUSED_IDS, SENT_IDS, TWO_CALLS, WEATHER, Closing
from tests.support.stub_anthropic import AnthropicStub

PROTOCOL = get_protocol("interactivity-accuracy")
SCHEMA = OutputSchema(
    "interactivity accuracy.v2", PROTOCOL.verdict_schema, PROTOCOL.output_instruction
)
PROMPT = "Rate this chat. {not a placeholder}"
REQUEST = ModelRequest([{"role": "user", "content": PROMPT}], schema=SCHEMA)


def model_at(stub: AnthropicStub, **options: object) -> AnthropicModel:
    return AnthropicModel("claude-x", ClientOptions(base_url=stub.base_url, **options))


async def test_a_verdict_is_the_input_of_a_forced_tool(
    closing: Closing, anthropic_stub: AnthropicStub
) -> None:
    model = closing(model_at(anthropic_stub))
    reply = await model.generate(REQUEST)

    [sent] = anthropic_stub.requests
    assert sent.path == "/v1/messages"
    body = sent.body
    assert body["model"] == "claude-x"
    assert body["max_tokens"] == 1024
    assert body["messages"] == [{"role": "user", "content": PROMPT}]  # no instruction appended
    assert "system" not in body
    [tool] = body["tools"]
    assert tool["name"] == "interactivity_accuracy_v2"  # the schema's name, as the API allows
    assert tool["input_schema"] == PROTOCOL.verdict_schema
    assert body["tool_choice"] == {"type": "tool", "name": "interactivity_accuracy_v2"}
    assert "temperature" not in body and "seed" not in body  # API version 2026-10-21 refuses them

    tool_input = json.loads(reply.text)  # the tool input, as JSON text
    assert set(tool_input) == {"interactivity", "accuracy"}
    prompt_chars = len(json.dumps(body["messages"]))
    assert reply.input_tokens == prompt_chars // 4
    assert reply.output_tokens == len(reply.text) // 4


async def test_system_messages_go_as_system_and_turns_pass_through(
    closing: Closing, anthropic_stub: AnthropicStub
) -> None:
    messages: list[Message] = [
        {"role": "system", "content": "You are terse."},
        {"role": "system", "content": "Answer in French."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Bonjour."},
        {"role": "user", "content": "Capital of Italy?"},
    ]
    model = closing(model_at(anthropic_stub))
    reply = await model.generate(ModelRequest(messages))  # a model under test: no schema

    [sent] = anthropic_stub.requests
    assert sent.body["system"] == "You are terse.\n\nAnswer in French."
    assert sent.body["messages"] == messages[2:]
    assert "tools" not in sent.body and "tool_choice" not in sent.body
    assert reply.text == "Stub reply."


async def test_base_url_and_key_come_from_the_sdk_environment(
    closing: Closing, anthropic_stub: AnthropicStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic_stub.base_url)
    model = closing(get_model("anthropic/claude-x"))
    assert isinstance(model, AnthropicModel)
    assert model.name == "anthropic/claude-x"
    assert model.identity() == {
        "provider": "anthropic",
        "model": "claude-x",
        "base_url": anthropic_stub.base_url,
    }
    assert (model.supports_schema, model.needs_key, model.key_env_var) == (
        True,
        True,
        "ANTHROPIC_API_KEY",
    )
    await model.generate(REQUEST)
    assert len(anthropic_stub.requests) == 1


async def test_an_auth_token_is_credentials_too(
    closing: Closing, anthropic_stub: AnthropicStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", anthropic_stub.api_key)
    model = closing(
        get_model("anthropic/claude-x", ClientOptions(base_url=anthropic_stub.base_url))
    )
    assert model.credentials_found()
    await model.generate(REQUEST)
    assert (
        anthropic_stub.requests[-1].headers["Authorization"] == f"Bearer {anthropic_stub.api_key}"
    )


def test_temperature_and_seed_are_refused_max_tokens_and_one_base_url_taken(
    anthropic_stub: AnthropicStub,
) -> None:
    model = model_at(anthropic_stub)
    for option, flag in (("temperature", "--temperature"), ("seed", "--seed")):
        config = RunConfig.from_options({option: 1})
        with pytest.raises(UsageError, match=f"anthropic/claude-x cannot honour {flag}"):
            check_options([model], config)
    check_options([model], RunConfig.from_options({"max_tokens": 64, "base_url": "http://x"}))
    two = ClientOptions(base_url=(anthropic_stub.base_url, anthropic_stub.base_url))
    with pytest.raises(UsageError, match="anthropic models take one --base-url, not 2"):
        get_model("anthropic/claude-x", two)


async def test_max_tokens_is_sent(closing: Closing, anthropic_stub: AnthropicStub) -> None:
    model = closing(model_at(anthropic_stub))
    await model.generate(ModelRequest(REQUEST.messages, GenerationSettings(max_tokens=77), SCHEMA))
    assert anthropic_stub.requests[-1].body["max_tokens"] == 77


@pytest.mark.parametrize(
    ("status", "error_type", "expected", "retryable"),
    [
        (404, "not_found_error", BadRequestError, False),
        (413, "request_too_large", BadRequestError, False),
        (408, "timeout_error", ModelTimeoutError, True),
    ],
)
async def test_other_error_statuses_map_onto_chatjudge_errors(
    closing: Closing,
    anthropic_stub: AnthropicStub,
    status: int,
    error_type: str,
    expected: type[ModelError],
    retryable: bool,
) -> None:
    anthropic_stub.fail_next(status, error_type, f"stub says {error_type}", times=5)
    model = closing(model_at(anthropic_stub))
    with pytest.raises(expected) as info:
        await model.generate(REQUEST)
    assert type(info.value) is expected
    assert info.value.retryable is retryable
    assert info.value.status == status
    assert f"HTTP {status}: {error_type}: stub says {error_type}" in str(info.value)
    assert len(anthropic_stub.requests) == 1  # max_retries=0: the run engine owns retries


async def test_a_rate_limit_without_retry_after_leaves_the_wait_to_the_engine(
    closing: Closing, anthropic_stub: AnthropicStub
) -> None:
    anthropic_stub.fail_next(429, "rate_limit_error")  # anthropic-ratelimit-* headers only
    model = closing(model_at(anthropic_stub))
    with pytest.raises(RateLimitError) as info:
        await model.generate(REQUEST)
    assert info.value.retry_after is None


async def test_the_sdk_client_gets_the_timeout(
    closing: Closing, anthropic_stub: AnthropicStub
) -> None:
    anthropic_stub.delay = 5.0
    slow = closing(model_at(anthropic_stub, timeout=0.3))
    with pytest.raises(ModelTimeoutError) as info:
        await slow.generate(REQUEST)  # no policy around it: the SDK's own timeout fired
    assert info.value.retryable
    assert len(anthropic_stub.requests) == 1


async def test_a_reply_in_prose_is_kept_as_raw_text(
    closing: Closing, anthropic_stub: AnthropicStub
) -> None:
    anthropic_stub.reply_text = "I can't rate this conversation."
    model = closing(model_at(anthropic_stub))
    reply = await model.generate(REQUEST)
    assert reply.text == "I can't rate this conversation."


def test_tool_name_is_what_the_api_accepts() -> None:
    assert tool_name("interactivity_accuracy") == "interactivity_accuracy"
    assert tool_name("my verdict.v2") == "my_verdict_v2"
    assert tool_name("") == "verdict"
    assert len(tool_name("x" * 100)) == 64


async def test_tools_go_as_anthropic_tools_and_calls_and_results_as_blocks(
    closing: Closing, anthropic_stub: AnthropicStub
) -> None:
    model = closing(model_at(anthropic_stub))
    reply = await model.generate(ModelRequest(TWO_CALLS, tools=[WEATHER]))

    [sent] = anthropic_stub.requests  # a 400 had the stand-in found the API's rules broken
    body = sent.body
    assert body["tools"] == [
        {
            "name": "weather",
            "description": "Today's weather in a city.",
            "input_schema": WEATHER["function"]["parameters"],
        }
    ]
    assert "tool_choice" not in body  # offered, not forced
    assert body["system"] == "Use the tools."
    assert body["messages"] == [
        {"role": "user", "content": "Weather in Oslo and Rome?"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking both."},
                {"type": "tool_use", "id": "c1", "name": "weather", "input": {"city": "Oslo"}},
                {  # arguments that are not JSON, sent as recorded
                    "type": "tool_use",
                    "id": "c2",
                    "name": "weather",
                    "input": {"unparsed_arguments": "{city: Rome"},
                },
            ],
        },
        {  # both results in one user message, first, and the user's next words after them
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "c1", "content": "Sunny, 21 C"},
                {
                    "type": "tool_result",
                    "tool_use_id": "c2",
                    "content": '{"sky": "rain", "temp_c": 17}',
                },
                {"type": "text", "text": "And tomorrow?"},
            ],
        },
    ]
    (call,) = reply.tool_calls  # a new user turn: the stand-in calls again, with step 1
    assert call.id.startswith("toolu_stub") and call.name == "weather"
    assert json.loads(call.arguments) == {"query": "And tomorrow?", "step": 1}
    assert reply.text == ""


async def test_a_call_without_tool_results_after_it_is_refused_as_the_api_refuses_it(
    closing: Closing, anthropic_stub: AnthropicStub
) -> None:
    """The stand-in holds the API's rule, so the round trips above can fail."""
    model = closing(model_at(anthropic_stub))
    with pytest.raises(BadRequestError, match="without `tool_result` blocks"):
        await model.generate(ModelRequest(TWO_CALLS[:4], tools=[WEATHER]))  # c2 unanswered


async def test_a_verdict_request_keeps_its_forced_tool_and_reads_no_calls(
    closing: Closing, anthropic_stub: AnthropicStub
) -> None:
    model = closing(model_at(anthropic_stub))
    reply = await model.generate(REQUEST)
    assert reply.tool_calls == ()  # the verdict's tool input is the reply's text
    assert set(json.loads(reply.text)) == {"interactivity", "accuracy"}


async def test_ids_reused_or_missing_are_sent_as_ids_of_their_own(
    closing: Closing, anthropic_stub: AnthropicStub
) -> None:
    anthropic_stub.tool_steps = 4
    model = closing(model_at(anthropic_stub))
    await model.generate(ModelRequest(REUSED_IDS, tools=[WEATHER]))
    blocks = [b for m in anthropic_stub.requests[-1].body["messages"][1:] for b in m["content"]]
    assert [b["id"] for b in blocks if b["type"] == "tool_use"] == SENT_IDS
    assert [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"] == SENT_IDS
    assert [b["content"] for b in blocks if b["type"] == "tool_result"] == ["Sunny", "Rain", "Snow"]
