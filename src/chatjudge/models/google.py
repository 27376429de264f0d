"""Gemini through Google's official `google-genai` SDK, on the Gemini API or Vertex AI.

`pip install 'chatjudge[google]'`. The backend and credentials are the SDK's, read from
its environment variables: `GEMINI_API_KEY` / `GOOGLE_API_KEY` for the Gemini API;
`GOOGLE_GENAI_USE_VERTEXAI=true` with `GOOGLE_CLOUD_PROJECT` and `GOOGLE_CLOUD_LOCATION`
(application default credentials) or with an API key (express mode) for Vertex AI.

The verdict schema goes as `response_json_schema` with `response_mime_type`
`application/json`: Gemini takes JSON Schema as is there, `additionalProperties`
included, so no conversion to its OpenAPI dialect is needed. The SDK's retries are off
(one attempt): the run engine retries, for every provider alike.

`--base-url` replaces the endpoint's host. On Vertex AI the SDK would take
a base URL with a project and location that come only from the environment for an API
gateway (no project in the path, no credentials); the judge passes them on explicitly,
so the request keeps its project path and its credentials.

A model under test offered tools gets them as one `Tool` of function declarations, each
with its JSON Schema as `parameters_json_schema` (taken as is, like the verdict schema).
An assistant message's calls go as `function_call` parts of a `model` turn, its results
(`tool` messages) as `function_response` parts of one `user` turn, named after the call
they answer, the response `{"output": TEXT}` (or the object the text holds). Gemini 3
refuses replayed calls without the thought signature it gave them, which chatjudge does
not keep (a recorded conversation never had one): each call sent carries Google's
documented placeholder, `skip_thought_signature_validator`. The reply's `function_call`
parts come back as `Reply.tool_calls`, with their ids, or `call_N` (N counting the calls
of the conversation) where the API gives none. The SDK never runs a function itself
(automatic function calling is off).
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

from chatjudge.chat.toolcalls.call_ids import paired
from chatjudge.chat.types import Message, ModelRequest, Reply, ToolUse
from chatjudge.errors import (
    AuthError,
    BadRequestError,
    ModelConnectionError,
    ModelError,
    ModelTimeoutError,
    ServerError,
    error_for_status,
)
from chatjudge.jsoncodec import finite
from chatjudge.models.base import GENERATION, Model
from chatjudge.models.headers import retry_after
from chatjudge.models.optional_sdk import import_sdk
from chatjudge.models.tool_wire import arguments_object, call_names, functions
from chatjudge.options import ClientOptions

if TYPE_CHECKING:
    from google.genai import types

# Google's documented stand-in for a call's thought signature (see the module doc).
NO_SIGNATURE = "skip_thought_signature_validator"
_SETUP = (
    "set GEMINI_API_KEY for the Gemini API, or GOOGLE_GENAI_USE_VERTEXAI=true with "
    "GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION for Vertex AI"
)


class GoogleModel(Model):
    provider = "google"
    official_hosts = frozenset({"generativelanguage.googleapis.com"})
    supports_schema = True
    supports_tools = True
    needs_key = True
    key_env_var = "GEMINI_API_KEY"
    secret_env_vars = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    key_hint = _SETUP
    max_base_urls = 1
    honours = GENERATION | {"base_url"}

    def __init__(self, model: str, client: ClientOptions) -> None:
        super().__init__(model, client)
        import_sdk("google.genai", provider="google", extra="google", what="Google's SDK")
        import google.auth.exceptions
        from google import genai
        from google.genai import errors, types

        self._types, self._errors, self._auth_errors = types, errors, google.auth.exceptions
        base_url = client.base_url[0] if client.base_url else None
        options = types.HttpOptions(
            base_url=base_url,
            timeout=round(client.timeout * 1000),  # milliseconds
            retry_options=types.HttpRetryOptions(attempts=1),
        )
        self._client: Any = None
        try:
            sdk_client = genai.Client(http_options=options)
            project = os.environ.get("GOOGLE_CLOUD_PROJECT")
            location = os.environ.get("GOOGLE_CLOUD_LOCATION")
            if base_url and sdk_client.vertexai and project and location:
                sdk_client = genai.Client(http_options=options, project=project, location=location)
        except ValueError:  # no key for the Gemini API: `credentials_found()` says so
            return
        except google.auth.exceptions.GoogleAuthError as exc:
            raise AuthError(f"Google credentials: {exc} ({_SETUP})") from exc
        self._client = sdk_client
        self.base_url = base_url
        self.backend = "vertex-ai" if sdk_client.vertexai else "gemini-api"

    def credentials_found(self) -> bool:
        """The SDK found a key or Vertex AI settings (default credentials load at first use)."""
        return self._client is not None

    def identity(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "model": self.model,
            "backend": self.backend,
            "base_url": self.base_url,
        }

    async def generate(self, request: ModelRequest) -> Reply:
        settings = request.settings
        system, contents = _contents(request.messages)
        types = self._types
        extra: dict[str, Any] = {}
        if request.schema is not None:
            extra = {
                "response_mime_type": "application/json",
                "response_json_schema": request.schema.schema,
            }
        if request.tools:
            declarations = [
                types.FunctionDeclaration(
                    name=f.name, description=f.description, parameters_json_schema=f.parameters
                )
                for f in functions(request.tools)
            ]
            extra |= {
                "tools": [types.Tool(function_declarations=declarations)],
                "automatic_function_calling": types.AutomaticFunctionCallingConfig(disable=True),
            }
        config = types.GenerateContentConfig(
            system_instruction=system or None,
            temperature=settings.temperature,
            max_output_tokens=settings.max_tokens,
            seed=settings.seed,
            **extra,
        )
        try:
            response = await self._client.aio.models.generate_content(
                model=self.model, contents=contents, config=config
            )
        except Exception as exc:
            error = self._judge_error(exc)
            if error is None:
                raise
            raise error from exc
        calls = sum(len(m.get("tool_calls", ())) for m in request.messages)
        return _reply(response, calls)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aio.aclose()
            self._client.close()

    def _judge_error(self, exc: Exception) -> ModelError | None:
        """Map an SDK, auth or transport exception onto chatjudge's error types."""
        import aiohttp  # the SDK's transport, imported by it (help texts read this class)

        if isinstance(exc, self._errors.APIError):
            return _api_error(exc)
        if isinstance(exc, TimeoutError):  # aiohttp's timeouts are TimeoutErrors too
            return ModelTimeoutError(f"Google: no reply in time ({type(exc).__name__})")
        auth = self._auth_errors
        if isinstance(exc, auth.RefreshError | auth.DefaultCredentialsError):
            return AuthError(f"Google credentials: {exc} ({_SETUP})")
        # The SDK's async transport is aiohttp whenever aiohttp is installed, as it is here.
        if isinstance(exc, auth.TransportError | aiohttp.ClientError | OSError):
            return ModelConnectionError(f"Google: {type(exc).__name__}: {exc}")
        return None


