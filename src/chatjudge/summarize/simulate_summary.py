"""The summary of `chatjudge simulate` (`<out>.summary.json`), from its conversations'
figures: what the command builds when it ends, and `chatjudge merge` from the rows of its
shards.

A conversation's figures (`Conversation`): `order` (its place in input order: row index
× samples + sample), `sample`, `ok`, `cause` (why it failed), `turns`,
`assistant_tokens`, `ended` ("user", "max_turns" or None), `restates` (the first message
restates the goal) and `plain` (simulated-user replies taken whole).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from chatjudge.__about__ import __version__
from chatjudge.formats.cost import Cost
from chatjudge.formats.produced import ASSISTANT, SimulationSummary
from chatjudge.stats import bootstrap_metrics
from chatjudge.stats.intervals import Range, guard_all
from chatjudge.summarize.generate_summary import now
from chatjudge.summarize.ranges import SIMULATION_RANGES

Conversation = dict[str, Any]
METRICS = (
    "turns",
    "assistant_tokens",
    "ended_by_user",
    "ended_by_max_turns",
    "first_message_restates_question",
)
SIMULATION_TOOLS = ("tool_steps", "tool_errors")  # the totals of `--tools`


def simulation_summary(
    conversations: Iterable[Conversation],
    *,
    samples: int,
    assistant: str,
    user: str,
    n_rows: int,
    max_turns: int,
    usage: dict[str, dict[str, int]],
    cost: Cost | None,
    options: dict[str, Any],
    extras: Mapping[str, Any],
    failures: Mapping[str, int] | None = None,
    plain_user_replies: int | None = None,
    tools: Mapping[str, int] | None = None,
    chatjudge_version: str = __version__,
) -> SimulationSummary:
    """Over finished conversations each metric with its 95% bootstrap interval; with
    several samples per row, each sample's means and their spread. Conversations are taken
    in input order (`order`), so that the intervals depend neither on which conversation
    finished first nor on sharding. `failures` and `plain_user_replies`, when given, stand
    for the conversations' own causes and counts (rows do not keep them: merge adds up its
    shards'); `usage` is by role, `assistant` and `simulated_user`, as `cost`; `tools`,
    with `--tools` only: the totals `tool_steps` and `tool_errors`."""
    ordered = sorted(conversations, key=lambda c: c["order"])
    ok = [c for c in ordered if c["ok"]]
    if failures is None:
        counted: dict[str, int] = {}
        for c in ordered:
            if c["cause"]:
                counted[c["cause"]] = counted.get(c["cause"], 0) + 1
        failures = counted
    optional: dict[str, Any] = {}
    if samples > 1:
        by_sample = [
            _metrics([c for c in ok if c["sample"] == k], max_turns) for k in range(samples)
        ]
        optional["per_sample"] = [{"sample": k, "metrics": m} for k, m in enumerate(by_sample)]
        optional["spread"] = {
            name: _stdev([m[name]["value"] for m in by_sample]) for name in METRICS
        }
    return SimulationSummary(
        kind="simulation",
        n_conversations=len(ordered),
        n_ok=len(ok),
        n_failed=len(ordered) - len(ok),
        failures=dict(failures),
        plain_user_replies=(
            sum(c["plain"] for c in ordered) if plain_user_replies is None else plain_user_replies
        ),
        metrics=_metrics(ok, max_turns),
        **optional,
        assistant=assistant,
        user=user,
        n_rows=n_rows,
        samples=samples,
        max_turns=max_turns,
        usage=usage,
        cost=cost,
        options=options,
        created=now(),
        chatjudge_version=chatjudge_version,
        **(tools or {}),
        **extras,
    )


def conversation_of(order: int, row: Mapping[str, Any]) -> Conversation:
    """A written row's figures (its cause of failure and plain replies are not in it)."""
    usage = row.get("usage") if isinstance(row.get("usage"), dict) else {}
    assert isinstance(usage, dict)
    return {
        "order": order,
        "sample": row.get("sample", 0),
        "ok": row.get("status") == "ok",
        "cause": None,
        "turns": row.get("turns"),
        "assistant_tokens": (usage.get(ASSISTANT) or {}).get("output_tokens"),
        "ended": row.get("ended"),
        "restates": row.get("first_message_restates_question"),
        "plain": 0,
    }


def _metrics(conversations: list[Conversation], max_turns: int) -> dict[str, Any]:
    """Each figure's mean with its interval valid at this size (`stats.intervals`): a
    conversation takes at most `max_turns` turns; tokens have no known range."""
    columns = {
        "turns": [float(c["turns"]) for c in conversations],
        "assistant_tokens": [float(c["assistant_tokens"]) for c in conversations],
        "ended_by_user": [float(c["ended"] == "user") for c in conversations],
        "ended_by_max_turns": [float(c["ended"] == "max_turns") for c in conversations],
        "first_message_restates_question": [float(c["restates"]) for c in conversations],
    }
    ranges = {**SIMULATION_RANGES, "turns": Range(0.0, float(max(max_turns, 1)))}
    found = bootstrap_metrics(columns)
    arrays = {name: np.asarray(column, dtype=float) for name, column in columns.items()}
    return {name: est.to_dict() for name, est in guard_all(found, arrays, ranges).items()}


def _stdev(values: list[float | None]) -> float | None:
    """Standard deviation of the samples' means (None with fewer than two)."""
    present = [v for v in values if v is not None]
    return statistics.stdev(present) if len(present) > 1 else None
