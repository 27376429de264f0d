"""Claude through Anthropic's official SDK (`pip install 'chatjudge[anthropic]'`).

The verdict is the input of a tool whose `input_schema` is the verdict schema, with
`tool_choice` forcing that tool: this works with every Claude model, where
`output_config` structured outputs need recent ones. The reply text is that input as
JSON. Credentials, `ANTHROPIC_BASE_URL` and the API version are the SDK's, read as it
reads them; `base_url=` (`--base-url`) overrides the URL. The SDK's own retries are
off (`max_retries=0`): the run engine retries, for every provider alike.

No sampling settings are sent: the Messages API (version 2026-10-21, sent by SDK 2.x)
refuses `temperature`, and Claude takes no seed. `settings.max_tokens` is sent.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from chatjudge.errors import (
    AuthError,
    JudgeConnectionError,
    JudgeError,
    JudgeTimeoutError,
    UsageError,
    error_for_status,
)
from chatjudge.judges.base import Judge
from chatjudge.judges.headers import retry_after
from chatjudge.types import JudgeRequest, Reply

if TYPE_CHECKING:
    import anthropic


class AnthropicJudge(Judge):
    provider = "anthropic"
    supports_schema = True
    needs_key = True
    key_env_var = "ANTHROPIC_API_KEY"

    def __init__(self, model: str, *, base_url: str | None = None, timeout: float = 120.0) -> None:
        super().__init__(model)
        try:
            import anthropic
        except ImportError as exc:
            raise UsageError(
                "anthropic/ judges need Anthropic's SDK: pip install 'chatjudge[anthropic]'"
            ) from exc
        self._sdk = anthropic
        try:
            client = anthropic.AsyncAnthropic(base_url=base_url, timeout=timeout, max_retries=0)
        except anthropic.AnthropicError as exc:  # an unreadable credentials profile
            raise AuthError(f"Anthropic credentials: {exc}") from exc
        if not (client.api_key or client.auth_token or getattr(client, "credentials", None)):
            raise AuthError(
                "ANTHROPIC_API_KEY is not set: export it to judge with anthropic/ models"
            )
        self._client = client
        self.base_url = str(client.base_url).rstrip("/")

    def identity(self) -> dict[str, Any]:
        return {"provider": self.provider, "model": self.model, "base_url": self.base_url}

    async def generate(self, request: JudgeRequest) -> Reply:
        tool = tool_name(request.schema_name)
        try:
            message = await self._client.messages.create(
                model=self.model,
                max_tokens=request.settings.max_tokens,
                messages=[{"role": "user", "content": request.prompt}],
                tools=[
                    {
                        "name": tool,
                        "description": "Record your verdict on the conversation.",
                        "input_schema": request.schema,
                    }
                ],
                tool_choice={"type": "tool", "name": tool},
            )
        except self._sdk.AnthropicError as exc:
            raise _judge_error(exc, self._sdk) from exc
        return _reply(message)

    async def aclose(self) -> None:
        await self._client.close()


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
    return Reply(text, usage.input_tokens, usage.output_tokens)


def _judge_error(exc: Exception, sdk: Any) -> JudgeError:
    """Map an SDK exception onto chatjudge's error types (their retry policy)."""
    if isinstance(exc, sdk.APITimeoutError):
        return JudgeTimeoutError(f"Anthropic: {exc}")
    if isinstance(exc, sdk.APIConnectionError):
        return JudgeConnectionError(f"Anthropic: {exc}")
    if not isinstance(exc, sdk.APIStatusError):
        return JudgeError(f"Anthropic: {type(exc).__name__}: {exc}")
    status = exc.status_code
    text = f"Anthropic HTTP {status}: {_describe(exc)}"  # 529 is `overloaded_error`
    return error_for_status(status, text, retry_after=retry_after(exc.response.headers))


def _describe(exc: Any) -> str:
    """`error_type: message` from the error body, else the SDK's message."""
    error = exc.body.get("error") if isinstance(exc.body, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return f"{error.get('type', 'error')}: {error['message']}"
    return str(exc.message)