def _contents(messages: list[Message]) -> tuple[str, Any]:
    """System text apart; one user message is sent as plain text, a conversation as turns
    (Gemini calls the assistant's role `model`; tool calls and results: module doc)."""
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    turns = [m for m in paired(messages) if m["role"] != "system"]
    if len(turns) == 1 and turns[0]["role"] == "user":
        return system, turns[0]["content"]
    names = call_names(turns)
    contents: list[dict[str, Any]] = []
    for m in turns:
        if m["role"] == "tool":
            part = {"function_response": _response(m, names)}
            last = contents[-1] if contents else None
            if last is not None and "function_response" in last["parts"][-1]:
                last["parts"].append(part)  # one step's results in one turn
            else:
                contents.append({"role": "user", "parts": [part]})
            continue
        parts: list[dict[str, Any]] = [{"text": m["content"]}] if m["content"] else []
        parts += [
            {
                "function_call": {
                    "id": call["id"],
                    "name": call["function"]["name"],
                    "args": arguments_object(call["function"]["arguments"]),
                },
                "thought_signature": NO_SIGNATURE,
            }
            for call in m.get("tool_calls", ())
        ]
        role = "model" if m["role"] == "assistant" else "user"
        contents.append({"role": role, "parts": parts or [{"text": ""}]})
    return system, contents


