"""The files beside the rows of `generate`, `simulate` and `import`: the summaries of
`generate` and `simulate` (`<out>.summary.json`) and the record of what wrote the rows
(`<out>.run.json`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from chatjudge.__about__ import __version__
from chatjudge.formats.cost import Cost
from chatjudge.formats.shard_record import ShardRecord
from chatjudge.formats.shared import Metric, Versioned

# The roles of `simulate`, by the names its usage and its cost both use.
ASSISTANT, SIMULATED_USER = "assistant", "simulated_user"


class GenerationSummary(Versioned):
    """`<out>.summary.json` of `chatjudge generate`."""

    WHAT = "generate summary"

    format: int = 1
    kind: Literal["generation"] = "generation"
    model: str
    field: str
    n_rows: int
    n_ok: int
    n_failed: int
    failures: dict[str, int]  # failed rows by cause
    metrics: dict[str, Metric]
    usage: dict[str, int]
    cost_usd: float | None  # = cost.total_usd
    cost: Cost | None = None  # by role
    options: dict[str, Any]
    created: str
    chatjudge_version: str
    # Rows with tools: their model calls, their calls no recorded result matched
    # (--tool-replay), and their calls that got an error (--tools).
    tool_steps: int = 0
    unmatched_tool_calls: int = 0
    tool_errors: int = 0
    # Rows with tools answered without them (--no-tools): not like for like.
    rows_without_tools: int = 0
    n_skipped: int = 0
    skipped: list[dict[str, Any]] = Field(default_factory=list)
    shard: ShardRecord | None = None  # with --shard


def _simulation_from_1(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1 named the simulated user's usage `user` (its cost `simulated_user`);
    version 2 names both `simulated_user`."""
    usage = data.get("usage")
    if isinstance(usage, dict) and "user" in usage:
        data["usage"] = {SIMULATED_USER if k == "user" else k: v for k, v in usage.items()}
    return data


class SimulationSummary(Versioned):
    """`<out>.summary.json` of `chatjudge simulate`."""

    WHAT = "simulate summary"
    UPGRADES = {1: _simulation_from_1}

    format: int = 2
    kind: Literal["simulation"] = "simulation"
    n_conversations: int
    n_ok: int
    n_failed: int
    failures: dict[str, int]  # failed conversations by cause
    plain_user_replies: int  # simulated-user replies without the requested JSON
    metrics: dict[str, Metric]
    per_sample: list[dict[str, Any]] | None = None  # several samples: each one's metrics
    spread: dict[str, float | None] | None = None  # ...and the stdev of their means
    assistant: str
    user: str
    n_rows: int
    samples: int
    max_turns: int
    usage: dict[str, dict[str, int]]  # by role: assistant, simulated_user
    cost: Cost | None = None  # by role: assistant, simulated_user
    options: dict[str, Any]
    created: str
    chatjudge_version: str
    # With --tools: the assistant's model calls in its turns, and its tool calls that got an
    # error (as generate's; written only with --tools).
    tool_steps: int = 0
    tool_errors: int = 0
    n_skipped: int = 0
    skipped: list[dict[str, Any]] = Field(default_factory=list)
    shard: ShardRecord | None = None  # with --shard


class ProducedInfo(Versioned):
    """`<out>.run.json`: which command wrote the rows beside it, from what data, models and
    options (never a key); `realism.run.json`, what wrote realism's directory. `generate`,
    `simulate` and `realism` write it before their first call, as `run` writes `run.json`,
    and `import` with its rows: the same command resumes (or rewrites) that output, any other
    is refused unless `--overwrite` (`chatjudge.outputs`)."""

    WHAT = "record"

    format: int = 1
    command: Literal["generate", "simulate", "import", "realism"]
    # by role: model_under_test; assistant, simulated_user (realism: goal_model, judge too);
    # import none
    models: dict[str, str]
    field: str | None = None  # generate: the field its replies fill; realism: --protocol
    data: str  # the input's name, as `run.json`'s (import: its files' names)
    options: dict[str, Any]  # every option's value, by name
    chatjudge_version: str = __version__
