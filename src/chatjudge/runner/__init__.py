"""The run engine: concurrency, retries, rate limits, the store and the outputs."""

from chatjudge.errors import FatalJudgeError
from chatjudge.runner.config import RunConfig
from chatjudge.runner.engine import (
    RESULTS,
    RUN_INFO,
    STORE,
    SUMMARY,
    Engine,
    RunOutcome,
)
from chatjudge.runner.paths import default_out_dir

__all__ = [
    "RESULTS",
    "RUN_INFO",
    "STORE",
    "SUMMARY",
    "Engine",
    "FatalJudgeError",
    "RunConfig",
    "RunOutcome",
    "default_out_dir",
]