def _response(message: Message, names: dict[str, str]) -> dict[str, Any]:
    """A tool message as Gemini's function response: the called function's name, and the
    result as the object its text holds (its NaN and infinity as null: the request is
    JSON), else as `{"output": TEXT}`."""
    ident = message.get("tool_call_id", "")
    if ident not in names:
        raise BadRequestError(f"a tool result answers no call in the conversation ({ident!r})")
    try:
        value = finite(json.loads(message["content"]))
    except ValueError:
        value = None
    output = value if isinstance(value, dict) else {"output": message["content"]}
    return {"id": ident, "name": names[ident], "response": output}


def _api_error(exc: Any) -> ModelError:
    """An HTTP error from the API, by status code and `google.rpc` status name."""
    code, status = exc.code, exc.status or ""
    text = f"Google HTTP {code} {status}: {exc.message}".replace("  ", " ")
    kind = code  # the status whose meaning applies; the error keeps the real one
    if status == "RESOURCE_EXHAUSTED":
        kind = 429
    elif status in ("UNAUTHENTICATED", "PERMISSION_DENIED") or any(
        str(d.get("reason", "")).startswith("API_KEY_") for d in _details(exc)
    ):
        kind = 401  # a bad key comes back as 400 INVALID_ARGUMENT with reason API_KEY_INVALID
    elif status in ("UNAVAILABLE", "INTERNAL") and not isinstance(code, int):
        kind = 503
    if not isinstance(kind, int) or kind < 400:
        return ModelError(text, status=code)
    error = error_for_status(kind, text, retry_after=_retry_delay(exc) if kind == 429 else None)
    error.status = code
    return error


def _details(exc: Any) -> list[dict[str, Any]]:
    """The `google.rpc` detail objects of an error body (`error.details`)."""
    body = exc.details if isinstance(exc.details, dict) else {}
    error = body.get("error", body)
    details = error.get("details") if isinstance(error, dict) else None
    return [d for d in details or [] if isinstance(d, dict)]


def _retry_delay(exc: Any) -> float | None:
    """Seconds from the error's `RetryInfo.retryDelay` (`"7s"`), else its Retry-After header."""
    for detail in _details(exc):
        if str(detail.get("@type", "")).endswith("google.rpc.RetryInfo"):
            delay = detail.get("retryDelay")
            if isinstance(delay, str) and delay.endswith("s"):
                try:
                    return max(0.0, float(delay[:-1]))
                except ValueError:
                    pass
    headers = getattr(exc.response, "headers", None)
    return retry_after(headers) if headers is not None else None


def _reply(response: types.GenerateContentResponse, calls_before: int = 0) -> Reply:
    """The reply's text and the calls it makes (`calls_before`: the conversation's, which
    number the calls the API gives no id)."""
    called = response.function_calls or []
    if any(not c.name for c in called):
        raise ServerError(f"Google returned a function call without a name: {called}")
    calls = tuple(
        ToolUse(
            c.id or f"call_{calls_before + n}",
            c.name or "",
            json.dumps(c.args or {}, ensure_ascii=False),
        )
        for n, c in enumerate(called, 1)
    )
    text: str | None
    if calls:  # the text parts beside them, never thoughts (`response.text` warns here)
        parts = response.candidates[0].content.parts  # type: ignore[index, union-attr]
        text = "".join(p.text for p in parts or [] if p.text and not p.thought)
    else:
        text = response.text
    if text is None:
        feedback = response.prompt_feedback
        if feedback is not None and feedback.block_reason is not None:
            raise BadRequestError(f"Google blocked the prompt: {feedback.block_reason}")
        finish = response.candidates[0].finish_reason if response.candidates else None
        raise BadRequestError(f"Google returned no text (finish reason {finish})")
    usage = response.usage_metadata
    served = response.model_version or None  # the model that answered; no fingerprint
    if usage is None:
        return Reply(text, tool_calls=calls, served_model=served)
    output = None
    if usage.candidates_token_count is not None:
        output = usage.candidates_token_count + (usage.thoughts_token_count or 0)
    return Reply(text, usage.prompt_token_count, output, calls, served)
