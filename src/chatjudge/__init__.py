"""chatjudge: evaluate multi-turn chat assistants with LLM judges."""

from chatjudge.__about__ import __version__
from chatjudge.api import EvalResult, evaluate

__all__ = ["EvalResult", "__version__", "evaluate"]
