"""Claude through Anthropic's official SDK (`pip install 'chatjudge[anthropic]'`).

A reply schema (a verdict) is the input of a tool whose `input_schema` is that schema,
with `tool_choice` forcing that tool: this works with every Claude model, where
`output_config` structured outputs need recent ones. The reply text is that input as
JSON. System messages go to the `system` parameter. Credentials, `ANTHROPIC_BASE_URL`
and the API version are the SDK's, read as it reads them; `--base-url` overrides the
URL. The SDK's own retries are off (`max_retries=0`): the run engine retries, for
every provider alike.

No sampling settings are sent: the Messages API (version 2026-10-21, sent by SDK 2.x)
refuses `temperature`, and Claude takes no seed, so `--temperature` and `--seed` are
refused for anthropic/ models rather than ignored. `max_tokens` is sent.

A model under test offered tools (a request without a schema) gets them as Anthropic's
`{name, description, input_schema}`; an assistant message's calls go as `tool_use` blocks,
and its results (`tool` messages) as `tool_result` blocks, the results of one step in ONE
user message, first in it, as the API requires (a user's text that follows joins that
message). The reply's `tool_use` blocks come back as `Reply.tool_calls`, their input as
JSON text. Arguments that are not a JSON object: `chatjudge.models.tool_wire`.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from chatjudge import secrets
from chatjudge.chat.toolcalls.call_ids import paired
from chatjudge.chat.types import Message, ModelRequest, Reply, ToolUse
from chatjudge.errors import (
    AuthError,
    ModelConnectionError,
    ModelError,
    ModelTimeoutError,
    error_for_status,
)
from chatjudge.models.base import Model
from chatjudge.models.headers import retry_after
from chatjudge.models.optional_sdk import import_sdk
from chatjudge.models.tool_wire import arguments_object, functions
from chatjudge.options import ClientOptions

if TYPE_CHECKING:
    import anthropic


class AnthropicModel(Model):
    provider = "anthropic"
    official_hosts = frozenset({"api.anthropic.com"})
    supports_schema = True
    supports_tools = True
    needs_key = True
    key_env_var = "ANTHROPIC_API_KEY"
    secret_env_vars = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
    key_hint = "export it to use anthropic/ models"
    max_base_urls = 1
    honours = frozenset({"max_tokens", "base_url"})

    def __init__(self, model: str, client: ClientOptions) -> None:
        super().__init__(model, client)
        sdk = import_sdk(
            "anthropic", provider="anthropic", extra="anthropic", what="Anthropic's SDK"
        )
        self._sdk = sdk
        base_url = client.base_url[0] if client.base_url else None
        try:
            self._client = sdk.AsyncAnthropic(
                base_url=base_url, timeout=client.timeout, max_retries=0
            )
        except sdk.AnthropicError as exc:  # an unreadable credentials profile
            raise AuthError(f"Anthropic credentials: {exc}") from exc
        self.base_url = str(self._client.base_url).rstrip("/")
        secrets.remember(self._client.api_key, "ANTHROPIC_API_KEY")  # also from a profile
        secrets.remember(self._client.auth_token, "ANTHROPIC_AUTH_TOKEN")

    def credentials_found(self) -> bool:
        """A key, an auth token or a credentials profile, as the SDK finds them."""
        c = self._client
        return bool(c.api_key or c.auth_token or getattr(c, "credentials", None))

    def identity(self) -> dict[str, Any]:
        return {"provider": self.provider, "model": self.model, "base_url": self.base_url}

    async def generate(self, request: ModelRequest) -> Reply:
        system, messages = _split_system(request.messages)
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.settings.max_tokens,
            "messages": messages,
        }
        if system:
            params["system"] = system
        if request.schema is not None:
            tool = tool_name(request.schema.name)
            params["tools"] = [
                {
                    "name": tool,
                    "description": "Record your verdict on the conversation.",
                    "input_schema": request.schema.schema,
                }
            ]
            params["tool_choice"] = {"type": "tool", "name": tool}
        elif request.tools:  # a model under test, which may call them
            params["tools"] = [
                {"name": f.name, "input_schema": f.parameters}
                | ({"description": f.description} if f.description else {})
                for f in functions(request.tools)
            ]
        try:
            message = await self._client.messages.create(**params)
        except self._sdk.AnthropicError as exc:
            raise _judge_error(exc, self._sdk) from exc
        return _reply(message) if request.schema is not None else _answer(message)

    async def aclose(self) -> None:
        await self._client.close()


def _split_system(messages: list[Message]) -> tuple[str, list[dict[str, Any]]]:
    """The Messages API takes system text apart from the turns; tool calls and results
    become content blocks (module doc), with ids that pair (`call_ids.paired`)."""
    messages = paired(messages)
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    turns: list[dict[str, Any]] = []
    for m in messages:
        role = m["role"]
        last = turns[-1] if turns else None
        # The user message that holds a step's results, which more results or text join.
        results = (
            last if last and last["role"] == "user" and isinstance(last["content"], list) else None
        )
        if role == "system":
            continue
        if role == "assistant" and m.get("tool_calls"):
            blocks: list[dict[str, Any]] = (
                [{"type": "text", "text": m["content"]}] if m["content"] else []
            )
            blocks += [
                {
                    "type": "tool_use",
                    "id": call["id"],
                    "name": call["function"]["name"],
                    "input": arguments_object(call["function"]["arguments"]),
                }
                for call in m["tool_calls"]
            ]
            turns.append({"role": "assistant", "content": blocks})
        elif role == "tool":
            block = {
                "type": "tool_result",
                "tool_use_id": m["tool_call_id"],
                "content": m["content"],
            }
            if results is not None:
                results["content"].append(block)
            else:
                turns.append({"role": "user", "content": [block]})
        elif role == "user" and results is not None:
            results["content"].append({"type": "text", "text": m["content"]})
        else:
            turns.append({"role": role, "content": m["content"]})
    return system, turns


def tool_name(schema_name: str) -> str:
    """The verdict's tool name, within what the API accepts (`^[a-zA-Z0-9_-]{1,64}$`)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", schema_name)[:64] or "verdict"


