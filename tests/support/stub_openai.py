"""A stand-in OpenAI chat-completions server with injectable latency and faults.

It lets the test suite and the benchmarks drive chatjudge's OpenAI-compatible model over real
HTTP on loopback, at any scale, with no model behind it. Replies are a pure function of the
prompt (the last user message), so a test knows the verdict it should get; faults are a pure
function of (prompt, attempt number), so retries are reproducible and, with `faulty_attempts`,
always end in success.

In tests (own event loop, or a background thread for code that runs its own loop, e.g. the CLI):

    async with StubServer(latency=0.01) as stub:      # or: with StubServer() as stub:
        model = OpenAIModel("stub", ClientOptions(base_url=stub.base_url))
        stub.configure(fault_rate=0.5, fault_kinds=["429"])
        assert stub.stats.max_sends == 1

As a process (prints the base URL on stdout once it listens):

    python tests/support/stub_openai.py --port 0 --latency 0.2 --fault-rate 0.1

Control API: `POST /_control` with a JSON object of `StubConfig` fields to change (plus
`"reset_stats": true`), `GET /_control` for the config, `GET /_stats` (`?prompts=1` adds the
per-prompt counts), `GET /_requests` for the requests recorded while `record` is on.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import math
import random
import signal
import socket
import struct
import threading
import time
import zlib
from collections import Counter, deque
from typing import Any, Literal, get_args

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

FaultKind = Literal[
    "429",
    "500",
    "503",
    "hang",
    "reset",
    "malformed",
    "truncated",
    "400",
    "401",
    "403",
    "garbled",
    "context",
]
FAULT_KINDS: tuple[str, ...] = get_args(FaultKind)
FormatType = Literal["json_schema", "json_object"]
RetryHeader = Literal["Retry-After", "retry-after-ms"]
# What the error-status faults say (in OpenAI's error shape); a 429 says when to retry.
FAULT_MESSAGES = {
    "500": "The server had an error while processing your request. Sorry about that!",
    "503": "The engine is currently overloaded, please try again later.",
    "400": "Invalid value for 'max_tokens': stub says this request is bad.",
    "401": "Incorrect API key provided: sk-***stub.",
    "403": "Project proj_stub does not have access to model stub.",
}

CONTEXT_MESSAGE = (
    "This model's maximum context length is 4096 tokens. However, your messages resulted in "
    "5120 tokens. Please reduce the length of the messages."
)
END_MARKER = "[[TERMINATE CHAT]]"  # chatjudge's simulated user ends a conversation with it

_MASK = (1 << 64) - 1


class StubConfig(BaseModel):
    """Behaviour of the server; every field can be changed at runtime."""

    model_config = ConfigDict(extra="forbid")

    latency: float = Field(0.0, ge=0, description="seconds before each reply (async sleep)")
    jitter: float = Field(0.0, ge=0, description="extra random delay, uniform in [0, jitter)")
    fault_rate: float = Field(0.0, ge=0, le=1, description="share of attempts that fault")
    fault_kinds: tuple[FaultKind, ...] = Field(
        ("429", "500", "503", "reset", "malformed", "truncated"),
        description="kinds drawn from (per prompt and attempt); `hang`, the 4xx kinds and "
        "`garbled` (a 200 whose body is no chat completion) and `context` (a 400 saying the "
        "context window is exceeded) only when listed",
    )
    faulty_attempts: int | None = Field(
        2, ge=0, description="only a prompt's first N attempts may fault (None: every attempt)"
    )
    permanent: dict[str, FaultKind] = Field(
        default_factory=dict, description="prompt marker -> fault on every attempt"
    )
    retry_after: float = Field(0.1, ge=0, description="seconds sent in 429 Retry-After")
    retry_after_headers: tuple[RetryHeader, ...] = Field(
        ("Retry-After", "retry-after-ms"),
        description="the headers a 429 carries `retry_after` in (seconds, milliseconds)",
    )
    hang_seconds: float = Field(3600.0, ge=0, description="delay of a `hang` before it replies")
    reject_response_format: bool = Field(False, description="400 on any `response_format`")
    reject_format_types: tuple[FormatType, ...] = Field(
        (), description="400 on a `response_format` of these types (others are served)"
    )
    api_key: str | None = Field(None, description="require `Authorization: Bearer KEY`")
    echo_authorization: bool = Field(
        False, description="error messages quote the request's Authorization header, as some "
        "proxies do"
    )
    record: bool = Field(False, description="keep the last 1,000 requests' headers and bodies")
    seed: int = Field(0, description="changes which attempts fault, not the replies")
    models: tuple[str, ...] = ("stub",)
    user_ends_after: int | None = Field(
        None,
        ge=0,
        description="simulated-user requests (a reply schema with a `response`): the response "
        "ends with `user_appends` once the transcript holds this many assistant replies",
    )
    user_appends: str = Field(END_MARKER, description="what such a response ends with")
    reasoning: str | None = Field(
        None, description="replies without a schema start with `<think>reasoning</think>`"
    )


class StubStats:
    """What the server saw. Prompts are kept as 64-bit hashes only, to stay small at 100k."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.requests = 0  # chat-completion requests received
        self.replies = 0  # 200 replies carrying a valid answer
        self.faults: Counter[str] = Counter()  # injected faults by kind
        self.rejected: Counter[str] = Counter()  # auth, response_format, bad_request
        self.in_flight = 0
        self.max_in_flight = 0
        self.first_request_at: float | None = None  # unix time: the span a client kept us busy
        self.last_reply_at: float | None = None
        self.sends: dict[int, int] = {}  # prompt hash -> requests
        self.answers: dict[int, int] = {}  # prompt hash -> valid 200 replies
        self.recorded: deque[dict[str, Any]] = deque(maxlen=1000)

    def sends_of(self, prompt: str) -> int:
        """How many requests carried this prompt (as the last user message)."""
        return self.sends.get(prompt_hash(prompt), 0)

    def answers_of(self, prompt: str) -> int:
        """How many valid replies this prompt got."""
        return self.answers.get(prompt_hash(prompt), 0)

    @property
    def distinct_prompts(self) -> int:
        return len(self.sends)

    @property
    def max_sends(self) -> int:
        return max(self.sends.values(), default=0)

    @property
    def max_answers(self) -> int:
        return max(self.answers.values(), default=0)

    @property
    def last_request(self) -> dict[str, Any] | None:
        return self.recorded[-1] if self.recorded else None

    def as_dict(self, prompts: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "requests": self.requests,
            "replies": self.replies,
            "faults": dict(self.faults),
            "rejected": dict(self.rejected),
            "in_flight": self.in_flight,
            "max_in_flight": self.max_in_flight,
            "first_request_at": self.first_request_at,
            "last_reply_at": self.last_reply_at,
            "distinct_prompts": self.distinct_prompts,
            "max_sends": self.max_sends,
            "max_answers": self.max_answers,
            "resent_prompts": sum(1 for n in self.sends.values() if n > 1),
        }
        if prompts:
            out["prompts"] = {
                f"{h:016x}": {"sends": n, "answers": self.answers.get(h, 0)}
                for h, n in self.sends.items()
            }
        return out


