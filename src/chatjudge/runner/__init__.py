"""The run engine: planning, executing and folding calls, with the store and the outputs."""

from chatjudge.runner.engine import Engine, RunOutcome

__all__ = ["Engine", "RunOutcome"]
