"""chatjudge: evaluate multi-turn chat assistants with LLM judges."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chatjudge.__about__ import __version__

if TYPE_CHECKING:
    from chatjudge.api import EvalResult, align, estimate, evaluate, export, gate
    from chatjudge.produce import generate, simulate
    from chatjudge.user_realism.measuring import realism


def __getattr__(name: str) -> Any:
    # Imported on first use, so `chatjudge --help` and light imports stay fast.
    if name in ("evaluate", "estimate", "gate", "align", "export", "EvalResult"):
        from chatjudge import api

        return getattr(api, name)
    if name == "realism":
        from chatjudge.user_realism.measuring import realism

        return realism
    if name in ("generate", "simulate"):
        from chatjudge import produce

        return getattr(produce, name)
    raise AttributeError(f"module 'chatjudge' has no attribute {name!r}")


__all__ = [
    "EvalResult",
    "__version__",
    "align",
    "estimate",
    "evaluate",
    "export",
    "gate",
    "generate",
    "realism",
    "simulate",
]
