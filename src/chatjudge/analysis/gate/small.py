"""What the gate decides a small sample on when nothing bounds one row's difference.

A ratio metric (micro: ΣN/ΣD over rows) has no range per row: its linearised unit values
are unbounded, so `chatjudge.stats.small_sample` cannot guard its interval, and two
identical improved rows would pass on a bootstrap of [+1, +1]. Below 30 units (or 3
distinct unit differences) such a metric is decided on its macro figure, the protocol's
`<metric>_macro` (each row's own ratio, so the difference lies in [-1, 1]), under the
bounded rule; without one, or for any other metric with no known range, a small sample
is inconclusive (`assemble.assemble`). A ratio whose denominators sum to 0 in a run
(a candidate that made no tool call has no precision) names the ratios that have a value.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np

from chatjudge.analysis.gate.pair_rows import Paired, pair
from chatjudge.analysis.gate.units import RunRows, metric_names, metric_scale, read_rows
from chatjudge.errors import ChatJudgeWarning, UsageError
from chatjudge.protocols import Protocol
from chatjudge.protocols.spec import MetricSpec

MACRO = "_macro"  # `<metric>_macro`: the mean of each row's own ratio


def macro_of(protocol: Protocol, metric: str) -> str | None:
    """The ratio metric's macro figure, when the protocol declares it with a range."""
    name = metric + MACRO
    if name not in metric_names(protocol) or metric_scale(protocol, name) is None:
        return None
    return name


def small_ratio_pairs(
    protocol: Protocol,
    metric: str,
    runs: tuple[Path, Path],
    joined: dict[str, dict[str, Any]] | None,
    cluster: str | None,
) -> tuple[str, RunRows, Paired, dict[str, dict[str, int]]] | None:
    """A small sample's ratio as its macro figure: the figure's name, the candidate's rows
    and the pairs; None when the protocol declares none or fewer than 2 units have one."""
    macro = macro_of(protocol, metric)
    if macro is None:
        return None
    base, cand = (read_rows(run, protocol, macro, joined) for run in runs)
    paired, counts = pair(cand, base, cluster)
    units = set(paired.clusters) if paired.clusters is not None else paired.ids
    if len(units) < 2:
        return None
    return macro, cand, paired, counts


def why_macro(metric: str, macro: str, why: str) -> str:
    """The reason a gate was decided on the macro figure, before the decision's own."""
    return (
        f"decided on {macro}, {metric} being a ratio that nothing bounds on a small sample ({why})"
    )


def check_defined(protocol: Protocol, metric: str, paired: Paired) -> None:
    """Refuse a ratio whose denominators sum to 0 in a run, naming the run and the
    protocol's ratios that have a value there (a candidate that made no tool call has no
    precision: its recall and F1 count the calls it missed)."""
    if paired.candidate_parts is None or paired.baseline_parts is None:
        return
    empty = [
        role
        for role, parts in (
            ("candidate", paired.candidate_parts),
            ("baseline", paired.baseline_parts),
        )
        if not parts[:, 1].sum()
    ]
    if not empty:
        return
    spec = _ratio(protocol, metric)
    assert spec is not None
    others = alternatives(protocol, metric)
    instead = f"; gate {' or '.join(others)} instead, which have one" if others else ""
    raise UsageError(
        f"the {' and the '.join(empty)}'s {' + '.join(spec.denominator)} sum to 0 over the "
        f"{len(paired.ids)} paired row(s): {metric} ({spec.description}) has no value to "
        f"compare{instead}"
    )


def warn_left_out(protocol: Protocol, metric: str, cand: RunRows, paired: Paired) -> None:
    """Warn when some of the candidate's rows have no value of the ratio (no call made
    there), so the figure leaves them out; name the ratios that count them."""
    others = alternatives(protocol, metric)
    if not others:
        return
    if paired.candidate_parts is not None:
        left = int(np.count_nonzero(paired.candidate_parts[:, 1] == 0))
    else:
        left = cand.no_value
    if left:
        spec = _ratio(protocol, metric)
        assert spec is not None
        warnings.warn(
            f"{left} of the candidate's rows have no {metric} "
            f"({' + '.join(spec.denominator)} 0 there): it leaves them out, and "
            f"{' and '.join(others)} count them",
            ChatJudgeWarning,
            3,
        )


def alternatives(protocol: Protocol, metric: str) -> list[str]:
    """The protocol's ratios of the same numerator that have a value where `metric`'s
    denominators are 0 (precision's: recall and F1; F1's: none)."""
    spec = _ratio(protocol, metric)
    if spec is None:
        return []
    zero = set(spec.denominator)
    return [
        m.name
        for m in protocol.metrics
        if m.denominator and m.source == spec.source and not set(m.denominator) <= zero
    ]


def _ratio(protocol: Protocol, metric: str) -> MetricSpec | None:
    """The ratio spec of `metric`, or of the ratio whose macro figure it is."""
    stem = metric.removesuffix(MACRO)
    for name in (metric, stem):
        spec = next((m for m in protocol.metrics if m.name == name), None)
        if spec is not None and spec.denominator:
            return spec
    return None
