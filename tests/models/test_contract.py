"""The contract every HTTP model provider keeps, checked the same way for each over real HTTP.

One request gives a reply that parses into a verdict; a model under test offered tools
calls them, reads their results and answers from them; HTTP statuses become the same
chatjudge errors (the run engine's retry policy reads only those); a refused connection
and a hung server fail fast; a missing key stops `get_model` before any request; the key
never shows in logs, errors or the cache identity; a missing SDK names its `pip install`.

Each stand-in server injects faults its own way: a small `Served` adapter per provider
hides that, so every check below is written once.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest

from chatjudge.calls.policy import CallPolicy, RetryConfig
from chatjudge.chat.types import GenerationSettings, Message, ModelRequest, OutputSchema
from chatjudge.errors import (
    AuthError,
    BadRequestError,
    ModelConnectionError,
    ModelError,
    ModelTimeoutError,
    RateLimitError,
    ServerError,
    UsageError,
)
from chatjudge.models import Model, get_model
from chatjudge.options import ClientOptions
from chatjudge.protocols import get_protocol
from chatjudge.verdicts.parse import parse_verdict
from tests.models.conftest import (
    ANTHROPIC_KEY,
    GOOGLE_KEY,
    OPENAI_KEY,
    WEATHER,
    Closing,
    closed_port,
)
from tests.support.stub_anthropic import AnthropicStub
from tests.support.stub_faults import FAULT_MESSAGES
from tests.support.stub_google import GoogleStub
from tests.support.stub_openai import StubServer

PROTOCOL = get_protocol("interactivity-accuracy")
SCHEMA = OutputSchema(
    "interactivity_accuracy", PROTOCOL.verdict_schema, PROTOCOL.output_instruction
)
REQUEST = ModelRequest(
    [{"role": "user", "content": "Rate this chat for Interactivity. {not a placeholder}"}],
    GenerationSettings(max_tokens=512),
    SCHEMA,
)
PROVIDERS = ("openai", "anthropic", "google")


class Served(ABC):
    """One provider's stand-in server, as the contract checks see it."""

    spec: ClassVar[str]  # what `get_model` is given
    key_env: ClassVar[str]
    sdk_logger: ClassVar[str | None] = None  # the SDK's logger, which logs every request

    def __init__(self, stub: Any, key: str) -> None:
        self.stub = stub
        self.key = key  # the key the stand-in accepts, set in `key_env`

    def client(self) -> ClientOptions:
        """Client options that reach the stand-in."""
        return ClientOptions(base_url=self.stub.base_url)

    def keyless_client(self) -> ClientOptions:
        """Client options under which this provider needs a key."""
        return self.client()

    @abstractmethod
    def requests(self) -> int:
        """How many model requests the stand-in received."""

    @abstractmethod
    def last_headers(self) -> dict[str, str]:
        """The HTTP headers of the last request."""

    @abstractmethod
    def fail(self, status: int, *, retry_after: int | None = None) -> str:
        """Answer every following request with `status`; returns text the error must carry."""

    @abstractmethod
    def hang(self, seconds: float) -> None:
        """Answer every following request only after `seconds`."""


class OpenAIServed(Served):
    spec = "openai/stub"
    key_env = "OPENAI_API_KEY"
    stub: StubServer

    def keyless_client(self) -> ClientOptions:
        return ClientOptions()  # api.openai.com: a server of one's own needs no key

    def requests(self) -> int:
        return self.stub.stats.requests

    def last_headers(self) -> dict[str, str]:
        last = self.stub.stats.last_request
        assert last is not None
        return last["headers"]

    def fail(self, status: int, *, retry_after: int | None = None) -> str:
        if retry_after is not None:
            self.stub.configure(retry_after=retry_after)
        self.stub.configure(fault_rate=1.0, fault_kinds=[str(status)], faulty_attempts=None)
        return "Rate limit reached" if status == 429 else FAULT_MESSAGES[str(status)]

    def hang(self, seconds: float) -> None:
        self.stub.configure(latency=seconds)