# --- deterministic replies -------------------------------------------------------------------


def prompt_hash(prompt: str) -> int:
    """The 64-bit key the server counts a prompt under (hex in `/_stats?prompts=1`)."""
    return int.from_bytes(hashlib.blake2b(prompt.encode(), digest_size=8).digest(), "big")


def prompt_of(messages: list[Any]) -> str:
    """The text replies and faults depend on: the last user message's content."""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            return _text(message.get("content"))
    return "\n".join(_text(m.get("content")) for m in messages if isinstance(m, dict))


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}, ...]
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _mix(*parts: int) -> int:
    """splitmix64 over the parts: cheap, well spread, stable across processes."""
    x = 0
    for part in parts:
        x = ((x ^ part) + 0x9E3779B97F4A7C15) & _MASK
        x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
        x ^= x >> 31
    return x


INTERACTIVITY_ACCURACY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "interactivity": {
            "type": "object",
            "properties": {
                "thought": {"type": "string"},
                "score": {"type": "integer", "enum": [1, 2, 3]},
            },
            "required": ["thought", "score"],
        },
        "accuracy": {
            "type": "object",
            "properties": {
                "thought": {"type": "string"},
                "score": {"type": "integer", "enum": [0, 1]},
            },
            "required": ["thought", "score"],
        },
    },
    "required": ["interactivity", "accuracy"],
}

