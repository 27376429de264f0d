"""The Google judge over real HTTP: `google-genai` against a stand-in Gemini / Vertex AI.

Vertex AI with a project runs on application default credentials: a service-account key
file generated here, whose `token_uri` is the stand-in's OAuth endpoint, so the SDK signs
and exchanges a real JWT offline.
"""

from __future__ import annotations

import json
import logging
import socket
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

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
from chatjudge.judges.google import GoogleJudge
from chatjudge.protocols import get_protocol
from chatjudge.types import GenerationSettings, JudgeRequest
from chatjudge.verdicts.parse import parse_verdict
from tests.support.stub_google import ACCESS_TOKEN, GoogleStub

PROTOCOL = get_protocol("pairwise-chat-quality")
REQUEST = JudgeRequest(
    prompt="Compare Response A and Response B. {not a placeholder}",
    schema=PROTOCOL.verdict_schema,
    schema_name="pairwise_chat_quality",
    instruction=PROTOCOL.output_instruction,
    settings=GenerationSettings(temperature=0.0, max_tokens=512, seed=7),
)
ENV = (
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
RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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
async def stub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> AsyncIterator[GoogleStub]:
    """The stand-in server; the SDK's environment cleared and a Gemini API key set."""
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))  # no gcloud ADC
    monkeypatch.setenv("GCE_METADATA_HOST", f"127.0.0.1:{closed_port()}")  # not on GCE
    monkeypatch.setenv("GCE_METADATA_IP", f"127.0.0.1:{closed_port()}")
    async with GoogleStub(api_key="AIza-test-0123456789") as server:
        monkeypatch.setenv("GEMINI_API_KEY", server.api_key)
        yield server


@pytest.fixture
def service_account(stub: GoogleStub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Vertex AI mode with a project, location and a service-account ADC file."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    path = tmp_path / "adc.json"
    path.write_text(
        json.dumps(
            {
                "type": "service_account",
                "project_id": "proj-1",
                "private_key_id": "k1",
                "private_key": pem,
                "client_email": "judge@proj-1.iam.gserviceaccount.com",
                "client_id": "1",
                "token_uri": f"{stub.base_url}/token",
            }
        )
    )
    monkeypatch.delenv("GEMINI_API_KEY")
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "proj-1")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
    return path


async def test_gemini_api_request_carries_prompt_schema_settings_and_key(
    closing: Closing,
    stub: GoogleStub,
) -> None:
    judge = closing(GoogleJudge("gemini-x", base_url=stub.base_url))
    reply = await judge.generate(REQUEST)

    [sent] = stub.requests
    assert sent.model == "gemini-x" and sent.project is None
    assert sent.path == f"/{sent.version}/models/gemini-x:generateContent"
    assert sent.headers["x-goog-api-key"] == stub.api_key
    assert sent.body["contents"] == [{"role": "user", "parts": [{"text": REQUEST.prompt}]}]
    config = sent.body["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"] == PROTOCOL.verdict_schema  # additionalProperties kept
    assert (config["temperature"], config["maxOutputTokens"], config["seed"]) == (0.0, 512, 7)

    verdict = parse_verdict(reply.text, PROTOCOL)
    assert verdict.label in ("A", "SAME", "B")
    assert reply.input_tokens == len(json.dumps(sent.body["contents"])) // 4
    assert reply.output_tokens == len(reply.text) // 4 + 5  # candidates + thoughts


