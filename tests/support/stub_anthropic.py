"""A stand-in Anthropic Messages API (`POST /v1/messages`) on loopback, for the real SDK.

It records every request as the SDK sent it, checks the API key (`x-api-key` or
`Authorization: Bearer`, as SDK 2.x sends it), and answers with the forced tool's input:
a valid instance of the tool's `input_schema` (or `reply_input`), so a run through the
CLI gets verdicts. A request that offers tools without forcing one gets the shared
tool-calling assistant (`stub_replies.tool_turn`, `tool_steps`): `tool_use` blocks, then a
text quoting the `tool_result` blocks; a conversation whose calls and results break the
API's rules (results in the user message right after the calls, first in it, one for
each call; inputs that are objects) is refused with a 400, as the API refuses it.
Scripted faults (`fail_next`) come back first, in Anthropic's error shape, with
`retry-after` and `anthropic-ratelimit-*` headers on 429.

    async with AnthropicStub(api_key="sk-ant-test") as stub:
        model = AnthropicModel("claude-x", ClientOptions(base_url=stub.base_url))
        stub.fail_next(429, "rate_limit_error", retry_after="7")
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestServer

from .stub_replies import instance_of, prompt_hash, text_of, tool_turn


@dataclass
class Recorded:
    """One request as received: path, headers and JSON body."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class Fault:
    status: int
    error_type: str
    message: str
    headers: dict[str, str] = field(default_factory=dict)


class AnthropicStub:
    def __init__(self, api_key: str = "sk-ant-stub-key") -> None:
        self.api_key = api_key
        self.requests: list[Recorded] = []
        self.faults: deque[Fault] = deque()
        self.reply_input: dict[str, Any] | None = None  # else an instance of the tool schema
        self.reply_text: str | None = None  # answer in prose instead of the tool
        self.tool_steps = 2  # offered tools (none forced): calls before the answer
        self.delay = 0.0
        self._server: TestServer | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start the stub first: async with AnthropicStub()"
        return str(self._server.make_url("")).rstrip("/")

    def fail_next(
        self,
        status: int,
        error_type: str,
        message: str = "stub fault",
        *,
        retry_after: str | None = None,
        times: int = 1,
    ) -> None:
        """Answer the next `times` requests with this error (before any reply)."""
        headers: dict[str, str] = {}
        if status == 429:
            headers = {
                "anthropic-ratelimit-requests-limit": "50",
                "anthropic-ratelimit-requests-remaining": "0",
                "anthropic-ratelimit-requests-reset": "2026-11-21T06:00:07Z",
            }
        if retry_after is not None:
            headers["retry-after"] = retry_after
        self.faults.extend(Fault(status, error_type, message, headers) for _ in range(times))

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/messages", self._messages)
        return app

    async def __aenter__(self) -> AnthropicStub:
        self._server = TestServer(self.app(), host="127.0.0.1")
        await self._server.start_server()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            await self._server.close()

    async def _messages(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(Recorded(request.path, dict(request.headers), body))
        if self.delay:
            await asyncio.sleep(self.delay)
        key = request.headers.get("x-api-key") or request.headers.get("Authorization", "")
        if key.removeprefix("Bearer ") != self.api_key:
            return _error(401, "authentication_error", "invalid x-api-key")
        if self.faults:
            fault = self.faults.popleft()
            return _error(fault.status, fault.error_type, fault.message, fault.headers)
        problem = _tool_problem(body)
        if problem:
            return _error(400, "invalid_request_error", problem)
        return web.json_response(self._message(body))

    def _message(self, body: dict[str, Any]) -> dict[str, Any]:
        prompt = json.dumps(body.get("messages"))
        seed = prompt_hash(prompt)
        choice = body.get("tool_choice") or {}
        tool = next((t for t in body.get("tools", []) if t.get("name") == choice.get("name")), None)
        turn = None
        if body.get("tools") and tool is None and self.reply_text is None:
            turn = tool_turn(
                _as_openai(body["messages"]), self.tool_steps, body["tools"][0]["name"]
            )
        if isinstance(turn, tuple):
            name, tool_input = turn
            ident = f"toolu_stub{seed % 10**8:08d}_{tool_input['step']}"
            content = [{"type": "tool_use", "id": ident, "name": name, "input": tool_input}]
            stop, output = "tool_use", json.dumps(tool_input)
        elif isinstance(turn, str):
            output = turn
            content = [{"type": "text", "text": output}]
            stop = "end_turn"
        elif tool is not None and self.reply_text is None:
            tool_input = self.reply_input or instance_of(tool["input_schema"], seed)
            content = [
                {
                    "type": "tool_use",
                    "id": f"toolu_stub{seed % 10**8:08d}",
                    "name": tool["name"],
                    "input": tool_input,
                }
            ]
            stop, output = "tool_use", json.dumps(tool_input)
        else:
            output = self.reply_text or "Stub reply."
            content = [{"type": "text", "text": output}]
            stop = "end_turn"
        return {
            "id": f"msg_stub{len(self.requests)}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {
                "input_tokens": max(1, len(prompt) // 4),
                "output_tokens": max(1, len(output) // 4),
            },
        }


def _as_openai(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation in OpenAI's terms, as `tool_turn` reads it: `tool_result` blocks
    are `tool` messages, before the text of the user message that holds them."""
    said: list[dict[str, Any]] = []
    for message in messages:
        content = message["content"]
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for block in blocks:
            if block["type"] == "tool_result":
                said.append({"role": "tool", "content": text_of(block["content"])})
        text = "".join(b.get("text", "") for b in blocks if b["type"] == "text")
        if text or message["role"] == "assistant":
            said.append({"role": message["role"], "content": text})
    return said


def _tool_problem(body: dict[str, Any]) -> str | None:
    """What the Messages API would refuse in a conversation's tool calls and results."""
    for tool in body.get("tools", []):
        if not tool.get("name") or (tool.get("input_schema") or {}).get("type") != "object":
            return f"tools: {tool.get('name')!r} needs a name and an object input_schema"
    messages = body.get("messages", [])
    for i, message in enumerate(messages):
        content = message["content"]
        blocks = content if isinstance(content, list) else []
        kinds = [b["type"] for b in blocks]
        other = next((j for j, kind in enumerate(kinds) if kind != "tool_result"), len(kinds))
        if "tool_result" in kinds[other:]:
            return f"messages.{i}: tool_result blocks must come first in the content"
        calls = [b for b in blocks if b["type"] == "tool_use"]
        if any(not isinstance(b.get("input"), dict) for b in calls):
            return f"messages.{i}: tool_use.input must be an object"
        if not calls:
            continue
        after = messages[i + 1]["content"] if i + 1 < len(messages) else []
        answered = {b["tool_use_id"] for b in after if isinstance(after, list)
                    and b["type"] == "tool_result"}  # fmt: skip
        if answered != {b["id"] for b in calls}:
            return (
                f"messages.{i + 1}: `tool_use` ids were found without `tool_result` blocks "
                "immediately after"
            )
    return None


def _error(
    status: int, error_type: str, message: str, headers: dict[str, str] | None = None
) -> web.Response:
    body = {
        "type": "error",
        "error": {"type": error_type, "message": message},
        "request_id": "req_stub",
    }
    return web.json_response(body, status=status, headers=headers)
