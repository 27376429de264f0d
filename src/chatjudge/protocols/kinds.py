"""What a protocol's kind decides, one class per kind: the commands ask the kind, never
its name.

A protocol's `kind` (its TOML, `summary.json`) is the persisted text, "pointwise" or
"pairwise"; a protocol with a `scorer` is judge-free (`Deterministic`, written as
"pointwise"). `kind_of(protocol)` and `kind_named(text, scorer)` (for a run's summary)
give the object. Each kind owns:
- how an item's calls reduce to its scores (`reduce`);
- the gate's effect and labels: the metrics it gates on (`gate_metrics`, `gate_spec`),
  whether one run alone holds a comparison (`one_run_compares`), and whether a person
  labels a side or a score (`prefers`);
- whether length/style control applies (`controls_style`) and whether a person labels
  its items at all (`human_labels`);
- what its OTel record holds (`candidate_shown_as`) and its report section (`swappable`:
  the "Both orders" line; `prefers`: no scales to label on; `scorer`: no judge shown);
- for a judge-free kind, how it scores (`Deterministic.score`).

A fourth kind (say, listwise ranking: one call ranks k responses) is one subclass of
`Kind` and its tests: its persisted `name` (added to `Protocol.kind`'s and the summary's
`Literal`), its `reduce` (k ranks per call into per-response scores), its answers to the
flags above (a listwise prompt is swappable as a permutation, and one run compares), the
metrics it gates on, and its entry in `_BY_NAME` (docs/protocols.md).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from chatjudge.formats.results import ResultRecord
from chatjudge.protocols.spec import TIE, MetricSpec
from chatjudge.protocols.spec import Protocol as Spec

if TYPE_CHECKING:  # a deterministic protocol's scores: its module only with such a run
    from chatjudge.chat.toolcalls.expected import MatchMode
    from chatjudge.trajectories import Scored

PREFERENCE = "preference"  # pairwise: the candidate's preference rate, ties count half


class _Verdict(Protocol):
    @property
    def scores(self) -> Mapping[str, Any]: ...


class JudgedCall(Protocol):
    """What reducing reads of one successful judge call (`runner.aggregate.CallOutcome`)."""

    @property
    def judge(self) -> str: ...

    @property
    def sample(self) -> int: ...

    @property
    def verdict(self) -> _Verdict | None: ...


@dataclass(slots=True)
class ItemVerdict:
    scores: dict[str, Any] = field(default_factory=dict)
    consistent: bool | None = None
    agreement: float | None = None


class Kind:
    """A protocol's kind: what the run, the analyses, the export and the report do
    differently for it."""

    name: ClassVar[str]  # the persisted text
    # A model judges each item; otherwise the kind's rules score it (`Deterministic.score`).
    judged: ClassVar[bool] = True
    verb: ClassVar[str] = "judging"  # what the run does to an item, as `run` and its bar say
    # The prompt sets two responses side by side, whose order `--flip` swaps (twice the calls).
    swappable: ClassVar[bool] = False
    # Each item holds the candidate against a baseline: one run alone is a comparison
    # (`compare` of one run, `gate --run`, `gate --sequential` on DATA alone).
    one_run_compares: ClassVar[bool] = False
    # The verdict is a preference: gated as the preference rate (ties half), calibrated and
    # aligned on a side a person picks, not on a score.
    prefers: ClassVar[bool] = False
    # Length/style control applies: the responses of one item are measured against each other.
    controls_style: ClassVar[bool] = False
    human_labels: ClassVar[bool] = True  # a person can label its items (report, agree, align)
    scorer: str | None = None  # a judge-free kind's rules (`tool-trajectory`)

    def swaps_sides(self, flip: bool) -> bool:
        """Whether each call is sent again with the two sides swapped (`--flip`)."""
        return flip and self.swappable

    def reduce(self, protocol: Spec, calls: Sequence[JudgedCall]) -> ItemVerdict:
        """The item's verdict from its calls (all of them ok): scores, the mean over calls."""
        if protocol.choice is None:
            return _reduce_scores(protocol, calls)
        return _reduce_choice(protocol, calls)  # a pointwise label: the majority

    def gate_metrics(self, protocol: Spec) -> list[str]:
        """The metrics the gate can decide on, the default first."""
        return [m.name for m in protocol.metrics]

    def gate_spec(self, protocol: Spec, metric: str) -> MetricSpec | None:
        """`metric`'s declaration; None for a metric the kind defines (the preference)."""
        return next(m for m in protocol.metrics if m.name == metric)

    def candidate_shown_as(self, record: ResultRecord) -> str | None:
        """Which side ("A"/"B") the candidate was in the call whose rationale the record
        keeps, for the OTel record; None where the prompt has no sides."""
        return None


class Pointwise(Kind):
    """Each item judged on its own: scores (or a label) per item."""

    name = "pointwise"


class Pairwise(Kind):
    """The candidate's response against a baseline's in one prompt: a choice of side,
    sent in both orders with `--flip` (disagreeing orders are a tie, MT-Bench's rule)."""

    name = "pairwise"
    swappable = True
    one_run_compares = True
    prefers = True
    controls_style = True

    def reduce(self, protocol: Spec, calls: Sequence[JudgedCall]) -> ItemVerdict:
        return _reduce_choice(protocol, calls)

    def gate_metrics(self, protocol: Spec) -> list[str]:
        return [PREFERENCE, *super().gate_metrics(protocol)]

    def gate_spec(self, protocol: Spec, metric: str) -> MetricSpec | None:
        return None if metric == PREFERENCE else super().gate_spec(protocol, metric)

    def candidate_shown_as(self, record: ResultRecord) -> str | None:
        """The rationale is the first successful call's; a flipped call showed the
        candidate as A."""
        first = next((c for c in record.calls if c.status == "ok"), None)
        if first is None:
            return None
        return "A" if first.flipped else "B"


class Deterministic(Pointwise):
    """Judge-free: the `scorer`'s rules score each item, with no model, call or cost."""

    judged = False
    verb = "scoring"
    human_labels = False
    judge_name = "deterministic"  # what its summary names as its judge

    def __init__(self, scorer: str) -> None:
        self.scorer = scorer

    def score(
        self,
        row: dict[str, Any],
        match: MatchMode,
        *,
        as_written: bool,
        checked_tools: tuple[str, ...] | None,
    ) -> Scored:
        """A validated row's scores, rationale and comparison (`--match`: the default match
        mode; `as_written`: `Validation.read_as_written`; `checked_tools`: the run's)."""
        from chatjudge.trajectories import score_row

        return score_row(row, match, as_written=as_written, checked_tools=checked_tools)


POINTWISE, PAIRWISE = Pointwise(), Pairwise()
_BY_NAME: dict[str, Kind] = {k.name: k for k in (POINTWISE, PAIRWISE)}


def kind_of(protocol: Spec) -> Kind:
    return kind_named(protocol.kind, protocol.scorer)


def kind_named(name: str, scorer: str | None = None) -> Kind:
    """The kind a persisted record names (`summary.json`'s `kind` and `scorer`)."""
    if scorer:
        return _deterministic(scorer)
    return _BY_NAME[name]


@cache
def _deterministic(scorer: str) -> Deterministic:
    return Deterministic(scorer)


def _reduce_scores(protocol: Spec, calls: Sequence[JudgedCall]) -> ItemVerdict:
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


def _reduce_choice(protocol: Spec, calls: Sequence[JudgedCall]) -> ItemVerdict:
    """Per judge and sample, the two orders must agree, else the pair is a tie; then the
    majority over judges and samples, a tie at the top being TIE."""
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
