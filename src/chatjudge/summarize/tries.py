"""Tries of one task: which rows are attempts at the same thing, and which metrics say
whether an attempt succeeded (for pass^k and pass@k, `chatjudge.stats.passk`).

Rows are tries of one task when they share a `task_id` column, or when `simulate
--samples` or `generate --samples` wrote them from one row (ids `<id>#<k>` with a
`sample` column). The run's summary and the gate group rows the same way.
"""

from __future__ import annotations

import math
from typing import Any

from chatjudge.protocols.spec import MetricSpec, Protocol

TASK = "task_id"
PASS_HAT, PASS_AT = "pass_hat", "pass_at"


def task_of(item_id: str, fields: dict[str, Any]) -> str | None:
    """The task a row is a try of: its `task_id`, else the row a `--samples` output row
    came from (`p7#2` with a `sample` column belongs to `p7`); None: a row on its own. An
    empty `task_id` (a CSV cell, a blank string) is missing, not one task of every row."""
    value = fields.get(TASK)
    if value is not None and not (isinstance(value, float) and math.isnan(value)):
        if not isinstance(value, str):
            return str(value)
        if value.strip():
            return value
    if "sample" in fields and "#" in item_id:
        return item_id.rsplit("#", 1)[0]
    return None


def zero_one_metrics(protocol: Protocol) -> list[MetricSpec]:
    """The metrics whose one judgment is 0 or 1: a choice's share, or the mean of an integer
    score from 0 to 1 taken as it is (`accuracy`, a custom protocol's pass/fail)."""
    scores = {s.name: s for s in protocol.scores}
    found = []
    for spec in protocol.metrics:
        score = scores.get(spec.source)
        if spec.equals is not None or (
            score is not None
            and score.integer
            and (score.min, score.max) == (0, 1)
            and (spec.offset, spec.scale) == (0, 1)
        ):
            found.append(spec)
    return found


def passk_name(metric: str, kind: str, k: int) -> str:
    """`accuracy_pass_hat_2`: the summary's and the gate's name of a metric's pass^k."""
    return f"{metric}_{kind}_{k}"


def parse_passk(name: str) -> tuple[str, str, int] | None:
    """`accuracy_pass_hat_2` -> ("accuracy", "pass_hat", 2); None for another name."""
    for kind in (PASS_HAT, PASS_AT):
        head, sep, k = name.rpartition(f"_{kind}_")
        if sep and head and k.isdigit() and int(k) >= 1:
            return head, kind, int(k)
    return None