PAIRWISE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "explanation": {"type": "string"},
        "pairwise_choice": {"type": "string", "enum": ["A", "SAME", "B"]},
    },
    "required": ["explanation", "pairwise_choice"],
}

_PHRASES = (
    "The assistant asks a clarifying question before answering",
    "The final answer matches the reference",
    "The response stays on the user's request and is easy to follow",
    "The assistant answers directly without checking what the user needs",
    "Both turns are coherent and grounded in the conversation",
)


def schema_of(body: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON schema a request asks the reply to follow, if any (OpenAI, llama-cpp-python's
    `json_object` with a `schema`, or vLLM style)."""
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        spec = fmt.get("json_schema") or {}
        schema = spec.get("schema")
        if isinstance(schema, dict):
            return schema
    if isinstance(fmt, dict) and fmt.get("type") == "json_object":
        schema = fmt.get("schema")
        if isinstance(schema, dict):
            return schema
    guided = body.get("guided_json")
    return guided if isinstance(guided, dict) else None


def expected_reply(
    prompt: str, schema: dict[str, Any] | None = None, *, key: int | None = None
) -> str:
    """The content the server answers `prompt` with, given the request's schema (or none).

    With a schema: a deterministic valid instance of it. Without: the pairwise or
    interactivity-accuracy verdict when the prompt reads like one, else a line of text.
    `key` is `prompt_hash(prompt)` when the caller has it already.
    """
    seed = prompt_hash(prompt) if key is None else key
    if schema is None:
        if "Response B" in prompt:
            schema = PAIRWISE_SCHEMA
        elif "Interactivity" in prompt:
            schema = INTERACTIVITY_ACCURACY_SCHEMA
        else:
            return f"Stub reply {seed:016x}."
    return json.dumps(instance_of(schema, seed))


def _with_goal(content: str, messages: list[Any]) -> str:
    """A simulated user's response tagged with its instructions (which hold its goal): two
    users with different goals never say the same words, as real ones would not, so their
    assistants' calls never share a cache key by chance."""
    system = "".join(_text(m.get("content")) for m in messages
                     if isinstance(m, dict) and m.get("role") == "system")  # fmt: skip
    turn = json.loads(content)
    turn["response"] = f"{turn['response']} (goal {prompt_hash(system) % 10_000:04d})"
    return json.dumps(turn)


def _simulated_user(content: str, prompt: str, ends_after: int, appends: str) -> str:
    """A simulated user's turn that says `appends` (by default the end marker) once the
    transcript (chatjudge's `**role**: content` lines) holds `ends_after` assistant replies."""
    if prompt.count("**assistant**:") < ends_after:
        return content
    turn = json.loads(content)
    turn["response"] = f"{turn['response']} Thanks, that settles it. {appends}"
    return json.dumps(turn)


def instance_of(schema: dict[str, Any], seed: int, name: str = "", root: Any = None) -> Any:
    """A small valid instance of a JSON schema, chosen by `seed` (enums, ranges, strings)."""
    root = schema if root is None else root
    key = _mix(seed, zlib.crc32(name.encode()))
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target = root
        for part in ref[2:].split("/"):
            target = target[part]
        return instance_of(target, seed, name, root)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][key % len(schema["enum"])]
    for combinator in ("anyOf", "oneOf", "allOf"):
        if schema.get(combinator):
            return instance_of(schema[combinator][0], seed, name, root)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        return {k: instance_of(v, seed, f"{name}.{k}", root) for k, v in props.items()}
    if kind == "array":
        count = max(int(schema.get("minItems", 1)), 1)
        if "maxItems" in schema:
            count = min(count, int(schema["maxItems"]))
        return [
            instance_of(schema.get("items", {}), seed, f"{name}[{i}]", root) for i in range(count)
        ]
    if kind in ("integer", "number"):
        lo = schema.get("minimum", schema.get("exclusiveMinimum", -1) + 1)
        hi = schema.get("maximum", schema.get("exclusiveMaximum", lo + 11) - 1)
        lo, hi = math.ceil(lo), math.floor(hi)
        return lo + key % (hi - lo + 1) if hi >= lo else lo
    if kind == "boolean":
        return bool(key & 1)
    if kind == "null":
        return None
    text = f"{_PHRASES[key % len(_PHRASES)]} (stub {key & 0xFFFF:04x})."
    if "maxLength" in schema:
        text = text[: int(schema["maxLength"])]
    return text.ljust(int(schema.get("minLength", 0)), "x")


