"""The embedded model with real llama.cpp and the real SmolLM2 model, and the llama.cpp server."""

from __future__ import annotations

import asyncio
import json
import re
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from chatjudge.chat.types import GenerationSettings, Message, ModelRequest, OutputSchema
from chatjudge.errors import BadRequestError, ModelLoadError, UsageError
from chatjudge.models import check_options, get_model
from chatjudge.models.llama_worker import MAX_STRING_CHARS, bounded_schema
from chatjudge.models.local import (
    DEFAULT_MODEL_FILE,
    LocalModel,
    default_layout,
    default_model_path,
)
from chatjudge.options import ClientOptions, RunConfig
from chatjudge.protocols import Protocol, get_protocol
from chatjudge.verdicts import parse_verdict
from tests.support.llama_server import LlamaServer

SETTINGS = GenerationSettings(temperature=0.0, max_tokens=300, seed=0)

FIELDS = {
    "interactivity-accuracy": {
        "chat_history": (
            "**user**: I'm planning a trip to Japan next spring.\n"
            "**assistant**: Great choice! Spring is cherry blossom season. "
            "Which cities are you considering?"
        ),
        "chat": (
            "**user**: Mostly Tokyo. By the way, what's the capital of Japan again?\n"
            "**assistant**: Do you mean the current capital or the historical one? "
            "Kyoto was the capital for over a thousand years.\n"
            "**user**: The current one.\n"
            "**assistant**: The current capital of Japan is Tokyo, which is also where "
            "you're headed. Would you like tips for the cherry blossom spots there?"
        ),
        "question": "What is the capital of Japan?",
        "answer": "Tokyo",
    },
    "pairwise-chat-quality": {
        "history": (
            "**user**: Can you help me write a short birthday message for my sister?\n"
            "**assistant**: Of course! How old is she turning, and what tone do you want: "
            "funny, heartfelt, or both?\n"
            "**user**: She's turning 30 and loves hiking. Heartfelt, please."
        ),
        "prompt": "**user**: Make it two sentences and mention the mountains.",
        "baseline_model_response": "Happy birthday! Have a great day.",
        "response": (
            "Happy 30th birthday to the sister who taught me that every summit is worth the "
            "climb! May this new decade bring you endless trails and mountain views as "
            "breathtaking as you are."
        ),
    },
}


def request_for(protocol: Protocol, prompt: str | None = None) -> ModelRequest:
    content = prompt or protocol.parsed_template.render(FIELDS[protocol.name])
    schema = OutputSchema(protocol.name, protocol.verdict_schema, protocol.output_instruction)
    return ModelRequest([{"role": "user", "content": content}], SETTINGS, schema)


def local_model(path: str = "", workers: int | None = None) -> LocalModel:
    return LocalModel(path, ClientOptions(local_workers=workers))


# The model's worker processes belong to one event loop: the tests that share it share a loop.
SHARED_LOOP = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def judge() -> AsyncIterator[LocalModel]:
    """One model for the module, so it loads once per worker."""
    model = local_model()
    yield model
    await model.aclose()


@SHARED_LOOP
@pytest.mark.parametrize("name", ["interactivity-accuracy", "pairwise-chat-quality"])
async def test_judges_builtin_protocol_into_valid_verdict(judge: LocalModel, name: str) -> None:
    protocol = get_protocol(name)
    reply = await judge.generate(request_for(protocol))
    verdict = parse_verdict(reply.text, protocol)  # raises VerdictError if invalid
    assert set(verdict.scores) == set(protocol.score_names)
    for spec in protocol.scores:
        assert spec.min <= verdict.scores[spec.name] <= spec.max
    assert reply.input_tokens and reply.input_tokens > 500  # the whole template was read
    assert reply.output_tokens and 0 < reply.output_tokens < SETTINGS.max_tokens


@SHARED_LOOP
async def test_prompt_longer_than_context_is_bad_request(judge: LocalModel) -> None:
    protocol = get_protocol("pairwise-chat-quality")
    too_long = "The assistant answered politely. " * 3000
    with pytest.raises(BadRequestError, match=r"prompt has \d+ tokens.*window is 8192") as exc:
        await judge.generate(request_for(protocol, too_long))
    assert not exc.value.retryable
    reply = await judge.generate(request_for(protocol, "Is 'Paris' a good answer? Reply A or B."))
    assert parse_verdict(reply.text, protocol).label in {"A", "SAME", "B"}  # judge still works


async def test_a_request_offering_tools_is_refused_before_the_model_runs() -> None:
    """SmolLM2 cannot call tools: set-up refuses it for rows with tools, and a request
    with tools that reaches it anyway is an error, never a reply made without them."""
    model = local_model(workers=1)
    assert not model.supports_tools
    messages: list[Message] = [{"role": "user", "content": "Weather in Oslo?"}]
    tools = [{"type": "function", "function": {"name": "weather"}}]
    try:
        with pytest.raises(UsageError, match="^local cannot call tools, and this request offers 1"):
            await model.generate(ModelRequest(messages, SETTINGS, tools=tools))
        assert model.pool.pids == []  # no llama.cpp process was started
    finally:
        await model.aclose()