def _reply(message: anthropic.types.Message) -> Reply:
    tool_input = next((b.input for b in message.content if b.type == "tool_use"), None)
    if tool_input is not None:
        text = json.dumps(tool_input, ensure_ascii=False)
    else:  # a refusal or an answer in prose: kept as the raw reply, parsed tolerantly
        text = "".join(b.text for b in message.content if b.type == "text")
    usage = message.usage
    # Anthropic names the model that answered; it reports no system fingerprint.
    return Reply(text, usage.input_tokens, usage.output_tokens, served_model=message.model or None)


def _answer(message: anthropic.types.Message) -> Reply:
    """A model under test's reply: its text, and the tools it calls."""
    text = "".join(b.text for b in message.content if b.type == "text")
    calls = tuple(
        ToolUse(b.id, b.name, json.dumps(b.input, ensure_ascii=False))
        for b in message.content
        if b.type == "tool_use"
    )
    usage = message.usage
    return Reply(text, usage.input_tokens, usage.output_tokens, calls)


def _judge_error(exc: Exception, sdk: Any) -> ModelError:
    """Map an SDK exception onto chatjudge's error types (their retry policy)."""
    if isinstance(exc, sdk.APITimeoutError):
        return ModelTimeoutError(f"Anthropic: {exc}")
    if isinstance(exc, sdk.APIConnectionError):
        return ModelConnectionError(f"Anthropic: {exc}")
    if not isinstance(exc, sdk.APIStatusError):
        return ModelError(f"Anthropic: {type(exc).__name__}: {exc}")
    status = exc.status_code
    text = f"Anthropic HTTP {status}: {_describe(exc)}"  # 529 is `overloaded_error`
    return error_for_status(status, text, retry_after=retry_after(exc.response.headers))


def _describe(exc: Any) -> str:
    """`error_type: message` from the error body, else the SDK's message."""
    error = exc.body.get("error") if isinstance(exc.body, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return f"{error.get('type', 'error')}: {error['message']}"
    return str(exc.message)
