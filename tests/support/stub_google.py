"""A stand-in Gemini API and Vertex AI endpoint on loopback, for the real `google-genai` SDK.

Serves `generateContent` on every path the SDK uses (`/v1beta/models/M:generateContent`
for the Gemini API; `/v1beta1/[projects/P/locations/L/]publishers/google/models/M:...`
for Vertex AI) and an OAuth token endpoint (`POST /token`) so that application default
credentials of type `authorized_user` can be refreshed offline. It records every request,
accepts the API key (`x-goog-api-key`) or a token it issued (`Authorization: Bearer`),
and answers with a valid instance of the request's response schema (or `reply_text`).
A request that offers function declarations (and no schema) gets the shared tool-calling
assistant (`stub_replies.tool_turn`, `tool_steps`): `functionCall` parts (with ids unless
`call_ids` is off), then a text quoting the `functionResponse` parts; a conversation that
breaks Gemini 3's rules (each call's turn answered by the next turn, one response per call,
named after it; every call carrying a thought signature) is refused with a 400.
Scripted faults (`fail_next`) come back first, in Google's error shape.

    async with GoogleStub(api_key="g-key") as stub:
        model = GoogleModel("gemini-x", ClientOptions(base_url=stub.base_url))
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import deque
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestServer

from .stub_replies import instance_of, prompt_hash, tool_turn

ACCESS_TOKEN = "ya29.stub-access-token"
_PATH = re.compile(
    r"^/(?P<version>v[^/]+)/(?:projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)/)?"
    r"(?:publishers/google/)?models/(?P<model>[^/:]+):generateContent$"
)
_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


@dataclass
class Recorded:
    """One generateContent request: path parts, headers and JSON body."""

    path: str
    version: str
    project: str | None
    location: str | None
    model: str
    headers: dict[str, str]
    query: dict[str, str]
    body: dict[str, Any]


class GoogleStub:
    def __init__(self, api_key: str = "g-stub-key") -> None:
        self.api_key = api_key
        self.requests: list[Recorded] = []
        self.token_requests: list[dict[str, str]] = []
        self.faults: deque[tuple[int, dict[str, Any], dict[str, str]]] = deque()
        self.reply_text: str | None = None  # else an instance of the response schema
        self.blocked: str | None = None  # answer with promptFeedback.blockReason
        self.tool_steps = 2  # offered functions: calls before the answer
        self.call_ids = True  # the calls carry ids (Vertex AI's do; the Gemini API's may not)
        self.delay = 0.0
        self._server: TestServer | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start the stub first: async with GoogleStub()"
        return str(self._server.make_url("")).rstrip("/")

    def fail_next(
        self,
        code: int,
        message: str = "stub fault",
        *,
        status: str | None = None,
        details: list[dict[str, Any]] | None = None,
        headers: dict[str, str] | None = None,
        times: int = 1,
    ) -> None:
        """Answer the next `times` requests with this error (before any reply)."""
        error: dict[str, Any] = {
            "code": code,
            "message": message,
            "status": status or _STATUS.get(code, "UNKNOWN"),
        }
        if details:
            error["details"] = details
        self.faults.extend((code, {"error": error}, headers or {}) for _ in range(times))

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/token", self._token)
        app.router.add_post("/{tail:.+}", self._generate)
        return app

    async def __aenter__(self) -> GoogleStub:
        self._server = TestServer(self.app(), host="127.0.0.1")
        await self._server.start_server()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            await self._server.close()

    async def _token(self, request: web.Request) -> web.Response:
        form = await request.post()
        self.token_requests.append({k: str(v) for k, v in form.items()})
        return web.json_response(
            {"access_token": ACCESS_TOKEN, "expires_in": 3599, "token_type": "Bearer"}
        )

    async def _generate(self, request: web.Request) -> web.Response:
        match = _PATH.match(request.path)
        if match is None:
            return _error(404, f"no such method: {request.path}")
        body = await request.json()
        self.requests.append(
            Recorded(
                request.path,
                match["version"],
                match["project"],
                match["location"],
                match["model"],
                dict(request.headers),
                dict(request.query),
                body,
            )
        )
        if self.delay:
            await asyncio.sleep(self.delay)
        key = request.headers.get("x-goog-api-key") or request.query.get("key")
        bearer = request.headers.get("Authorization", "").removeprefix("Bearer ")
        if key is not None and key != self.api_key:
            return _error(
                400,
                "API key not valid. Please pass a valid API key.",
                details=[
                    {
                        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                        "reason": "API_KEY_INVALID",
                        "domain": "googleapis.com",
                    }
                ],
            )
        if key is None and bearer != ACCESS_TOKEN:
            return _error(401, "Request is missing required authentication credential.")
        if self.faults:
            code, error, headers = self.faults.popleft()
            return web.json_response(error, status=code, headers=headers)
        problem = _tool_problem(body.get("contents", []))
        if problem:
            return _error(400, problem)
        return web.json_response(self._response(body, match["model"]))

    def _response(self, body: dict[str, Any], model: str) -> dict[str, Any]:
        prompt = json.dumps(body.get("contents"))
        usage = {"promptTokenCount": max(1, len(prompt) // 4)}
        if self.blocked:
            return {"promptFeedback": {"blockReason": self.blocked}, "usageMetadata": usage}
        config = body.get("generationConfig") or {}
        schema = config.get("responseJsonSchema") or config.get("responseSchema")
        declared = [d for t in body.get("tools", []) for d in t.get("functionDeclarations", [])]
        text = self.reply_text
        if declared and schema is None and text is None:
            turn = tool_turn(_as_openai(body["contents"]), self.tool_steps, declared[0]["name"])
            if isinstance(turn, tuple):
                name, args = turn
                call = {"name": name, "args": args}
                if self.call_ids:
                    call["id"] = f"fc_{prompt_hash(prompt) % 10**6:06d}_{args['step']}"
                part = {"functionCall": call, "thoughtSignature": "c2lnbg=="}
                return _candidate([part], usage, model, len(self.requests))
            text = turn
        if text is None:
            text = json.dumps(instance_of(schema, prompt_hash(prompt)) if schema else "Stub.")
        return _candidate([{"text": text}], usage, model, len(self.requests))


def _candidate(
    parts: list[dict[str, Any]], usage: dict[str, int], model: str, serial: int
) -> dict[str, Any]:
    """A response of one candidate holding `parts`, its usage counted from them."""
    said = "".join(p.get("text", "") for p in parts) or json.dumps(parts)
    output = max(1, len(said) // 4)
    usage = usage | {
        "candidatesTokenCount": output,
        "thoughtsTokenCount": 5,
        "totalTokenCount": usage["promptTokenCount"] + output + 5,
    }
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": usage,
        "modelVersion": model,
        "responseId": f"stub{serial}",
    }


def _as_openai(contents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation in OpenAI's terms, as `tool_turn` reads it: `functionResponse`
    parts are `tool` messages (their `output`, or the whole response as JSON)."""
    said: list[dict[str, Any]] = []
    for content in contents:
        parts = content.get("parts", [])
        for part in parts:
            response = (part.get("functionResponse") or {}).get("response")
            if response is not None:
                output = response.get("output")
                result = output if set(response) == {"output"} else json.dumps(response)
                said.append({"role": "tool", "content": result})
        text = "".join(p.get("text", "") for p in parts)
        if text or content.get("role") == "model":
            role = "assistant" if content.get("role") == "model" else "user"
            said.append({"role": role, "content": text})
    return said


def _tool_problem(contents: list[dict[str, Any]]) -> str | None:
    """What Gemini 3 would refuse in a conversation's function calls and responses."""
    for i, content in enumerate(contents):
        calls = [p for p in content.get("parts", []) if "functionCall" in p]
        if not calls:
            continue
        if any("thoughtSignature" not in p for p in calls):
            return f"Function call in the {i}. content block is missing a thought_signature"
        after = contents[i + 1].get("parts", []) if i + 1 < len(contents) else []
        answered = [p["functionResponse"]["name"] for p in after if "functionResponse" in p]
        if sorted(answered) != sorted(p["functionCall"]["name"] for p in calls):
            return (
                "Please ensure that the number of function response parts is equal to the "
                "number of function call parts of the function call turn."
            )
    return None


def _error(code: int, message: str, *, details: list[dict[str, Any]] | None = None) -> web.Response:
    error: dict[str, Any] = {"code": code, "message": message, "status": _STATUS[code]}
    if details:
        error["details"] = details
    return web.json_response({"error": error}, status=code)
