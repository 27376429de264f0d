"""The run engine: planning, executing and folding calls, with the store and the outputs;
`build_engine` sets a run up (`chatjudge.preflight`) and assembles it."""

from chatjudge.runner.build import build_engine
from chatjudge.runner.engine import Engine, RunOutcome

__all__ = ["Engine", "RunOutcome", "build_engine"]
