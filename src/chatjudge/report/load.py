"""What the page needs from a run's results (read through `chatjudge.rundir.RunDir`), item
by item.

A run may hold 100,000 items, so results are never loaded whole: they are read one
line at a time, counting what the charts and filters need as they go by.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ResultStats:
    """What one pass over the results tells the page: score values, statuses, consistency."""

    n_items: int = 0
    status: Counter[str] = field(default_factory=Counter)
    scores: dict[str, Counter[Any]] = field(default_factory=dict)  # score -> value -> items
    consistent: Counter[bool] = field(default_factory=Counter)
    has_agreement: bool = False

    def add(self, item: dict[str, Any]) -> None:
        self.n_items += 1
        self.status[item.get("status", "failed")] += 1
        scores = self.scores
        for name, value in (item.get("scores") or {}).items():
            counts = scores.get(name)
            if counts is None:  # not setdefault: a Counter made per score per item costs
                counts = scores[name] = Counter()
            if value is not None:  # null: the item has none (a precision over no call)
                counts[value] += 1
        if item.get("consistent") is not None:
            self.consistent[bool(item["consistent"])] += 1
        if item.get("agreement") is not None:
            self.has_agreement = True

    def numeric_scores(self) -> list[str]:
        return [n for n, c in self.scores.items() if not any(isinstance(v, str) for v in c)]

    def choice_scores(self) -> list[str]:
        return [n for n, c in self.scores.items() if any(isinstance(v, str) for v in c)]


def slim_item(item: dict[str, Any]) -> dict[str, Any]:
    """The item as the page needs it, without text it already has elsewhere.

    A successful call's raw reply repeats its verdict and rationale, and the item's
    own `raw` and `rationale` repeat its first call's; failed calls keep their raw text.
    """
    slim = {k: v for k, v in item.items() if k not in ("format", "raw", "rationale")}
    calls = item.get("calls") or []
    if not calls:  # nothing else holds the judge's words
        slim.update({k: item[k] for k in ("raw", "rationale") if item.get(k)})
    elif item.get("rationale") and not any(c.get("rationale") for c in calls):
        slim["rationale"] = item["rationale"]  # a deterministic scorer's, written once
    slim["calls"] = [
        c if c.get("status") != "ok" else {k: v for k, v in c.items() if k != "raw"} for c in calls
    ]
    return slim


def whole_item(item: dict[str, Any]) -> bool:
    """Whether `slim_item` would leave out nothing but nulls and the format: no raw reply
    anywhere, and its rationale written once (a deterministic scorer's record)."""
    calls = item.get("calls") or []
    return (
        item.get("raw") is None
        and all(c.get("raw") is None for c in calls)
        and not (item.get("rationale") and any(c.get("rationale") for c in calls))
    )
