"""Judges named `provider/model`; provider modules are imported only when used."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from chatjudge.errors import UsageError
from chatjudge.judges.base import Judge


def get_judge(
    spec: str | Judge | Callable[..., Any],
    *,
    base_urls: Sequence[str] = (),
    timeout: float = 120.0,
    local_workers: int | None = None,
) -> Judge:
    """Resolve `local`, `local/PATH.gguf`, `openai/MODEL`, `anthropic/MODEL`, `google/MODEL`,
    a ready `Judge`, or a Python callable (sync or async) into a judge."""
    if isinstance(spec, Judge):
        return spec
    if callable(spec):
        from chatjudge.judges.function import FunctionJudge

        return FunctionJudge(spec)
    provider, _, model = spec.partition("/")
    if provider == "local":
        from chatjudge.judges.local import LocalJudge

        return LocalJudge(model or None, workers=local_workers)
    if not model:
        raise UsageError(f"judge '{spec}' needs a model: write it as {provider}/MODEL")
    if provider == "openai":
        from chatjudge.judges.openai import OpenAIJudge

        return OpenAIJudge(model, base_urls=base_urls, timeout=timeout)
    if provider == "anthropic":
        from chatjudge.judges.anthropic import AnthropicJudge

        return AnthropicJudge(model, base_url=_one(base_urls, provider), timeout=timeout)
    if provider == "google":
        from chatjudge.judges.google import GoogleJudge

        return GoogleJudge(model, base_url=_one(base_urls, provider), timeout=timeout)
    raise UsageError(
        f"unknown judge provider '{provider}' in '{spec}': "
        "use local, local/PATH.gguf, openai/MODEL, anthropic/MODEL or google/MODEL"
    )


def _one(base_urls: Sequence[str], provider: str) -> str | None:
    if len(base_urls) > 1:
        raise UsageError(f"{provider} judges take one --base-url, not {len(base_urls)}")
    return base_urls[0] if base_urls else None


__all__ = ["Judge", "get_judge"]