async def test_call_after_a_timed_out_call_waits_for_the_model() -> None:
    """A runner timeout cancels the coroutine, not the worker still running the model: the
    next call waits for that worker, and the cancelled call's reply is dropped, not given to it."""
    protocol = get_protocol("pairwise-chat-quality")
    judge = local_model(workers=1)
    try:
        short = request_for(protocol, "Response A: 'Paris'. Response B: 'Lyon'. Which is right?")
        expected = (await judge.generate(short)).text
        # ~150 prompt tokens: over a second of llama.cpp, far past the timeout (not the
        # whole template, whose ~1,000 tokens would cost 10 s of CPU for nothing)
        slow = request_for(protocol, "Which reply is kinder, A or B? " * 20)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(judge.generate(slow), timeout=0.2)
        assert judge.pool.busy_pids  # the worker is still judging the cancelled request
        assert (await judge.generate(short)).text == expected
    finally:
        await judge.aclose()


def test_missing_model_file_is_usage_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.gguf"
    with pytest.raises(UsageError, match=re.escape(str(missing))):
        get_model(f"local/{missing}")


async def test_unloadable_gguf_is_fatal(tmp_path: Path) -> None:
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"GGUF" + b"\0" * 64)
    protocol = get_protocol("pairwise-chat-quality")
    judge = local_model(str(junk), workers=1)
    try:
        with pytest.raises(ModelLoadError, match="junk.gguf") as exc:
            await judge.generate(request_for(protocol, "A or B?"))
        assert exc.value.fatal
    finally:
        await judge.aclose()


def test_default_layout_is_one_single_threaded_worker_per_core_up_to_four() -> None:
    assert default_layout(1) == (1, 1)
    assert default_layout(2) == (2, 1)
    assert default_layout(4) == (4, 1)
    assert default_layout(16) == (4, 4)
    model = local_model(workers=3)
    assert (model.workers, model.threads, model.max_concurrency) == (3, 1, 6)
    auto = local_model()
    assert (auto.workers, auto.threads) == default_layout()


def test_local_workers_is_a_local_option_and_base_url_is_refused() -> None:
    model = local_model()
    check_options([model], RunConfig.from_options({"local_workers": 2, "seed": 1}))
    python = get_model(lambda prompt: "x")
    with pytest.raises(UsageError, match="--local-workers applies to none of the judges given"):
        check_options([python], RunConfig.from_options({"local_workers": 2}))
    with pytest.raises(UsageError, match="local models take no --base-url"):
        get_model("local", ClientOptions(base_url="http://127.0.0.1:9/v1"))


def test_bounded_schema_caps_strings_and_enumerates_integer_ranges() -> None:
    schema = {
        "type": "object",
        "properties": {
            "why": {"type": "string"},
            "label": {"type": "string", "enum": ["A", "B"]},
            "score": {"type": "integer", "minimum": 1, "maximum": 10},
            "p": {"type": "number", "minimum": 0, "maximum": 1},
        },
    }
    props = bounded_schema(schema)["properties"]
    assert props["why"] == {"type": "string", "maxLength": MAX_STRING_CHARS}
    assert props["label"] == schema["properties"]["label"]
    assert props["score"]["enum"] == list(range(1, 11))
    assert props["p"] == schema["properties"]["p"]
    assert "maxLength" not in schema["properties"]["why"]  # the protocol's schema is untouched


def test_names_and_identity(tmp_path: Path) -> None:
    default = get_model("local")
    assert isinstance(default, LocalModel)
    assert default.name == "local"
    assert default.path == default_model_path()
    size = default_model_path().stat().st_size
    assert default.identity() == {"provider": "local", "model": DEFAULT_MODEL_FILE, "size": size}

    copy = tmp_path / "judge.gguf"
    copy.symlink_to(default_model_path())
    custom = get_model(f"local/{copy}")
    assert custom.name == f"local/{copy}"
    assert custom.identity() == {"provider": "local", "model": "judge.gguf", "size": size}
    assert str(tmp_path) not in json.dumps(custom.identity())


def test_llama_server_answers_chat_completion(llama_server: LlamaServer) -> None:
    body = {
        "model": llama_server.model,
        "messages": [{"role": "user", "content": "Say hello."}],
        "max_tokens": 8,
        "temperature": 0,
    }
    req = urllib.request.Request(
        f"{llama_server.base_url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=120) as resp:
        out = json.load(resp)
    assert out["choices"][0]["message"]["content"]
    assert 0 < out["usage"]["completion_tokens"] <= 8
