"""OpenAI and every OpenAI-compatible server, over the chat-completions wire format.

Spoken with aiohttp rather than the `openai` SDK: the SDK spends several times the CPU
per call that aiohttp does, and judging is a hot loop. Several base URLs make one model
spread over replicas (a vLLM fleet with no load balancer): each call goes to the replica
with the fewest calls in flight.

A reply schema is sent as `response_format` in the first shape the server accepts,
tried in order: OpenAI's `json_schema` (OpenAI, vLLM, SGLang, Ollama), `json_object`
with a `schema` (llama-cpp-python's server, which answers the first with an error),
then none. Below `json_schema`, the schema's instruction is appended to the last user
message too, and the tolerant parser does the rest. A refusal is remembered for the
rest of the run.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

from chatjudge import jsoncodec
from chatjudge.chat.toolcalls.call_ids import paired
from chatjudge.chat.types import (
    GenerationSettings,
    ModelRequest,
    OutputSchema,
    Reply,
    ToolUse,
    with_instruction,
)
from chatjudge.errors import (
    BadRequestError,
    ModelConnectionError,
    ModelError,
    ServerError,
    UsageError,
    error_for_status,
)
from chatjudge.models.base import GENERATION, Model
from chatjudge.models.headers import retry_after
from chatjudge.options import ClientOptions

if TYPE_CHECKING:  # imported with the first session: help texts read this class's attributes
    import aiohttp

    from chatjudge.models.tokens import Tokenizer

DEFAULT_BASE_URL = "https://api.openai.com/v1"
MODES = ("json_schema", "json_object", "instruction")
MAX_PREFIXES = 64  # serialized request heads kept (settings x schema x mode)


class OpenAIModel(Model):
    provider = "openai"
    official_hosts = frozenset({"api.openai.com"})
    supports_schema = True
    supports_tools = True
    key_env_var = "OPENAI_API_KEY"
    secret_env_vars = ("OPENAI_API_KEY",)
    key_hint = "export it, or use --base-url for a local server"
    max_base_urls = 1 << 16
    honours = GENERATION | {"base_url"}

    def __init__(self, model: str, client: ClientOptions) -> None:
        super().__init__(model, client)
        urls = list(client.base_url) or [os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL]
        self.base_urls = [u.rstrip("/") for u in urls]
        for url in self.base_urls:
            if not url.startswith(("http://", "https://")):
                raise UsageError(f"--base-url must start with http:// or https://, got {url!r}")
        # OpenAI's own API needs a key; a server of one's own usually does not.
        self.needs_key = DEFAULT_BASE_URL in self.base_urls
        self._endpoints = [f"{u}/chat/completions" for u in self.base_urls]
        self._in_flight = [0] * len(self._endpoints)
        self._next = 0
        self._headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.key_env_var or "")
        if key:
            self._headers["Authorization"] = f"Bearer {key}"
        self._session: aiohttp.ClientSession | None = None
        self.mode = 0  # index into MODES; moves on when a server refuses a response_format
        self._heads: dict[tuple[str, GenerationSettings, str | None], bytes] = {}

    def tokenizer(self) -> Tokenizer:
        from chatjudge.models.tokens import tiktoken_for  # counting: a run that sends needs none

        return tiktoken_for(self.model)

    def identity(self) -> dict[str, Any]:
        return {"provider": self.provider, "model": self.model, "base_urls": sorted(self.base_urls)}

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            import aiohttp

            # No client timeout: the run's policy times each attempt out, once, for every provider.
            connector = aiohttp.TCPConnector(limit=0, ttl_dns_cache=300)
            self._session = aiohttp.ClientSession(
                connector=connector,
                timeout=aiohttp.ClientTimeout(total=None),
                headers=self._headers,
                json_serialize=json.dumps,
            )
        return self._session

    def _body(self, request: ModelRequest) -> bytes:
        """The request body; all but the messages is serialized once per settings and schema."""
        mode = MODES[self.mode] if request.schema is not None else "instruction"
        schema = request.schema
        key = (mode, request.settings, schema.digest if schema else None)
        head = self._heads.get(key)
        if head is None:
            if len(self._heads) >= MAX_PREFIXES:
                self._heads.clear()
            head = self._heads[key] = _head(self.model, request.settings, schema, mode)
        messages = request.messages
        if mode != "json_schema" and schema is not None:  # told in words as well
            messages = with_instruction(messages, schema.instruction)
        if request.tools:  # OpenAI's own format: sent as the row holds them, ids that pair
            return (
                head
                + jsoncodec.dumps(paired(messages))
                + b', "tools": '
                + jsoncodec.dumps(request.tools)
                + b"}"
            )
        return head + jsoncodec.dumps(messages) + b"}"

    def _pick(self) -> int:
        n = len(self._endpoints)
        if n == 1:
            return 0
        start = self._next
        self._next = (start + 1) % n
        return min(range(start, start + n), key=lambda i: self._in_flight[i % n]) % n

    async def generate(self, request: ModelRequest) -> Reply:
        while True:
            mode = self.mode
            try:
                return await self._send(request)
            except (BadRequestError, ServerError) as exc:
                if (
                    request.schema is None
                    or MODES[mode] == "instruction"
                    or not _refuses_format(str(exc))
                ):
                    raise
                self.mode = max(self.mode, mode + 1)

    async def _send(self, request: ModelRequest) -> Reply:
        import aiohttp  # already imported by `_client`: a lookup

        i = self._pick()
        self._in_flight[i] += 1
        try:
            async with self._client().post(self._endpoints[i], data=self._body(request)) as resp:
                payload = await resp.read()
                if resp.status != 200:
                    raise _http_error(resp.status, payload, resp.headers)
        except ModelError:
            raise
        except aiohttp.ClientError as exc:
            raise ModelConnectionError(f"{type(exc).__name__}: {exc}") from exc
        finally:
            self._in_flight[i] -= 1
        return _reply(payload)

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def _head(
    model: str, settings: GenerationSettings, schema: OutputSchema | None, mode: str
) -> bytes:
    """The body up to the messages: `{"model": ..., ..., "messages": `."""
    body: dict[str, Any] = {
        "model": model,
        "temperature": settings.temperature,
        "max_tokens": settings.max_tokens,
    }
    if settings.seed is not None:
        body["seed"] = settings.seed
    if schema is not None and mode == "json_schema":
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": schema.name, "schema": schema.schema, "strict": True},
        }
    elif schema is not None and mode == "json_object":
        body["response_format"] = {"type": "json_object", "schema": schema.schema}
    return json.dumps(body)[:-1].encode() + b', "messages": '


def _reply(payload: bytes) -> Reply:
    try:
        data = jsoncodec.loads(payload)
        message = data["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise ServerError(f"malformed chat-completions response: {payload[:200]!r}") from exc
    text = message.get("content") or message.get("refusal") or ""
    usage = data.get("usage") or {}
    calls = message.get("tool_calls")
    return Reply(
        text,
        usage.get("prompt_tokens"),
        usage.get("completion_tokens"),
        _tool_uses(calls, payload) if calls else (),
        _text(data.get("model")),
        _text(data.get("system_fingerprint")),
    )


def _text(value: Any) -> str | None:
    """A string the provider reported, else None (absent, null, or not a string)."""
    return value if isinstance(value, str) and value else None


def _tool_uses(calls: Any, payload: bytes) -> tuple[ToolUse, ...]:
    """The calls of a reply's `tool_calls`; a call without a name is a malformed reply."""
    try:
        return tuple(
            ToolUse(str(c.get("id") or ""), c["function"]["name"], _arguments(c["function"]))
            for c in calls
        )
    except (KeyError, TypeError, AttributeError) as exc:
        raise ServerError(f"malformed tool_calls in a response: {payload[:200]!r}") from exc


def _arguments(function: dict[str, Any]) -> str:
    """The arguments as JSON text (some servers send an object rather than its text)."""
    arguments = function.get("arguments")
    if arguments is None:
        return "{}"
    return arguments if isinstance(arguments, str) else jsoncodec.dumps(arguments).decode()


def _refuses_format(message: str) -> bool:
    lowered = message.lower()
    return "response_format" in lowered or "json_schema" in lowered


def _http_error(status: int, payload: bytes, headers: Any) -> ModelError:
    message = f"HTTP {status}: {_error_message(payload)}"
    return error_for_status(status, message, retry_after=retry_after(headers))


def _error_message(payload: bytes) -> str:
    try:
        data = jsoncodec.loads(payload)
    except ValueError:
        return payload[:300].decode("utf-8", "replace")
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(error or data)[:300]
