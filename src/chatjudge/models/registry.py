"""Every provider a model can be named after (`provider/model`): where its class is.

The registry says only where a provider's class lives: `BUILTIN` for chatjudge's own,
and the entry points of the group `chatjudge.providers` for those of other
distributions (`myprov = "pkg.module:MyModel"`). What a provider can do (its key, its
reply schema, `--base-url`, how its models are spelt) its class declares, once, as
attributes (`chatjudge.models.base.Model`). A class is imported when first used, and its
module imports its SDK only when a model of it is built.
"""

from __future__ import annotations

import functools
import importlib
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING

from chatjudge.errors import UsageError

if TYPE_CHECKING:
    from chatjudge.models.base import Model

GROUP = "chatjudge.providers"

# A new built-in provider is its module and one entry here.
BUILTIN: dict[str, str] = {
    "local": "chatjudge.models.local:LocalModel",
    "openai": "chatjudge.models.openai:OpenAIModel",
    "anthropic": "chatjudge.models.anthropic:AnthropicModel",
    "google": "chatjudge.models.google:GoogleModel",
}


def load(name: str) -> type[Model] | None:
    """The class of the provider `name` (None: no such provider), importing its module now.

    A name that a built-in and an installed distribution both declare, or two
    distributions do, is refused rather than resolved one way in silence."""
    found = [ep for ep in _entry_points() if ep.name == name]
    if name in BUILTIN and found:
        raise UsageError(
            f"provider '{name}' is built in, and {_origin(found[0])} declares it too "
            f"(entry point group {GROUP}): uninstall that distribution or rename its entry point"
        )
    if len(found) > 1:
        both = " and ".join(_origin(ep) for ep in found)
        raise UsageError(f"provider '{name}' is declared twice, by {both}: uninstall one")
    if name in BUILTIN:
        return _builtin(name)
    return _load_entry_point(found[0]) if found else None


def names() -> list[str]:
    """Every provider's name: the built-in ones, then the installed distributions'."""
    others = (ep.name for ep in _entry_points() if ep.name not in BUILTIN)
    return [*BUILTIN, *dict.fromkeys(others)]


def provider_list() -> str:
    """Every way to name a model: `local, local/PATH.gguf, openai/MODEL ... or google/MODEL`.

    A distribution's provider is listed as `NAME/MODEL` without importing it."""
    spellings = [s for name in BUILTIN for s in spellings_of(name, _builtin(name))]
    spellings += [f"{n}/MODEL" for n in names() if n not in BUILTIN]
    return f"{', '.join(spellings[:-1])} or {spellings[-1]}"


def base_url_providers() -> str:
    """The built-in providers `--base-url` applies to: `openai/, anthropic/, google/`."""
    return ", ".join(f"{n}/" for n in BUILTIN if _builtin(n).max_base_urls > 0)


def builtin_secret_env_vars() -> tuple[str, ...]:
    """The variables of every built-in provider's keys (its class declares them): text that
    no provider sent, a tool's result, may quote any of them."""
    return tuple(v for name in BUILTIN for v in _builtin(name).secret_env_vars)


def spellings_of(name: str, cls: type[Model]) -> list[str]:
    """How a model of the provider is named: `local`, `local/PATH.gguf`."""
    named = f"{name}/{cls.model_hint}"
    return [name, named] if cls.bare else [named]


def _builtin(name: str) -> type[Model]:
    module, _, attr = BUILTIN[name].partition(":")
    cls: type[Model] = getattr(importlib.import_module(module), attr)
    return cls


@functools.cache
def _entry_points() -> tuple[EntryPoint, ...]:
    """The group's entry points, read once a process (the installed distributions')."""
    return tuple(entry_points(group=GROUP))


def _origin(ep: EntryPoint) -> str:
    dist = ep.dist
    named = f"{dist.name} {dist.version}" if dist is not None else "a distribution"
    return f"{named} ({ep.name} = {ep.value!r})"


def _load_entry_point(ep: EntryPoint) -> type[Model]:
    """A distribution's provider class; one that cannot be imported, or is not a `Model`
    of that name, is an error naming the distribution."""
    from chatjudge.models.base import Model

    try:
        cls = ep.load()
    except Exception as exc:  # whatever its import raises, it is that distribution's fault
        raise UsageError(
            f"provider '{ep.name}' of {_origin(ep)} cannot be loaded: {type(exc).__name__}: {exc}"
        ) from exc
    if not (isinstance(cls, type) and issubclass(cls, Model)):
        raise UsageError(
            f"provider '{ep.name}' of {_origin(ep)} is not a chatjudge.models.Model subclass"
        )
    if getattr(cls, "provider", None) != ep.name:
        raise UsageError(
            f"provider '{ep.name}' of {_origin(ep)}: its class declares provider "
            f"{getattr(cls, 'provider', None)!r}, not {ep.name!r}"
        )
    return cls
