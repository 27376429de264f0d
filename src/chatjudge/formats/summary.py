"""`summary.json`: a run's counts, metrics with their intervals, usage and cost."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from chatjudge.formats.base import Metric, Versioned
from chatjudge.formats.cost import Cost


class Summary(Versioned):
    """`summary.json`."""

    WHAT = "summary"

    format: int = 1
    protocol: str
    kind: Literal["pointwise", "pairwise"]
    judge: str
    judges: list[str]
    n_items: int
    n_ok: int
    n_failed: int
    metrics: dict[str, Metric]
    samples: int
    flip: bool
    usage: dict[str, int]
    cost_usd: float | None  # = cost.total_usd
    cost: Cost | None = None  # by role
    per_judge: dict[str, Any]
    created: str
    chatjudge_version: str
    simulation: dict[str, Metric] | None = None  # simulated conversations, when judged
    style_control: dict[str, Any] | None = None  # pairwise: coefficients behind *_controlled_*
    n_skipped: int = 0  # rows left out by --skip-invalid, listed in `skipped`
    skipped: list[dict[str, Any]] = Field(default_factory=list)
    derived_tool_definitions: int = 0  # rows whose tool definitions were derived from calls
    unparsed_tool_arguments: int = 0  # tool calls whose arguments are not JSON, kept as written
