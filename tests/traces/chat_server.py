"""A loopback stand-in for a chat-completions server that can answer with a tool call: the
assistant asks for `get_weather` when the user mentions the weather and no tool result has
come back yet; otherwise it replies with text derived from the last user message.

The shared `stub` server answers text only, and the tool-call turn needs the wire format of
a tool call (`tool_calls`, `finish_reason: tool_calls`), so this one speaks real HTTP too."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from aiohttp import web


def reply_to(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The assistant message the server answers `messages` with."""
    last = messages[-1]
    if last["role"] == "tool":
        return {"role": "assistant", "content": f"The tool says: {last['content']}."}
    text = str(last.get("content") or "")
    if "weather" in text.lower():
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{len(messages)}",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        }
    return {"role": "assistant", "content": f"Answer {len(messages)}: you said {text!r}."}


class ChatServer:
    """Serves `POST /v1/chat/completions` from a background thread on 127.0.0.1."""

    def __init__(self) -> None:
        self.port = 0
        self.requests: list[dict[str, Any]] = []
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def _chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        message = reply_to(body["messages"])
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        return web.json_response(
            {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "created": 1_700_000_000 + len(self.requests),
                "model": body["model"],
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            }
        )

    async def _start(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]

    def __enter__(self) -> ChatServer:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(timeout=30)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._runner is not None
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(timeout=30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)
        self._loop.close()
