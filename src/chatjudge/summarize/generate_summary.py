"""The summary of `chatjudge generate` (`<out>.summary.json`), from its rows' figures: what
the command builds when it ends, and `chatjudge merge` from the rows of its shards."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

import numpy as np

from chatjudge.__about__ import __version__
from chatjudge.formats.cost import Cost
from chatjudge.formats.produced import GenerationSummary
from chatjudge.stats import bootstrap_metrics
from chatjudge.stats.intervals import guard_all

# The totals of the rows with tools: their model calls, their calls no recorded result
# matched (--tool-replay), their calls that got an error (--tools), and the rows answered
# without their tools (--no-tools).
TOOL_TOTALS = ("tool_steps", "unmatched_tool_calls", "tool_errors", "rows_without_tools")


def generation_summary(
    tokens: Mapping[int, float],
    *,
    model: str,
    field: str,
    n_rows: int,
    n_ok: int,
    failures: Mapping[str, int],
    usage: dict[str, int],
    cost: Cost | None,
    options: dict[str, Any],
    extras: Mapping[str, Any],
    tools: Mapping[str, int] | None = None,
    chatjudge_version: str = __version__,
) -> GenerationSummary:
    """`tokens`: each answered row's output tokens, by row index; `failures`: failed rows by
    cause; `extras`: the optional sections that apply (`n_skipped`/`skipped`, `shard`);
    `tools`: the totals of the rows with tools (`TOOL_TOTALS`), 0 where none is given."""
    return GenerationSummary(
        kind="generation",
        model=model,
        field=field,
        n_rows=n_rows,
        n_ok=n_ok,
        n_failed=sum(failures.values()),
        failures=dict(failures),
        metrics=token_metrics(tokens),
        usage=usage,
        cost_usd=cost.total_usd if cost else None,
        cost=cost,
        options=options,
        created=now(),
        chatjudge_version=chatjudge_version,
        **(tools or {}),
        **extras,
    )


def generated_tokens(row: Mapping[str, Any], field: str) -> tuple[bool, float | None]:
    """What the summary takes from a written row: whether it was answered, and the output
    tokens of its reply (`usage[field]`)."""
    usage = row.get("usage") if isinstance(row.get("usage"), dict) else {}
    assert isinstance(usage, dict)
    used = usage.get(field) or {}
    return row.get("status") == "ok", used.get("output_tokens")


def token_metrics(tokens: Mapping[int, float]) -> dict[str, Any]:
    """The replies' output tokens (by row index) with a 95% bootstrap interval, resampled in
    input order: the interval does not depend on which reply came back first, nor on how
    the rows were sharded."""
    ordered = np.array([tokens[index] for index in sorted(tokens)], dtype=float)
    found = guard_all(bootstrap_metrics({"output_tokens": ordered}), {"output_tokens": ordered}, {})
    return {name: est.to_dict() for name, est in found.items()}


def now() -> str:
    """A summary's `created`: UTC, to the second."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
