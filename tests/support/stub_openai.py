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

As a process, from the repository's root (prints the base URL on stdout once it listens):

    python -m tests.support.stub_openai --port 0 --latency 0.2 --fault-rate 0.1

What it answers is `stub_replies`' (shared with the Anthropic and Google stand-ins), how it
fails is `stub_faults`', and what a test sets and reads is `stub_control`'s; this module is
the OpenAI wire format: the routes, the completion and error bodies, the process mode.

Control API: `POST /_control` with a JSON object of `StubConfig` fields to change (plus
`"reset_stats": true`), `GET /_control` for the config, `GET /_stats` (`?prompts=1` adds the
per-prompt counts), `GET /_requests` for the requests recorded while `record` is on.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

from aiohttp import web

from tests.support.stub_control import StubConfig, StubStats
from tests.support.stub_faults import (
    CONTEXT_MESSAGE,
    FAULT_KINDS,
    FAULT_MESSAGES,
    abort_with_reset,
    error_response,
    pick_fault,
)
from tests.support.stub_replies import (
    expected_reply,
    mix,
    prompt_hash,
    prompt_of,
    schema_of,
    simulated_user_reply,
    text_of,
    tool_turn,
    with_goal,
)

# --- wire format -----------------------------------------------------------------------------


def _completion(
    body: dict[str, Any],
    messages: list[Any],
    content: str,
    finish: str,
    serial: int,
    completion_tokens: int | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    config: StubConfig | None = None,
) -> web.Response:
    prompt_chars = sum(len(text_of(m.get("content"))) for m in messages if isinstance(m, dict))
    prompt_tokens = max(1, prompt_chars // 4)
    completion_tokens = completion_tokens or max(1, len(content) // 4)
    return web.json_response(
        {
            "id": f"chatcmpl-stub{serial}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": (config and config.served_model) or body.get("model") or "stub",
            **({"system_fingerprint": config.system_fingerprint} if config else {}),
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": content or None,
                        "tool_calls": tool_calls,
                    }
                    if tool_calls
                    else {"role": "assistant", "content": content},
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


def _tool_calls(ids: str, ident: str, function: dict[str, Any]) -> list[dict[str, Any]]:
    """The reply's tool calls, their ids written as `StubConfig.tool_call_ids` says."""
    call = {"id": "call_0" if ids in ("same", "shared") else ident, "type": "function",
            "function": function}  # fmt: skip
    if ids == "none":
        del call["id"]
    if ids != "shared":
        return [call]
    twin = {**function, "arguments": function["arguments"][:-1] + ', "twin": true}'}
    return [call, {**call, "function": twin}]


class StubServer:
    """The server, run in the caller's event loop (`async with`) or in a thread (`with`)."""

    def __init__(
        self,
        config: StubConfig | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        replies: Callable[[str, dict[str, Any] | None], str] | None = None,
        **options: Any,
    ) -> None:
        """`replies`: what to answer a prompt with, given the request's schema, instead of
        `expected_reply` (a stand-in model with a behaviour of its own)."""
        if config is not None and options:
            raise TypeError("pass either a StubConfig or options, not both")
        self.config = config if config is not None else StubConfig(**options)
        self.stats = StubStats()
        self.host = host
        self.port = port
        self.replies = replies
        self._serial = 0
        self._runner: web.AppRunner | None = None
        self._closing: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._hold_after: int | None = None  # replies given before every next one is held

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

    def hold(self, after: int = 0) -> None:
        """Once `after` replies are given, keep every next one (in flight or to come) until
        `release()`: a test then acts (kills a worker, sends SIGINT, ...) while calls are
        surely in flight, however slowly a loaded machine runs it."""
        self._hold_after = after

    def release(self) -> None:
        """Give the replies `hold` keeps, and hold no more."""
        self._hold_after = None

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
            return error_response(
                401,
                "You didn't provide an API key. You need to provide your API key "
                "in an Authorization header using Bearer auth.",
                "invalid_request_error",
            )
        if auth[7:].strip() != config.api_key:
            self.stats.rejected["auth"] += 1
            shown = auth[7:].strip()
            return error_response(
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
            return error_response(
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
            return error_response(
                400,
                f"response_format of type {kind!r} is not supported by this server."
                if config.reject_format_types
                else "response_format is not supported by this server.",
                "invalid_request_error",
                param="response_format",
            )
        fault = pick_fault(config, prompt, key, attempt)
        if fault is not None:
            stats.faults[fault] += 1
            if fault == "429":
                values = {
                    "Retry-After": f"{config.retry_after:g}",
                    "retry-after-ms": f"{config.retry_after * 1000:g}",
                }
                return error_response(
                    429,
                    "Rate limit reached for requests. Please try again in "
                    f"{config.retry_after:g}s.",
                    "requests",
                    code="rate_limit_exceeded",
                    headers={h: values[h] for h in config.retry_after_headers},
                )
            if fault == "reset":
                abort_with_reset(request)
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
            return error_response(status, message, kind, code=code)
        if fault == "context":
            return error_response(
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
        seed = body.get("seed")
        seeded = mix(key, seed) if config.seeded and isinstance(seed, int) else key
        if self.replies is not None:
            content = self.replies(prompt, schema)
        else:
            content = expected_reply(prompt, schema, key=seeded)
        if "response" in (schema or {}).get("properties", {}):
            content = with_goal(content, messages)
        if config.user_ends_after is not None and "response" in (schema or {}).get(
            "properties", {}
        ):
            content = simulated_user_reply(
                content, prompt, config.user_ends_after, config.user_appends
            )
        elif config.reasoning is not None and schema is None:
            content = f"<think>{config.reasoning}</think>{content}"
        if fault == "malformed":
            return _completion(
                body, messages, "I'm sorry, I can't rate this conversation.", "stop", self._serial
            )
        if fault == "truncated":
            return _completion(body, messages, content[: len(content) // 2], "length", self._serial)
        tools = body.get("tools")
        if tools and schema is None:
            turn = tool_turn(messages, config.tool_steps, tools[0]["function"]["name"])
            if isinstance(turn, str):
                content = turn
            else:
                stats.replies += 1
                function = {"name": turn[0], "arguments": json.dumps(turn[1])}
                ident = f"call_{key & 0xFFFFFF:06x}_{turn[1]['step']}"  # the same in every run
                calls = _tool_calls(config.tool_call_ids, ident, function)
                return _completion(body, messages, "", "tool_calls", self._serial, tool_calls=calls)
        stats.replies += 1
        stats.answers[key] = stats.answers.get(key, 0) + 1
        return _completion(
            body, messages, content, "stop", self._serial, config.completion_tokens, config=config
        )

    async def _delay(self, config: StubConfig) -> None:
        delay = config.latency + (config.jitter * random.random() if config.jitter else 0.0)
        if delay > 0:
            await asyncio.sleep(delay)
        while self._hold_after is not None and self.stats.replies >= self._hold_after:
            await asyncio.sleep(0.01)

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