async def test_google_api_key_and_identity(
    closing: Closing, stub: GoogleStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GEMINI_API_KEY")
    monkeypatch.setenv("GOOGLE_API_KEY", stub.api_key)
    judge = closing(get_judge("google/gemini-x", base_urls=[stub.base_url]))
    assert isinstance(judge, GoogleJudge)
    assert judge.name == "google/gemini-x"
    assert judge.identity() == {
        "provider": "google",
        "model": "gemini-x",
        "backend": "gemini-api",
        "base_url": stub.base_url,
    }
    assert (judge.supports_schema, judge.needs_key) == (True, True)
    await judge.generate(REQUEST)
    assert stub.requests[-1].headers["x-goog-api-key"] == stub.api_key


async def test_vertex_express_mode_uses_the_api_key(
    closing: Closing, stub: GoogleStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    judge = closing(GoogleJudge("gemini-x", base_url=stub.base_url))
    assert judge.identity()["backend"] == "vertex-ai"
    reply = await judge.generate(REQUEST)
    [sent] = stub.requests
    assert sent.path == "/v1beta1/publishers/google/models/gemini-x:generateContent"
    assert sent.headers["x-goog-api-key"] == stub.api_key
    assert sent.body["generationConfig"]["responseJsonSchema"] == PROTOCOL.verdict_schema
    parse_verdict(reply.text, PROTOCOL)


async def test_vertex_with_project_uses_its_path_and_default_credentials(
    closing: Closing, stub: GoogleStub, service_account: Path
) -> None:
    judge = closing(GoogleJudge("gemini-x", base_url=stub.base_url))
    reply = await judge.generate(REQUEST)
    await judge.generate(REQUEST)

    first, second = stub.requests
    assert first.path == (
        "/v1beta1/projects/proj-1/locations/us-central1/publishers/google/"
        "models/gemini-x:generateContent"
    )
    assert first.headers["Authorization"] == f"Bearer {ACCESS_TOKEN}"
    assert "x-goog-api-key" not in first.headers
    assert second.headers["Authorization"] == f"Bearer {ACCESS_TOKEN}"
    [token_request] = stub.token_requests  # one JWT exchange, the token reused
    assert token_request["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    parse_verdict(reply.text, PROTOCOL)


async def test_key_is_never_logged_nor_in_errors_or_identity(
    closing: Closing, stub: GoogleStub, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    judge = closing(GoogleJudge("gemini-x", base_url=stub.base_url))
    await judge.generate(REQUEST)
    stub.fail_next(403, "Permission denied on resource project proj-1.")
    with pytest.raises(AuthError) as info:
        await judge.generate(REQUEST)
    assert len(stub.requests) == 2
    assert stub.api_key not in caplog.text
    assert stub.api_key not in str(info.value)
    assert stub.api_key not in json.dumps(judge.identity())


async def test_no_credentials_is_an_auth_error_before_any_call(
    stub: GoogleStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GEMINI_API_KEY")
    with pytest.raises(AuthError, match="GEMINI_API_KEY") as info:
        GoogleJudge("gemini-x", base_url=stub.base_url)
    assert info.value.fatal
    assert stub.requests == []


async def test_vertex_without_default_credentials_is_fatal(
    closing: Closing, stub: GoogleStub, service_account: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_GCE_CHECK", "true")
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS")
    judge = closing(GoogleJudge("gemini-x", base_url=stub.base_url))
    with pytest.raises(AuthError, match="credentials") as info:
        await judge.generate(REQUEST)
    assert info.value.fatal
    assert stub.requests == []


async def test_a_rejected_api_key_is_fatal(
    closing: Closing, stub: GoogleStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-wrong")
    judge = closing(GoogleJudge("gemini-x", base_url=stub.base_url))
    with pytest.raises(AuthError, match="API key not valid") as info:  # a 400, by its reason
        await judge.generate(REQUEST)
    assert info.value.fatal and info.value.status == 400


@pytest.mark.parametrize(
    ("code", "status", "expected", "retryable"),
    [
        (429, "RESOURCE_EXHAUSTED", RateLimitError, True),
        (503, "UNAVAILABLE", ServerError, True),
        (500, "INTERNAL", ServerError, True),
        (504, "DEADLINE_EXCEEDED", ServerError, True),
        (401, "UNAUTHENTICATED", AuthError, False),
        (403, "PERMISSION_DENIED", AuthError, False),
        (400, "INVALID_ARGUMENT", BadRequestError, False),
        (404, "NOT_FOUND", BadRequestError, False),
    ],
)
async def test_error_statuses_map_onto_chatjudge_errors_without_sdk_retries(
    closing: Closing,
    stub: GoogleStub,
    code: int,
    status: str,
    expected: type[JudgeError],
    retryable: bool,
) -> None:
    stub.fail_next(code, f"stub says {status}", status=status, times=5)
    judge = closing(GoogleJudge("gemini-x", base_url=stub.base_url))
    with pytest.raises(expected) as info:
        await judge.generate(REQUEST)
    assert type(info.value) is expected
    assert info.value.retryable is retryable
    assert info.value.status == code
    assert f"{code} {status}: stub says {status}" in str(info.value)
    assert len(stub.requests) == 1  # one attempt: the run engine owns retries


async def test_rate_limit_delay_from_retry_info_else_header(
    closing: Closing, stub: GoogleStub
) -> None:
    judge = closing(GoogleJudge("gemini-x", base_url=stub.base_url))
    stub.fail_next(
        429,
        "Resource has been exhausted (e.g. check quota).",
        details=[
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []},
            {"@type": RETRY_INFO, "retryDelay": "7s"},
        ],
        headers={"retry-after": "30"},
    )
    with pytest.raises(RateLimitError) as info:
        await judge.generate(REQUEST)
    assert info.value.retry_after == 7.0

    stub.fail_next(429, "Quota exceeded.", headers={"retry-after": "3"})
    with pytest.raises(RateLimitError) as info:
        await judge.generate(REQUEST)
    assert info.value.retry_after == 3.0

    stub.fail_next(429, "Quota exceeded.")
    with pytest.raises(RateLimitError) as info:
        await judge.generate(REQUEST)
    assert info.value.retry_after is None


async def test_timeout_and_refused_connection_fail_fast(closing: Closing, stub: GoogleStub) -> None:
    stub.delay = 5.0
    slow = closing(GoogleJudge("gemini-x", base_url=stub.base_url, timeout=0.3))
    start = time.perf_counter()
    with pytest.raises(JudgeTimeoutError):
        await slow.generate(REQUEST)
    assert len(stub.requests) == 1

    closed = closing(GoogleJudge("gemini-x", base_url=f"http://127.0.0.1:{closed_port()}"))
    with pytest.raises(JudgeConnectionError) as info:
        await closed.generate(REQUEST)
    assert info.value.retryable
    # the SDK's own reconnect (a 1-10 s sleep) is off along with its retries
    assert time.perf_counter() - start < 1.5


async def test_a_blocked_prompt_is_a_bad_request(closing: Closing, stub: GoogleStub) -> None:
    stub.blocked = "PROHIBITED_CONTENT"
    judge = closing(GoogleJudge("gemini-x", base_url=stub.base_url))
    with pytest.raises(BadRequestError, match="PROHIBITED_CONTENT"):
        await judge.generate(REQUEST)


def test_missing_sdk_says_which_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "google.genai", None)
    with pytest.raises(UsageError, match=r"pip install 'chatjudge\[google\]'"):
        get_judge("google/gemini-x")
