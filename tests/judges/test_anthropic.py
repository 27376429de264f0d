"""The Anthropic judge over real HTTP: the official SDK against a stand-in Messages API."""

from __future__ import annotations

import json
import logging
import socket
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from chatjudge.errors import (
    AuthError,
    BadRequestError,
    JudgeConnectionError,
    JudgeError,
    JudgeTimeoutError,
    RateLimitError,
    ServerError,
    UsageError,
)
from chatjudge.judges import Judge, get_judge
from chatjudge.judges.anthropic import AnthropicJudge, tool_name
from chatjudge.protocols import get_protocol
from chatjudge.types import JudgeRequest
from chatjudge.verdicts.parse import parse_verdict
from tests.support.stub_anthropic import AnthropicStub

PROTOCOL = get_protocol("interactivity-accuracy")
REQUEST = JudgeRequest(
    prompt="Rate this chat. {not a placeholder}",
    schema=PROTOCOL.verdict_schema,
    schema_name="interactivity_accuracy",
    instruction=PROTOCOL.output_instruction,
)
ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_PROFILE",
    "ANTHROPIC_FEDERATION_RULE_ID",
    "ANTHROPIC_IDENTITY_TOKEN",
    "ANTHROPIC_CUSTOM_HEADERS",
)


Closing = Callable[[Judge], Any]


@pytest.fixture
async def closing() -> AsyncIterator[Closing]:
    """Close every judge a test opens (its HTTP connections) when the test ends."""
    opened: list[Judge] = []

    def keep(judge: Judge) -> Any:
        opened.append(judge)
        return judge

    yield keep
    for judge in opened:
        await judge.aclose()


