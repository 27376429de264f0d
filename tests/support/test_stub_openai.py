"""The stand-in OpenAI server itself: replies, faults, counts and process mode, over real HTTP."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.support.stub_openai import StubServer
from tests.support.stub_replies import (
    INTERACTIVITY_ACCURACY_SCHEMA,
    PAIRWISE_SCHEMA,
    expected_reply,
    prompt_hash,
)

ROOT = Path(__file__).resolve().parents[2]


def chat_body(prompt: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "stub", "messages": [{"role": "user", "content": prompt}]}
    if schema is not None:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "verdict", "schema": schema, "strict": True},
        }
    return body


@pytest.fixture
async def stub() -> AsyncIterator[StubServer]:
    async with StubServer() as server:
        yield server


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as client:
        yield client


async def post(
    session: aiohttp.ClientSession, stub: StubServer, body: dict[str, Any], **kwargs: Any
) -> tuple[int, dict[str, Any], Any]:
    async with session.post(f"{stub.base_url}/chat/completions", json=body, **kwargs) as r:
        return r.status, dict(r.headers), await r.json()


async def test_reply_is_a_pure_function_of_the_prompt(stub, session):
    first = await post(
        session, stub, chat_body("Interactivity case 1", INTERACTIVITY_ACCURACY_SCHEMA)
    )
    again = await post(
        session, stub, chat_body("Interactivity case 1", INTERACTIVITY_ACCURACY_SCHEMA)
    )
    status, _, reply = first
    content = reply["choices"][0]["message"]["content"]
    assert status == 200 and again[2]["choices"][0]["message"]["content"] == content
    assert content == expected_reply("Interactivity case 1", INTERACTIVITY_ACCURACY_SCHEMA)
    verdict = json.loads(content)
    assert verdict["interactivity"]["score"] in (1, 2, 3)
    assert verdict["accuracy"]["score"] in (0, 1)
    assert isinstance(verdict["interactivity"]["thought"], str)
    assert reply["object"] == "chat.completion" and reply["id"].startswith("chatcmpl-")
    assert reply["choices"][0]["finish_reason"] == "stop"
    assert reply["usage"]["prompt_tokens"] == len("Interactivity case 1") // 4
    assert reply["usage"]["total_tokens"] == (
        reply["usage"]["prompt_tokens"] + reply["usage"]["completion_tokens"]
    )
    # Different prompts get different verdicts across a handful of tries.
    scores = {
        json.loads(expected_reply(f"Interactivity {i}"))["interactivity"]["score"]
        for i in range(30)
    }
    assert scores == {1, 2, 3}


async def test_protocol_is_recognised_without_a_schema(stub, session):
    _, _, reply = await post(session, stub, chat_body("### Response A\nx\n### Response B\ny"))
    verdict = json.loads(reply["choices"][0]["message"]["content"])
    assert set(verdict) == {"explanation", "pairwise_choice"}
    assert verdict["pairwise_choice"] in ("A", "SAME", "B")
    _, _, reply = await post(session, stub, chat_body("Interactivity: rate it"))
    assert set(json.loads(reply["choices"][0]["message"]["content"])) == {
        "interactivity",
        "accuracy",
    }


async def test_any_schema_gets_a_valid_instance(stub, session):
    schema = {
        "type": "object",
        "properties": {
            "label": {"type": "string", "enum": ["good", "bad"]},
            "n": {"type": "integer", "minimum": 5, "maximum": 7},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2},
            "ok": {"type": "boolean"},
        },
    }
    _, _, reply = await post(session, stub, chat_body("anything", schema))
    data = json.loads(reply["choices"][0]["message"]["content"])
    assert data["label"] in ("good", "bad") and 5 <= data["n"] <= 7
    assert len(data["tags"]) == 2 and isinstance(data["ok"], bool)


async def test_429_has_retry_after_and_openai_error_body(stub, session):
    stub.configure(fault_rate=1.0, fault_kinds=["429"], retry_after=2, faulty_attempts=1)
    status, headers, body = await post(session, stub, chat_body("rate me"))
    assert status == 429 and headers["Retry-After"] == "2"
    assert body["error"]["code"] == "rate_limit_exceeded"
    assert set(body["error"]) == {"message", "type", "param", "code"}
    status, _, _ = await post(session, stub, chat_body("rate me"))  # attempt 2 is past the cap
    assert status == 200
    assert stub.stats.faults["429"] == 1 and stub.stats.sends_of("rate me") == 2


@pytest.mark.parametrize("kind", ["500", "503"])
async def test_server_errors(stub, session, kind):
    stub.configure(fault_rate=1.0, fault_kinds=[kind])
    status, _, body = await post(session, stub, chat_body("boom"))
    assert status == int(kind) and body["error"]["type"] == "server_error"


async def test_reset_closes_the_connection(stub, session):
    stub.configure(fault_rate=1.0, fault_kinds=["reset"])
    with pytest.raises(aiohttp.ClientConnectionError):
        await post(session, stub, chat_body("reset me"))
    await asyncio.sleep(0.05)
    assert stub.stats.faults["reset"] == 1 and stub.stats.in_flight == 0


async def test_hang_outlasts_a_short_client_timeout(stub, session):
    stub.configure(fault_rate=1.0, fault_kinds=["hang"])
    with pytest.raises(asyncio.TimeoutError):
        await post(session, stub, chat_body("hang"), timeout=aiohttp.ClientTimeout(total=0.2))
    await asyncio.sleep(0.05)
    assert stub.stats.faults["hang"] == 1 and stub.stats.in_flight == 0  # handler was cancelled


async def test_malformed_and_truncated_are_200_without_a_verdict(stub, session):
    stub.configure(fault_rate=1.0, fault_kinds=["malformed"])
    status, _, reply = await post(session, stub, chat_body("Interactivity A"))
    assert status == 200
    with pytest.raises(ValueError):
        json.loads(reply["choices"][0]["message"]["content"])
    stub.configure(fault_kinds=["truncated"])
    status, _, reply = await post(session, stub, chat_body("Interactivity B"))
    content = reply["choices"][0]["message"]["content"]
    assert status == 200 and reply["choices"][0]["finish_reason"] == "length"
    assert expected_reply("Interactivity B").startswith(content)
    with pytest.raises(ValueError):
        json.loads(content)
    assert stub.stats.replies == 0


async def test_permanent_fault_for_marked_prompts(stub, session):
    stub.configure(permanent={"POISON": "500"})
    statuses = [(await post(session, stub, chat_body("a POISON b")))[0] for _ in range(4)]
    assert statuses == [500] * 4
    assert (await post(session, stub, chat_body("clean")))[0] == 200


async def test_fault_rate_is_deterministic_per_prompt_and_attempt():
    async def faulted(seed: int) -> list[bool]:
        server = StubServer(fault_rate=0.5, fault_kinds=["500"], seed=seed)
        async with server, aiohttp.ClientSession() as client:
            return [(await post(client, server, chat_body(f"p{i}")))[0] == 500 for i in range(60)]

    first, again, other = await faulted(0), await faulted(0), await faulted(1)
    assert first == again and first != other
    assert 15 <= sum(first) <= 45


async def test_response_format_rejection(stub, session):
    stub.configure(reject_response_format=True)
    status, _, body = await post(session, stub, chat_body("x", PAIRWISE_SCHEMA))
    assert status == 400 and body["error"]["param"] == "response_format"
    assert (await post(session, stub, chat_body("x")))[0] == 200
    assert stub.stats.rejected["response_format"] == 1


async def test_api_key_is_required_when_set(stub, session):
    stub.configure(api_key="sk-right")
    status, _, body = await post(session, stub, chat_body("x"))
    assert status == 401 and body["error"]["type"] == "invalid_request_error"
    wrong = {"Authorization": "Bearer sk-wrong"}
    status, _, body = await post(session, stub, chat_body("x"), headers=wrong)
    assert status == 401 and body["error"]["code"] == "invalid_api_key"
    right = {"Authorization": "Bearer sk-right"}
    assert (await post(session, stub, chat_body("x"), headers=right))[0] == 200


async def test_counts_concurrency_and_control_api(stub, session):
    stub.configure(latency=0.2, record=True)
    prompts = [f"prompt {i}" for i in range(20)] + ["prompt 0"]
    await asyncio.gather(*(post(session, stub, chat_body(p)) for p in prompts))
    stats = stub.stats
    assert stats.requests == 21 and stats.replies == 21 and stats.max_in_flight == 21
    assert stats.sends_of("prompt 0") == 2 and stats.sends_of("prompt 7") == 1
    assert stats.distinct_prompts == 20 and stats.max_sends == 2
    assert stats.last_request is not None and stats.last_request["body"]["model"] == "stub"
    async with session.get(f"{stub.url}/_stats", params={"prompts": "1"}) as r:
        over_http = await r.json()
    assert over_http["resent_prompts"] == 1
    # the span the client kept the server busy: all 21 requests overlap in one 0.2 s wait
    busy = over_http["last_reply_at"] - over_http["first_request_at"]
    assert 0.2 <= busy < 1.0
    assert over_http["prompts"][f"{prompt_hash('prompt 0'):016x}"] == {"sends": 2, "answers": 2}
    async with session.post(f"{stub.url}/_control", json={"latency": 0, "reset_stats": True}) as r:
        assert r.status == 200 and (await r.json())["latency"] == 0
    assert stub.stats.requests == 0 and stub.config.latency == 0
    assert stub.stats.first_request_at is None and stub.stats.last_reply_at is None
    async with session.post(f"{stub.url}/_control", json={"no_such_option": 1}) as r:
        assert r.status == 400


async def test_models_endpoint(stub, session):
    async with session.get(f"{stub.base_url}/models") as r:
        body = await r.json()
    assert body["object"] == "list" and body["data"][0]["id"] == "stub"


def test_thread_mode_serves_blocking_callers():
    with StubServer() as server:
        request = urllib.request.Request(
            f"{server.base_url}/chat/completions",
            data=json.dumps(chat_body("Interactivity sync")).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=5) as r:
            reply = json.load(r)
        assert server.stats.requests == 1
    assert reply["choices"][0]["message"]["content"] == expected_reply("Interactivity sync")


def test_process_mode_prints_its_url_and_serves():
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.stub_openai", "--port", "0", "--latency", "0.01"],
        stdout=subprocess.PIPE,
        cwd=ROOT,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        request = urllib.request.Request(
            f"{url}/chat/completions",
            data=json.dumps(chat_body("Interactivity proc")).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=5) as r:
            assert json.load(r)["choices"][0]["message"]["content"] == expected_reply(
                "Interactivity proc"
            )
        with urllib.request.urlopen(url.removesuffix("/v1") + "/_stats", timeout=5) as r:
            assert json.load(r)["requests"] == 1
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
