"""Stand-in provider servers on loopback, each with its SDK's environment cleared and a key set,
and a fixture that closes the models a test opens."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TypeVar

import pytest

from chatjudge.chat.types import Message, ToolUse
from chatjudge.models import Model
from tests.support.stub_anthropic import AnthropicStub
from tests.support.stub_google import GoogleStub
from tests.support.stub_openai import StubServer

M = TypeVar("M", bound=Model)
WEATHER = {  # a tool definition in OpenAI's format, as rows and `ModelRequest.tools` hold it
    "type": "function",
    "function": {
        "name": "weather",
        "description": "Today's weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
# Two calls in one step (the second's arguments not JSON, as production models emit), their
# results, then the user's next words: each provider's own format must hold all of it.
TWO_CALLS: list[Message] = [
    {"role": "system", "content": "Use the tools."},
    {"role": "user", "content": "Weather in Oslo and Rome?"},
    {
        "role": "assistant",
        "content": "Checking both.",
        "tool_calls": [
            ToolUse("c1", "weather", '{"city": "Oslo"}').as_openai(),
            ToolUse("c2", "weather", "{city: Rome").as_openai(),
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "Sunny, 21 C"},
    {"role": "tool", "tool_call_id": "c2", "content": '{"sky": "rain", "temp_c": 17}'},
    {"role": "user", "content": "And tomorrow?"},
]
# Ids as recordings and servers write them: `c1` reused in a later step, then none (""):
# sent with ids of their own, each result with its call's (`chatjudge.chat.toolcalls.call_ids`).
REUSED_IDS: list[Message] = [
    {"role": "user", "content": "Weather in Oslo, Rome and Paris?"},
    *(
        message
        for ident, city, result in (
            ("c1", "Oslo", "Sunny"),
            ("c1", "Rome", "Rain"),
            ("", "Paris", "Snow"),
        )
        for message in (
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [ToolUse(ident, "weather", f'{{"city": "{city}"}}').as_openai()],
            },
            {"role": "tool", "tool_call_id": ident, "content": result},
        )
    ),
]
SENT_IDS = ["c1", "call_2", "call_3"]  # the calls' ids as sent, and their results'
Closing = Callable[[M], M]

OPENAI_KEY = "sk-test-openai-0123456789"
ANTHROPIC_KEY = "sk-ant-test-0123456789"
GOOGLE_KEY = "AIza-test-0123456789"
ANTHROPIC_ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_PROFILE",
    "ANTHROPIC_FEDERATION_RULE_ID",
    "ANTHROPIC_IDENTITY_TOKEN",
    "ANTHROPIC_CUSTOM_HEADERS",
    "ANTHROPIC_CONFIG_DIR",
)
GOOGLE_ENV = (
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_GENAI_USE_ENTERPRISE",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GOOGLE_GEMINI_BASE_URL",
    "GOOGLE_VERTEX_BASE_URL",
    "GOOGLE_GENAI_API_VERSION",
)


def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
async def closing() -> AsyncIterator[Closing]:
    """Close every model a test opens (its HTTP connections) when the test ends."""
    opened: list[Model] = []

    def keep(model: M) -> M:
        opened.append(model)
        return model

    yield keep
    for model in opened:
        await model.aclose()


@pytest.fixture
async def openai_stub(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[StubServer]:
    """The stand-in chat-completions server, recording requests and requiring the key."""
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    async with StubServer(api_key=OPENAI_KEY, record=True, retry_after=0.1) as server:
        yield server


@pytest.fixture
async def anthropic_stub(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> AsyncIterator[AnthropicStub]:
    """The stand-in Messages API, with the SDK's environment cleared and its key set."""
    for name in ANTHROPIC_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no credentials profile from the real home
    async with AnthropicStub(api_key=ANTHROPIC_KEY) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", server.api_key)
        yield server


@pytest.fixture
async def google_stub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> AsyncIterator[GoogleStub]:
    """The stand-in Gemini API; the SDK's environment cleared and a Gemini API key set."""
    for name in GOOGLE_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))  # no gcloud ADC
    monkeypatch.setenv("GCE_METADATA_HOST", f"127.0.0.1:{closed_port()}")  # not on GCE
    monkeypatch.setenv("GCE_METADATA_IP", f"127.0.0.1:{closed_port()}")
    async with GoogleStub(api_key=GOOGLE_KEY) as server:
        monkeypatch.setenv("GEMINI_API_KEY", server.api_key)
        yield server
