"""Reducing an item's judge calls (samples x orders x judges) to one verdict.

Pointwise scores: the mean over calls. Choices: per judge and sample, the two
presentation orders must agree, otherwise the pair counts as a tie (MT-Bench's
convention); then the majority over judges and samples, a tie at the top being TIE.
An item with any failed call is failed: a partial verdict is never a score.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from chatjudge.chat.types import Reply
from chatjudge.protocols.spec import TIE, Protocol
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


@dataclass(slots=True)
class ItemVerdict:
    scores: dict[str, Any] = field(default_factory=dict)
    consistent: bool | None = None
    agreement: float | None = None


def reduce_calls(protocol: Protocol, calls: list[CallOutcome]) -> ItemVerdict:
    """The item's verdict from its successful calls (all calls must be ok)."""
    if protocol.choice is None:
        return _reduce_scores(protocol, calls)
    return _reduce_choice(protocol, calls)


def _reduce_scores(protocol: Protocol, calls: list[CallOutcome]) -> ItemVerdict:
    scores: dict[str, Any] = {}
    for name in protocol.score_names:
        values = [c.verdict.scores[name] for c in calls if c.verdict]
        mean = sum(values) / len(values)
        scores[name] = int(mean) if float(mean).is_integer() else round(mean, 6)
    agreement = None
    if len(calls) > 1:
        tuples = Counter(
            tuple(c.verdict.scores[n] for n in protocol.score_names) for c in calls if c.verdict
        )
        agreement = tuples.most_common(1)[0][1] / len(calls)
    return ItemVerdict(scores, None, agreement)


def _reduce_choice(protocol: Protocol, calls: list[CallOutcome]) -> ItemVerdict:
    assert protocol.choice is not None
    name = protocol.choice.name
    groups: dict[tuple[str, int], list[str]] = defaultdict(list)
    for c in calls:
        assert c.verdict is not None
        groups[(c.judge, c.sample)].append(c.verdict.scores[name])
    consistent: bool | None = None
    votes: list[str] = []
    for sides in groups.values():
        if len(sides) == 2:
            same = sides[0] == sides[1]
            consistent = same if consistent is None else consistent and same
            votes.append(sides[0] if same else TIE)
        else:
            votes.extend(sides)
    ranked = Counter(votes).most_common()
    top = ranked[0][0] if len(ranked) == 1 or ranked[0][1] > ranked[1][1] else TIE
    agreement = sum(v == top for v in votes) / len(votes) if len(votes) > 1 else None
    scores = {name: top}
    for s in protocol.scores:  # a custom pairwise protocol may also carry scores
        values = [c.verdict.scores[s.name] for c in calls if c.verdict]
        scores[s.name] = sum(values) / len(values)
    return ItemVerdict(scores, consistent, agreement)
