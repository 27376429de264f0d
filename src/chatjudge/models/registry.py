"""Every provider a model can be named after (`provider/model`), and what it can do.

A row tells the CLI, the options' help texts and the cluster code what they need before
the provider's module is imported (it may import an SDK, or check for llama.cpp): the
class, imported on first use; whether it computes on this machine's CPUs; which variable
holds its key; whether it takes `--base-url` and enforces a reply schema. The class
declares the same as attributes, for the models built from it, and
tests/models/test_registry.py keeps the two in agreement. A new provider is its module
and one row here.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chatjudge.models.base import Model


@dataclass(frozen=True)
class Provider:
    name: str
    module: str
    cls: str
    local: bool = False  # computes on this machine's CPUs (`runs_locally`), not over a network
    key_env_var: str | None = None  # the variable its key is read from (`key_env_var`)
    base_url: bool = False  # takes --base-url (`max_base_urls` > 0)
    structured: bool = False  # enforces a reply schema itself (`supports_schema`)
    bare: bool = False  # the name alone is a model (`local`: the bundled SmolLM2)
    model_hint: str = "MODEL"  # what follows `name/` in help texts

    def load(self) -> type[Model]:
        """The provider's class, importing its module (and not its SDK) now."""
        cls: type[Model] = getattr(importlib.import_module(self.module), self.cls)
        return cls

    def spellings(self) -> list[str]:
        """How a model of this provider is named: `local`, `local/PATH.gguf`."""
        named = f"{self.name}/{self.model_hint}"
        return [self.name, named] if self.bare else [named]


PROVIDERS: dict[str, Provider] = {
    p.name: p
    for p in (
        Provider(
            "local",
            "chatjudge.models.local",
            "LocalModel",
            local=True,
            structured=True,
            bare=True,
            model_hint="PATH.gguf",
        ),
        Provider(
            "openai",
            "chatjudge.models.openai",
            "OpenAIModel",
            key_env_var="OPENAI_API_KEY",
            base_url=True,
            structured=True,
        ),
        Provider(
            "anthropic",
            "chatjudge.models.anthropic",
            "AnthropicModel",
            key_env_var="ANTHROPIC_API_KEY",
            base_url=True,
            structured=True,
        ),
        Provider(
            "google",
            "chatjudge.models.google",
            "GoogleModel",
            key_env_var="GEMINI_API_KEY",
            base_url=True,
            structured=True,
        ),
    )
}


def provider_list() -> str:
    """Every way to name a model: `local, local/PATH.gguf, openai/MODEL ... or google/MODEL`."""
    names = [s for p in PROVIDERS.values() for s in p.spellings()]
    return f"{', '.join(names[:-1])} or {names[-1]}"


def base_url_providers() -> str:
    """The providers `--base-url` applies to: `openai/, anthropic/, google/`."""
    return ", ".join(f"{p.name}/" for p in PROVIDERS.values() if p.base_url)
