"""What a protocol says of the range of one item's value of each summary metric, for the
interval each kind of metric gets (`chatjudge.stats.intervals`)."""

from __future__ import annotations

from chatjudge.protocols.spec import MetricSpec, Protocol
from chatjudge.stats.intervals import SHARE, UNBOUNDED, Range

MACRO = "_macro"  # `<ratio>_macro`: the mean of each item's own ratio, a declared score

# Figures of simulated conversations (`summarize.simulation`): the shares of how they ended
# and of first messages restating the question; turns and tokens have no known range here.
SIMULATION_RANGES = {
    "ended_by_user": SHARE,
    "ended_by_max_turns": SHARE,
    "first_message_restates_question": SHARE,
}


def metric_ranges(protocol: Protocol) -> dict[str, Range]:
    """Each metric's range: a choice's share is 0/1; a score's declared range, offset and
    scaled (0/1 when that is [0, 1] in whole numbers); a ratio's items' own ratios take the
    range of its macro figure's score where the protocol declares one (tool-call precision
    is a share), else none; the position consistency of a flipped pairwise run is 0/1."""
    ranges = {spec.name: _range(protocol, spec) for spec in protocol.metrics}
    for spec in protocol.metrics:
        macro = next((m for m in protocol.metrics if m.name == spec.name + MACRO), None)
        if spec.denominator and macro is not None and not macro.denominator:
            ranges[spec.name] = _range(protocol, macro)
    ranges.setdefault("position_consistency", SHARE)
    return ranges


def _range(protocol: Protocol, spec: MetricSpec) -> Range:
    if spec.denominator:
        return UNBOUNDED
    if spec.equals is not None:
        return SHARE
    score = next((s for s in protocol.scores if s.name == spec.source), None)
    if score is None:  # a choice read as a number
        return UNBOUNDED
    low, high = sorted((end + spec.offset) * spec.scale for end in (score.min, score.max))
    return Range(low, high, zero_one=score.integer and (low, high) == (0.0, 1.0))