@pytest.fixture
async def stub(monkeypatch: pytest.MonkeyPatch, tmp_path) -> AsyncIterator[AnthropicStub]:
    """The stand-in server, with the SDK's environment cleared and its key set."""
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("ANTHROPIC_CONFIG_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no credentials profile from the real home
    async with AnthropicStub(api_key="sk-ant-test-0123456789") as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", server.api_key)
        yield server


async def test_request_carries_prompt_forced_tool_and_key(
    closing: Closing, stub: AnthropicStub
) -> None:
    judge = closing(AnthropicJudge("claude-x", base_url=stub.base_url))
    reply = await judge.generate(REQUEST)

    [sent] = stub.requests
    assert sent.path == "/v1/messages"
    body = sent.body
    assert body["model"] == "claude-x"
    assert body["max_tokens"] == 1024
    assert body["messages"] == [{"role": "user", "content": REQUEST.prompt}]
    [tool] = body["tools"]
    assert tool["name"] == "interactivity_accuracy"
    assert tool["input_schema"] == PROTOCOL.verdict_schema
    assert body["tool_choice"] == {"type": "tool", "name": "interactivity_accuracy"}
    assert "temperature" not in body  # API version 2026-10-21 refuses sampling parameters
    keys = {sent.headers.get("x-api-key"), sent.headers.get("Authorization")}
    assert keys & {stub.api_key, f"Bearer {stub.api_key}"}

    verdict = parse_verdict(reply.text, PROTOCOL)  # the tool input, as JSON text
    assert set(verdict.scores) == {"interactivity", "accuracy"}
    prompt_chars = len(json.dumps(body["messages"]))
    assert reply.input_tokens == prompt_chars // 4
    assert reply.output_tokens == len(reply.text) // 4


async def test_base_url_and_key_come_from_the_sdk_environment(
    closing: Closing, stub: AnthropicStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", stub.base_url)
    judge = closing(get_judge("anthropic/claude-x"))
    assert isinstance(judge, AnthropicJudge)
    assert judge.name == "anthropic/claude-x"
    assert judge.identity() == {
        "provider": "anthropic",
        "model": "claude-x",
        "base_url": stub.base_url,
    }
    assert (judge.supports_schema, judge.needs_key, judge.key_env_var) == (
        True,
        True,
        "ANTHROPIC_API_KEY",
    )
    await judge.generate(REQUEST)
    assert len(stub.requests) == 1


async def test_key_is_never_logged_nor_in_errors_or_identity(
    closing: Closing, stub: AnthropicStub, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    judge = closing(AnthropicJudge("claude-x", base_url=stub.base_url))
    await judge.generate(REQUEST)
    stub.fail_next(401, "authentication_error", "invalid x-api-key")
    with pytest.raises(AuthError) as info:
        await judge.generate(REQUEST)
    assert len(stub.requests) == 2 and caplog.records  # the SDK did log the calls
    assert stub.api_key not in caplog.text
    assert stub.api_key not in str(info.value)
    assert stub.api_key not in json.dumps(judge.identity())


async def test_missing_key_is_an_auth_error_before_any_call(
    stub: AnthropicStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(AuthError, match="ANTHROPIC_API_KEY is not set") as info:
        AnthropicJudge("claude-x", base_url=stub.base_url)
    assert info.value.fatal
    assert stub.requests == []


async def test_rejected_key_is_fatal(
    closing: Closing, stub: AnthropicStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-wrong")
    judge = closing(AnthropicJudge("claude-x", base_url=stub.base_url))
    with pytest.raises(AuthError, match="HTTP 401: authentication_error") as info:
        await judge.generate(REQUEST)
    assert info.value.fatal and not info.value.retryable


@pytest.mark.parametrize(
    ("status", "error_type", "expected", "retryable"),
    [
        (429, "rate_limit_error", RateLimitError, True),
        (529, "overloaded_error", ServerError, True),
        (500, "api_error", ServerError, True),
        (503, "api_error", ServerError, True),
        (403, "permission_error", AuthError, False),
        (400, "invalid_request_error", BadRequestError, False),
        (404, "not_found_error", BadRequestError, False),
        (413, "request_too_large", BadRequestError, False),
        (408, "timeout_error", JudgeTimeoutError, True),
    ],
)
async def test_error_statuses_map_onto_chatjudge_errors_without_sdk_retries(
    closing: Closing,
    stub: AnthropicStub,
    status: int,
    error_type: str,
    expected: type[JudgeError],
    retryable: bool,
) -> None:
    stub.fail_next(status, error_type, f"stub says {error_type}", times=5)
    judge = closing(AnthropicJudge("claude-x", base_url=stub.base_url))
    with pytest.raises(expected) as info:
        await judge.generate(REQUEST)
    assert type(info.value) is expected
    assert info.value.retryable is retryable
    assert info.value.status == status
    assert f"{error_type}: stub says {error_type}" in str(info.value)
    assert len(stub.requests) == 1  # max_retries=0: the run engine owns retries


async def test_rate_limit_carries_retry_after(closing: Closing, stub: AnthropicStub) -> None:
    stub.fail_next(
        429, "rate_limit_error", "Number of requests has exceeded your rate limit", retry_after="7"
    )
    judge = closing(AnthropicJudge("claude-x", base_url=stub.base_url))
    with pytest.raises(RateLimitError) as info:
        await judge.generate(REQUEST)
    assert info.value.retry_after == 7.0
    stub.fail_next(429, "rate_limit_error")  # no retry-after header: the engine decides
    with pytest.raises(RateLimitError) as info:
        await judge.generate(REQUEST)
    assert info.value.retry_after is None


async def test_timeout_and_refused_connection(closing: Closing, stub: AnthropicStub) -> None:
    stub.delay = 5.0
    slow = closing(AnthropicJudge("claude-x", base_url=stub.base_url, timeout=0.3))
    with pytest.raises(JudgeTimeoutError):
        await slow.generate(REQUEST)
    assert len(stub.requests) == 1

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    closed = closing(AnthropicJudge("claude-x", base_url=f"http://127.0.0.1:{port}"))
    with pytest.raises(JudgeConnectionError) as info:
        await closed.generate(REQUEST)
    assert info.value.retryable


async def test_a_reply_in_prose_is_kept_as_raw_text(closing: Closing, stub: AnthropicStub) -> None:
    stub.reply_text = "I can't rate this conversation."
    judge = closing(AnthropicJudge("claude-x", base_url=stub.base_url))
    reply = await judge.generate(REQUEST)
    assert reply.text == "I can't rate this conversation."


def test_tool_name_is_what_the_api_accepts() -> None:
    assert tool_name("interactivity_accuracy") == "interactivity_accuracy"
    assert tool_name("my verdict.v2") == "my_verdict_v2"
    assert tool_name("") == "verdict"
    assert len(tool_name("x" * 100)) == 64


def test_missing_sdk_says_which_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)
    with pytest.raises(UsageError, match=r"pip install 'chatjudge\[anthropic\]'"):
        get_judge("anthropic/claude-x")