class AnthropicServed(Served):
    spec = "anthropic/claude-x"
    key_env = "ANTHROPIC_API_KEY"
    sdk_logger = "anthropic"
    stub: AnthropicStub
    ERROR_TYPES = {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        429: "rate_limit_error",
        500: "api_error",
        503: "api_error",
        529: "overloaded_error",
    }

    def requests(self) -> int:
        return len(self.stub.requests)

    def last_headers(self) -> dict[str, str]:
        return self.stub.requests[-1].headers

    def fail(self, status: int, *, retry_after: int | None = None) -> str:
        error_type = self.ERROR_TYPES[status]
        message = f"stub says {error_type}"
        after = None if retry_after is None else str(retry_after)
        self.stub.fail_next(status, error_type, message, retry_after=after, times=5)
        return f"{error_type}: {message}"

    def hang(self, seconds: float) -> None:
        self.stub.delay = seconds


class GoogleServed(Served):
    spec = "google/gemini-x"
    key_env = "GEMINI_API_KEY"
    sdk_logger = "google_genai"
    stub: GoogleStub

    def requests(self) -> int:
        return len(self.stub.requests)

    def last_headers(self) -> dict[str, str]:
        return self.stub.requests[-1].headers

    def fail(self, status: int, *, retry_after: int | None = None) -> str:
        headers = {} if retry_after is None else {"retry-after": str(retry_after)}
        message = f"stub says {status}"
        self.stub.fail_next(status, message, headers=headers, times=5)
        return message

    def hang(self, seconds: float) -> None:
        self.stub.delay = seconds


ADAPTERS: dict[str, tuple[type[Served], str]] = {  # provider -> (adapter, key)
    "openai": (OpenAIServed, OPENAI_KEY),
    "anthropic": (AnthropicServed, ANTHROPIC_KEY),
    "google": (GoogleServed, GOOGLE_KEY),
}


@pytest.fixture(params=PROVIDERS)
def served(request: pytest.FixtureRequest) -> Served:
    """Each provider's stand-in server in turn (param: the provider name)."""
    adapter, key = ADAPTERS[request.param]
    return adapter(request.getfixturevalue(f"{request.param}_stub"), key)


@dataclass(frozen=True)
class Expected:
    status: int
    error: type[ModelError]
    retryable: bool
    fatal: bool = False


STATUSES = [
    Expected(429, RateLimitError, True),
    Expected(500, ServerError, True),
    Expected(503, ServerError, True),
    Expected(401, AuthError, False, fatal=True),
    Expected(403, AuthError, False, fatal=True),
    Expected(400, BadRequestError, False),
]
EXTRA_STATUSES = {"anthropic": [Expected(529, ServerError, True)]}  # Anthropic's overloaded
STATUS_CASES = [
    pytest.param(provider, case, id=f"{provider}-{case.status}")
    for provider in PROVIDERS
    for case in STATUSES + EXTRA_STATUSES.get(provider, [])
]


async def test_a_request_gets_a_reply_holding_a_valid_verdict(
    served: Served, closing: Closing
) -> None:
    model = closing(get_model(served.spec, served.client()))
    assert isinstance(model, Model) and model.name == served.spec
    assert model.supports_schema and model.key_env_var == served.key_env

    reply = await model.generate(REQUEST)

    assert served.requests() == 1
    verdict = parse_verdict(reply.text, PROTOCOL)  # raises VerdictError if invalid
    assert set(verdict.scores) == {"interactivity", "accuracy"}
    assert reply.input_tokens and reply.input_tokens > 0
    assert reply.output_tokens and reply.output_tokens > 0


async def test_a_model_offered_tools_calls_them_and_answers_from_their_results(
    served: Served, closing: Closing
) -> None:
    """Two calls in sequence, each answered, then a text: the stand-ins understand each
    provider's own format only, and refuse calls and results that break its rules."""
    model = closing(get_model(served.spec, served.client()))
    assert model.supports_tools
    messages: list[Message] = [
        {"role": "system", "content": "Use the tools."},
        {"role": "user", "content": "Weather in Oslo?"},
    ]
    for step in (1, 2):
        reply = await model.generate(ModelRequest(messages, tools=[WEATHER]))
        (call,) = reply.tool_calls
        assert call.name == "weather"
        assert json.loads(call.arguments) == {"query": "Weather in Oslo?", "step": step}
        messages += [
            {"role": "assistant", "content": reply.text, "tool_calls": [call.as_openai()]},
            {"role": "tool", "tool_call_id": call.id, "content": f"Sunny, {20 + step} C"},
        ]
    final = await model.generate(ModelRequest(messages, tools=[WEATHER]))

    assert final.tool_calls == ()
    assert final.text == "From the tool: Sunny, 21 C | Sunny, 22 C"
    assert len({m.get("tool_call_id") for m in messages if m["role"] == "tool"}) == 2
    assert served.requests() == 3


