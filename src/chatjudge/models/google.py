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
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from chatjudge.errors import (
    AuthError,
    BadRequestError,
    ModelConnectionError,
    ModelError,
    ModelTimeoutError,
    error_for_status,
)
from chatjudge.models.base import GENERATION, Model
from chatjudge.models.headers import retry_after
from chatjudge.models.sdk import import_sdk
from chatjudge.options import ClientOptions
from chatjudge.types import Message, ModelRequest, Reply

if TYPE_CHECKING:
    from google.genai import types

_SETUP = (
    "set GEMINI_API_KEY for the Gemini API, or GOOGLE_GENAI_USE_VERTEXAI=true with "
    "GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION for Vertex AI"
)


class GoogleModel(Model):
    provider = "google"
    official_hosts = frozenset({"generativelanguage.googleapis.com"})
    supports_schema = True
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
        schema: dict[str, Any] = {}
        if request.schema is not None:
            schema = {
                "response_mime_type": "application/json",
                "response_json_schema": request.schema.schema,
            }
        config = self._types.GenerateContentConfig(
            system_instruction=system or None,
            temperature=settings.temperature,
            max_output_tokens=settings.max_tokens,
            seed=settings.seed,
            **schema,
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
        return _reply(response)

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
    (Gemini calls the assistant's role `model`)."""
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    turns = [m for m in messages if m["role"] != "system"]
    if len(turns) == 1 and turns[0]["role"] == "user":
        return system, turns[0]["content"]
    return system, [
        {"role": "model" if m["role"] == "assistant" else "user", "parts": [{"text": m["content"]}]}
        for m in turns
    ]


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


def _reply(response: types.GenerateContentResponse) -> Reply:
    text = response.text
    if text is None:
        feedback = response.prompt_feedback
        if feedback is not None and feedback.block_reason is not None:
            raise BadRequestError(f"Google blocked the prompt: {feedback.block_reason}")
        finish = response.candidates[0].finish_reason if response.candidates else None
        raise BadRequestError(f"Google returned no text (finish reason {finish})")
    usage = response.usage_metadata
    if usage is None:
        return Reply(text)
    output = None
    if usage.candidates_token_count is not None:
        output = usage.candidates_token_count + (usage.thoughts_token_count or 0)
    return Reply(text, usage.prompt_token_count, output)
