"""One judge call's outcome, as an item's calls (samples x orders x judges) hold it
until the item is finished; its protocol's kind reduces them to one verdict
(`chatjudge.protocols.kinds`). An item with any failed call is failed: a partial
verdict is never a score.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chatjudge.chat.types import Reply
from chatjudge.verdicts import Verdict


@dataclass(slots=True)
class CallOutcome:
    """One judge call's result, as recorded in `results.jsonl` under `calls`."""

    judge: str
    sample: int
    flipped: bool
    raw: str | None = None
    verdict: Verdict | None = None
    error: str | None = None
    cached: bool = False
    input_tokens: int | None = None
    output_tokens: int | None = None
    latency: float | None = None

    @property
    def ok(self) -> bool:
        return self.verdict is not None

    def settle(
        self, reply: Reply, latency: float | None, verdict: Verdict | None, error: str | None
    ) -> None:
        """Record the reply that ends this call, with its verdict or why it has none."""
        self.raw = reply.text
        self.input_tokens = reply.input_tokens
        self.output_tokens = reply.output_tokens
        self.latency = latency
        self.verdict = verdict
        self.error = error

    def to_dict(self) -> dict[str, Any]:
        v = self.verdict
        return {
            "judge": self.judge,
            "sample": self.sample,
            "flipped": self.flipped,
            "status": "ok" if v else "failed",
            "scores": v.scores if v else {},
            "label": v.label if v else None,
            "rationale": v.rationale if v else {},
            "raw": self.raw,
            "error": self.error,
            "cached": self.cached,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "latency": None if self.latency is None else round(self.latency, 4),
        }