@pytest.mark.parametrize(("served", "case"), STATUS_CASES, indirect=["served"])
async def test_http_statuses_map_onto_chatjudge_errors_in_one_attempt(
    served: Served, closing: Closing, case: Expected
) -> None:
    model = closing(get_model(served.spec, served.client()))
    text = served.fail(case.status)
    with pytest.raises(case.error) as info:
        await model.generate(REQUEST)
    error = info.value
    assert type(error) is case.error
    assert (error.retryable, error.fatal, error.status) == (case.retryable, case.fatal, case.status)
    assert text in str(error)
    assert served.requests() == 1  # no retry of its own: the run engine owns retries


async def test_a_rate_limit_carries_the_servers_retry_after(
    served: Served, closing: Closing
) -> None:
    model = closing(get_model(served.spec, served.client()))
    served.fail(429, retry_after=7)
    with pytest.raises(RateLimitError) as info:
        await model.generate(REQUEST)
    assert info.value.retry_after == 7.0


async def test_a_refused_connection_fails_fast_and_is_retryable(
    served: Served, closing: Closing
) -> None:
    model = closing(
        get_model(served.spec, ClientOptions(base_url=f"http://127.0.0.1:{closed_port()}"))
    )
    start = time.perf_counter()
    with pytest.raises(ModelConnectionError) as info:
        await model.generate(REQUEST)
    assert info.value.retryable and not info.value.fatal
    assert time.perf_counter() - start < 1.5  # no reconnect sleeps of an SDK's own
    assert served.requests() == 0


async def test_a_hung_server_times_out_under_the_run_policy(
    served: Served, closing: Closing
) -> None:
    model = closing(get_model(served.spec, served.client()))
    served.hang(5.0)
    policy = CallPolicy(RetryConfig(max_retries=0, timeout=0.3))
    start = time.perf_counter()
    with pytest.raises(ModelTimeoutError) as info:
        await policy.call(lambda: model.generate(REQUEST))
    assert info.value.retryable
    assert time.perf_counter() - start < 2.0
    assert served.requests() == 1


async def test_the_key_is_sent_but_never_logged_nor_in_errors_or_identity(
    served: Served, closing: Closing, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    model = closing(get_model(served.spec, served.client()))
    await model.generate(REQUEST)
    assert served.key in " ".join(served.last_headers().values())  # it was really sent
    served.fail(401)
    with pytest.raises(AuthError) as info:
        await model.generate(REQUEST)
    assert served.requests() == 2
    if served.sdk_logger:  # the SDK did log the calls (aiohttp, for openai, logs nothing)
        assert any(r.name.startswith(served.sdk_logger) for r in caplog.records)
    assert served.key not in caplog.text
    assert served.key not in str(info.value) and served.key not in repr(info.value.args)
    assert served.key not in json.dumps(model.identity())


async def test_a_missing_key_is_an_auth_error_from_get_model_before_any_request(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(served.key_env)
    with pytest.raises(AuthError, match=f"^{served.key_env} is not set: ") as info:
        get_model(served.spec, served.keyless_client())
    assert info.value.fatal
    assert served.requests() == 0


@pytest.mark.parametrize(
    ("spec", "module", "extra"),
    [
        ("anthropic/claude-x", "anthropic", "anthropic"),
        ("google/gemini-x", "google.genai", "google"),
    ],
    ids=["anthropic", "google"],
)
def test_a_missing_sdk_says_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch, spec: str, module: str, extra: str
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # import fails as if not installed
    with pytest.raises(UsageError, match=rf"pip install 'chatjudge\[{extra}\]'"):
        get_model(spec, ClientOptions(base_url="http://127.0.0.1:9"))