# --- wire format -----------------------------------------------------------------------------


def _error(
    status: int,
    message: str,
    kind: str,
    *,
    code: str | None = None,
    param: str | None = None,
    headers: dict[str, str] | None = None,
) -> web.Response:
    """An error in OpenAI's shape: {"error": {"message", "type", "param", "code"}}."""
    body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
    return web.json_response(body, status=status, headers=headers)


def _completion(
    body: dict[str, Any], messages: list[Any], content: str, finish: str, serial: int
) -> web.Response:
    prompt_chars = sum(len(_text(m.get("content"))) for m in messages if isinstance(m, dict))
    prompt_tokens = max(1, prompt_chars // 4)
    completion_tokens = max(1, len(content) // 4)
    return web.json_response(
        {
            "id": f"chatcmpl-stub{serial}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or "stub",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "logprobs": None,
                    "finish_reason": finish,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
    )


def _abort_with_reset(request: web.Request) -> None:
    """Close the connection with a TCP RST, as a crashed proxy or server would."""
    transport = request.transport
    if transport is None:
        return
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()


class StubServer:
    """The server, run in the caller's event loop (`async with`) or in a thread (`with`)."""

    def __init__(
        self,
        config: StubConfig | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        **options: Any,
    ) -> None:
        if config is not None and options:
            raise TypeError("pass either a StubConfig or options, not both")
        self.config = config if config is not None else StubConfig(**options)
        self.stats = StubStats()
        self.host = host
        self.port = port
        self._serial = 0
        self._runner: web.AppRunner | None = None
        self._closing: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """What an OpenAI client takes as base URL: `http://127.0.0.1:PORT/v1`."""
        return f"{self.url}/v1"

    def configure(self, **changes: Any) -> StubConfig:
        """Change the behaviour at runtime (validated); takes effect on the next request."""
        self.config = StubConfig.model_validate({**self.config.model_dump(), **changes})
        return self.config

    # lifecycle

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/_stats", self._get_stats)
        app.router.add_get("/_control", self._get_control)
        app.router.add_post("/_control", self._post_control)
        app.router.add_get("/_requests", self._get_requests)
        return app

    async def start(self) -> StubServer:
        self._closing = asyncio.Event()
        # Cancel a handler when its client goes away (a timed-out `hang`), log nothing.
        self._runner = web.AppRunner(
            self.app(), handler_cancellation=True, access_log=None, shutdown_timeout=0.5
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    async def close(self) -> None:
        if self._closing is not None:
            self._closing.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> StubServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __enter__(self) -> StubServer:
        """Serve from a background thread, for callers that block or run their own loop."""
        loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=loop.run_forever, name="stub-openai", daemon=True)
        self._thread.start()
        self._loop = loop
        asyncio.run_coroutine_threadsafe(self.start(), loop).result(timeout=30)
        return self

    def __exit__(self, *exc: object) -> None:
        loop, thread = self._loop, self._thread
        assert loop is not None and thread is not None
        asyncio.run_coroutine_threadsafe(self.close(), loop).result(timeout=30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=30)
        loop.close()
        self._loop = self._thread = None

    # handlers

    def _denied(self, request: web.Request, config: StubConfig) -> web.Response | None:
        if config.api_key is None:
            return None
        auth = request.headers.get("Authorization", "")
        if not auth.startswith("Bearer ") or not auth[7:].strip():
            self.stats.rejected["auth"] += 1
            return _error(
                401,
                "You didn't provide an API key. You need to provide your API key "
                "in an Authorization header using Bearer auth.",
                "invalid_request_error",
            )
        if auth[7:].strip() != config.api_key:
            self.stats.rejected["auth"] += 1
            shown = auth[7:].strip()
            return _error(
                401,
                f"Incorrect API key provided: {shown[:3]}***{shown[-4:]}.",
                "invalid_request_error",
                code="invalid_api_key",
            )
        return None

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        stats, config = self.stats, self.config
        stats.requests += 1
        stats.in_flight += 1
        stats.max_in_flight = max(stats.max_in_flight, stats.in_flight)
        if stats.first_request_at is None:
            stats.first_request_at = time.time()
        try:
            return await self._answer(request, config)
        finally:
            stats.in_flight -= 1
            stats.last_reply_at = time.time()

    async def _answer(self, request: web.Request, config: StubConfig) -> web.StreamResponse:
        stats = self.stats
        raw = await request.read()
        try:
            body = json.loads(raw)
            messages = body["messages"]
            if not isinstance(messages, list) or not messages:
                raise TypeError
        except (ValueError, KeyError, TypeError):
            stats.rejected["bad_request"] += 1
            return _error(
                400,
                "'messages' is a required property and must be a non-empty array.",
                "invalid_request_error",
                param="messages",
            )
        if config.record:
            stats.recorded.append(
                {
                    "method": request.method,
                    "path": request.path,
                    "headers": dict(request.headers),
                    "body": body,
                }
            )
        prompt = prompt_of(messages)
        key = prompt_hash(prompt)
        attempt = stats.sends.get(key, 0)
        stats.sends[key] = attempt + 1
        if (denied := self._denied(request, config)) is not None:
            return denied
        fmt = body.get("response_format")
        if fmt is not None and (
            config.reject_response_format
            or (isinstance(fmt, dict) and fmt.get("type") in config.reject_format_types)
        ):
            stats.rejected["response_format"] += 1
            kind = fmt.get("type") if isinstance(fmt, dict) else None
            return _error(
                400,
                f"response_format of type {kind!r} is not supported by this server."
                if config.reject_format_types
                else "response_format is not supported by this server.",
                "invalid_request_error",
                param="response_format",
            )
        fault = self._fault(config, prompt, key, attempt)
        if fault is not None:
            stats.faults[fault] += 1
            if fault == "429":
                values = {
                    "Retry-After": f"{config.retry_after:g}",
                    "retry-after-ms": f"{config.retry_after * 1000:g}",
                }
                return _error(
                    429,
                    "Rate limit reached for requests. Please try again in "
                    f"{config.retry_after:g}s.",
                    "requests",
                    code="rate_limit_exceeded",
                    headers={h: values[h] for h in config.retry_after_headers},
                )
            if fault == "reset":
                _abort_with_reset(request)
                await asyncio.sleep(3600)  # cancelled as the connection goes (handler_cancellation)
        await self._delay(config)
        if fault in FAULT_MESSAGES:
            status = int(fault)
            kind = "server_error" if status >= 500 else "invalid_request_error"
            code = {"401": "invalid_api_key", "403": "model_not_found"}.get(fault)
            message = FAULT_MESSAGES[fault]
            if config.echo_authorization:
                sent = request.headers.get("Authorization")
                message += f" (request header: Authorization: {sent})"
            return _error(status, message, kind, code=code)
        if fault == "context":
            return _error(
                400, CONTEXT_MESSAGE, "invalid_request_error", code="context_length_exceeded"
            )
        if fault == "garbled":  # a proxy's page, with status 200
            return web.Response(
                text="<html><body>Welcome to nginx!</body></html>", content_type="text/html"
            )
        if fault == "hang":
            assert self._closing is not None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), config.hang_seconds)
        self._serial += 1
        schema = schema_of(body)
        content = expected_reply(prompt, schema, key=key)
        if "response" in (schema or {}).get("properties", {}):
            content = _with_goal(content, messages)
        if config.user_ends_after is not None and "response" in (schema or {}).get(
            "properties", {}
        ):
            content = _simulated_user(content, prompt, config.user_ends_after, config.user_appends)
        elif config.reasoning is not None and schema is None:
            content = f"<think>{config.reasoning}</think>{content}"
        if fault == "malformed":
            return _completion(
                body, messages, "I'm sorry, I can't rate this conversation.", "stop", self._serial
            )
        if fault == "truncated":
            return _completion(body, messages, content[: len(content) // 2], "length", self._serial)
        stats.replies += 1
        stats.answers[key] = stats.answers.get(key, 0) + 1
        return _completion(body, messages, content, "stop", self._serial)

    @staticmethod
    def _fault(config: StubConfig, prompt: str, key: int, attempt: int) -> str | None:
        for marker, kind in config.permanent.items():
            if marker in prompt:
                return kind
        if config.fault_rate <= 0 or not config.fault_kinds:
            return None
        if config.faulty_attempts is not None and attempt >= config.faulty_attempts:
            return None
        if _mix(config.seed, key, attempt) >= config.fault_rate * 2**64:
            return None
        return config.fault_kinds[_mix(config.seed, key, attempt, 1) % len(config.fault_kinds)]

    async def _delay(self, config: StubConfig) -> None:
        delay = config.latency + (config.jitter * random.random() if config.jitter else 0.0)
        if delay > 0:
            await asyncio.sleep(delay)

    async def _models(self, request: web.Request) -> web.Response:
        if (denied := self._denied(request, self.config)) is not None:
            return denied
        created = int(time.time())
        data = [
            {"id": m, "object": "model", "created": created, "owned_by": "stub"}
            for m in self.config.models
        ]
        return web.json_response({"object": "list", "data": data})

    async def _get_stats(self, request: web.Request) -> web.Response:
        prompts = request.query.get("prompts", "") not in ("", "0", "false")
        return web.json_response(self.stats.as_dict(prompts=prompts))

    async def _get_control(self, request: web.Request) -> web.Response:
        return web.json_response(self.config.model_dump())

    async def _post_control(self, request: web.Request) -> web.Response:
        try:
            changes = await request.json()
            reset = bool(changes.pop("reset_stats", False))
            self.configure(**changes)
        except (ValueError, TypeError, AttributeError) as exc:  # pydantic errors are ValueErrors
            return web.json_response({"error": str(exc)}, status=400)
        if reset:
            self.stats.reset()
        return web.json_response(self.config.model_dump())

    async def _get_requests(self, request: web.Request) -> web.Response:
        return web.json_response(list(self.stats.recorded))


# --- process mode ----------------------------------------------------------------------------


def _parse_args(argv: list[str] | None) -> tuple[argparse.Namespace, StubConfig]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: a free port")
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--jitter", type=float, default=0.0)
    parser.add_argument("--fault-rate", type=float, default=0.0)
    parser.add_argument("--fault-kinds", default=None, help=f"comma-separated: {FAULT_KINDS}")
    parser.add_argument("--faulty-attempts", type=int, default=2, help="-1: every attempt")
    parser.add_argument(
        "--permanent",
        action="append",
        default=[],
        metavar="MARKER=KIND",
        help="prompts containing MARKER always get fault KIND",
    )
    parser.add_argument("--retry-after", type=float, default=0.1)
    parser.add_argument("--hang-seconds", type=float, default=3600.0)
    parser.add_argument("--reject-response-format", action="store_true")
    parser.add_argument("--api-key", default=None)
    parser.add_argument("--record", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    options: dict[str, Any] = {
        "latency": args.latency,
        "jitter": args.jitter,
        "fault_rate": args.fault_rate,
        "faulty_attempts": None if args.faulty_attempts < 0 else args.faulty_attempts,
        "permanent": dict(p.split("=", 1) for p in args.permanent),
        "retry_after": args.retry_after,
        "hang_seconds": args.hang_seconds,
        "reject_response_format": args.reject_response_format,
        "api_key": args.api_key,
        "record": args.record,
        "seed": args.seed,
    }
    if args.fault_kinds:
        options["fault_kinds"] = tuple(k.strip() for k in args.fault_kinds.split(","))
    try:
        return args, StubConfig(**options)
    except ValueError as exc:
        parser.error(str(exc))


async def _serve(host: str, port: int, config: StubConfig) -> None:
    server = StubServer(config, host=host, port=port)
    await server.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print(server.base_url, flush=True)
    await stop.wait()
    await server.close()


def main(argv: list[str] | None = None) -> None:
    args, config = _parse_args(argv)
    asyncio.run(_serve(args.host, args.port, config))


if __name__ == "__main__":
    main()
