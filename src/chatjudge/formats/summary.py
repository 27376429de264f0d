"""`summary.json`: a run's counts, metrics with their intervals, usage and cost."""

from __future__ import annotations

from typing import Any, Literal

from chatjudge.formats.cost import Cost
from chatjudge.formats.provenance import Evaluator, JudgeCheck, Served
from chatjudge.formats.shared import Metric, Record, Versioned


class PassKRecord(Record):
    """What the summary's `<metric>_pass_hat_<k>` and `<metric>_pass_at_<k>` were taken over:
    tasks of several tries (rows sharing a `task_id`, or `--samples` outputs of one row)."""

    metrics: list[str]  # the 0/1 metrics with pass^k and pass@k
    max_k: int  # k runs from 1 to it: the fewest tries of a counted task
    n_tasks: int  # tasks of 2 tries or more: those counted
    single_try_tasks: int  # tasks of one try (judged ok), left out
    min_tries: int
    max_tries: int


def _from_1(data: dict[str, Any]) -> dict[str, Any]:
    """Version 2 adds the optional `pass_k` section; a version-1 summary has none."""
    return data


class Summary(Versioned):
    """`summary.json`."""

    WHAT = "summary"
    UPGRADES = {1: _from_1}

    format: int = 2
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
    # A default pydantic copies for each summary; `default_factory=list` had pydantic read
    # list's signature, compiling the tokenizer's patterns, on every run.
    skipped: list[dict[str, Any]] = []
    derived_tool_definitions: int = 0  # rows whose tool definitions were derived from calls
    unparsed_tool_arguments: int = 0  # tool calls whose arguments are not JSON, kept as written
    pass_k: PassKRecord | None = None  # tasks of several tries: what pass^k was taken over
    # An aligned protocol's provenance (`chatjudge align`): source, labels, seed, held-out.
    protocol_provenance: dict[str, Any] | None = None
    # A judge-free protocol's scorer (`tool-trajectory`): its scores are its rules', no judge's.
    scorer: str | None = None
    # The evaluator fingerprint and its parts, as run.json has them (absent: an older run).
    evaluator: Evaluator | None = None
    # Per judge: the model and system fingerprint its provider reported, counted over the
    # replies the results used (absent: an older run, or a judge-free protocol).
    served: dict[str, Served] | None = None
    judge_check: JudgeCheck | None = None  # `run --judge-check FILE`
