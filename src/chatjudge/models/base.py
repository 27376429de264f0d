"""The one small interface every model provider implements.

A provider turns a `ModelRequest` (chat messages, generation settings, an optional
reply schema) into a `Reply` in `generate`, and maps its own failures onto
`chatjudge.errors` (RateLimitError, ServerError, AuthError, ...). Retries, timeouts,
rate limits, the cache and concurrency live once, in the runner, for judges and for
the models under test alike. What a provider can do is declared as attributes, which
the runner and `get_model` read: no provider checks its own key or options.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar

from chatjudge import secrets
from chatjudge.chat.types import ModelRequest, Reply

if TYPE_CHECKING:
    from chatjudge.models.tokens import Tokenizer
    from chatjudge.options import ClientOptions

GENERATION = frozenset({"temperature", "max_tokens", "seed"})


class Model(ABC):
    """A model behind one provider, named `provider/model`."""

    provider: ClassVar[str]
    supports_schema: ClassVar[bool] = False  # enforces `request.schema` itself
    # Offers `request.tools` in its own format and returns the calls in `Reply.tool_calls`.
    supports_tools: ClassVar[bool] = False
    # Computes on this machine's CPUs (llama.cpp processes): on Ray each worker takes a CPU.
    runs_locally: ClassVar[bool] = False
    needs_key: bool = False  # a key (or other credentials) must be found before any call
    key_env_var: ClassVar[str | None] = None
    # Every variable whose value this provider may send: masked out of whatever chatjudge keeps.
    secret_env_vars: ClassVar[tuple[str, ...]] = ()
    key_hint: ClassVar[str] = ""  # how to get credentials, said when none are found
    max_base_urls: ClassVar[int] = 0  # how many --base-url it can use (0: none)
    # The run options this provider honours; one it cannot is an error, not ignored.
    honours: ClassVar[frozenset[str]] = GENERATION
    max_concurrency: int | None = None  # a cap the provider imposes (local worker pools)
    # The hosts of the provider's own endpoint, whose prices the bundled price table lists
    # (`chatjudge.calls.prices`); a model reached elsewhere serves its own prices.
    official_hosts: ClassVar[frozenset[str]] = frozenset()
    # How its models are named in help texts and errors: `provider/MODEL`, and with `bare`
    # the provider's name alone too (`local`, the bundled model).
    model_hint: ClassVar[str] = "MODEL"
    bare: ClassVar[bool] = False

    def __init__(self, model: str, client: ClientOptions) -> None:
        """Every provider named by a string is built this way (`get_model` does it)."""
        self.model = model
        self.client = client
        secrets.remember_env(*self.secret_env_vars)

    @property
    def name(self) -> str:
        return f"{self.provider}/{self.model}" if self.model else self.provider

    @property
    def unwrapped(self) -> Model:
        """The model that answers the calls: this one, or the one a wrapper stands in for
        (on Ray, `RemoteModel` for the model its workers run), for prices and tokenizers."""
        return self

    def identity(self) -> dict[str, Any]:
        """What identifies this model's outputs in the cache key (never a secret)."""
        return {"provider": self.provider, "model": self.model}

    def tokenizer(self) -> Tokenizer:
        """How `--dry-run` counts this model's input tokens (default: an approximation)."""
        from chatjudge.models.tokens import Tokenizer  # counting: a run that sends needs none

        return Tokenizer()

    def credentials_found(self) -> bool:
        """Whether the credentials `needs_key` asks for are there (default: the key variable)."""
        return bool(self.key_env_var and os.environ.get(self.key_env_var))

    @abstractmethod
    async def generate(self, request: ModelRequest) -> Reply:
        """Send one request; raise a `chatjudge.errors.ModelError` subclass on failure."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook, most models hold nothing
        """Release connections, sessions or worker processes."""
