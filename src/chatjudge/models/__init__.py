"""Models named `provider/model`, for judges and for the models under test.

Providers are listed in `registry.py` (built in, or another distribution's entry point
in the group `chatjudge.providers`); their modules are imported only when used, and what
each can do its class declares. `get_model` is the one place that builds a provider, checks
its credentials and refuses options it cannot honour.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from chatjudge.errors import AuthError, UsageError
from chatjudge.models import registry
from chatjudge.models.base import Model

if TYPE_CHECKING:
    from chatjudge.options import ClientOptions, RunConfig

ModelSpec = str | Model | Callable[..., Any]


def get_model(
    spec: ModelSpec,
    client: ClientOptions | None = None,
    *,
    call_with: str = "prompt",
    check_key: bool = True,
) -> Model:
    """Resolve a provider's model name (`local`, `openai/MODEL`, ...: `registry`),
    a ready `Model`, or a Python callable (sync or async) into a model.

    A callable judge is called as `fn(prompt[, schema])`; with `call_with="messages"` (a
    model under test) as `fn(messages)`, or `fn(messages, tools=...)` when it takes tools.
    """
    if isinstance(spec, Model):
        return spec
    if callable(spec):
        from chatjudge.models.function import function_model

        return function_model(spec, call_with=call_with)
    from chatjudge.options import ClientOptions

    provider, _, name = spec.partition("/")
    cls = registry.load(provider)
    if cls is None:
        raise UsageError(
            f"unknown judge provider '{provider}' in '{spec}': use {registry.provider_list()}"
        )
    if not name and not cls.bare:
        raise UsageError(f"judge '{spec}' needs a model: write it as {provider}/{cls.model_hint}")
    client = client or ClientOptions()
    if len(client.base_url) > cls.max_base_urls:
        raise UsageError(_too_many_urls(cls, len(client.base_url)))
    model = cls(name, client)
    if check_key and model.needs_key and not model.credentials_found():
        raise AuthError(f"{model.key_env_var} is not set: {model.key_hint}")
    return model


def check_options(models: Sequence[Model], config: RunConfig) -> None:
    """Refuse an option that a model cannot honour, instead of ignoring it.

    A generation setting changes every verdict, so every model must take it; an
    option that configures one kind of model (`--base-url`, `--local-workers`) needs
    at least one model that takes it.
    """
    changed = config.changed()
    for name in changed.keys() & {"temperature", "max_tokens", "seed"}:
        for model in models:
            if name not in model.honours:
                raise UsageError(f"{model.name} cannot honour --{name.replace('_', '-')}")
    for name in changed.keys() & {"base_url", "local_workers"}:
        if not any(name in m.honours for m in models):
            flag = "--" + name.replace("_", "-")
            names = ", ".join(m.name for m in models)
            raise UsageError(f"{flag} applies to none of the judges given ({names})")


def _too_many_urls(cls: type[Model], given: int) -> str:
    if cls.max_base_urls == 0:
        return f"{cls.provider} models take no --base-url"
    return f"{cls.provider} models take one --base-url, not {given}"


__all__ = ["Model", "ModelSpec", "check_options", "get_model"]
