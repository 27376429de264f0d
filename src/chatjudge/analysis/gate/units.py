"""What `chatjudge gate` compares: each run's rows as values of one metric, paired by id.

A row's value is the mean over its judge calls, taken as the engine takes them: one
inner measurement per (judge, sample), a pairwise vote with its two presentation
orders reconciled (disagreeing orders are a tie, as `runner.aggregate` does) and
counted from the candidate's side (1, a tie 1/2, 0). Tries of one task (rows sharing a
`task_id`; rows of `simulate`/`generate --samples K`, ids `<id>#<k>` with a `sample`
field) belong to their task: that is the unit the interval resamples, never the try.
For `<metric>_pass_hat_<k>` (and `_pass_at_<k>`) the gate's rows are the tasks
themselves: each task's estimate from its tries, paired by task between the runs. A
ratio metric (`MetricSpec.denominator`, micro) keeps each row's numerator and
denominator, for the difference of the runs' ratios.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from chatjudge.data import Source
from chatjudge.errors import UsageError
from chatjudge.formats.results import CallRecord
from chatjudge.formats.run_info import RunInfo
from chatjudge.formats.summary import Summary
from chatjudge.protocols import Protocol
from chatjudge.protocols.kinds import kind_of
from chatjudge.protocols.spec import BASELINE, CANDIDATE, TIE, MetricSpec
from chatjudge.rundir import RunDir
from chatjudge.stats.passk import pass_at, pass_hat, succeeded
from chatjudge.summarize.run_summary import metric_parts, metric_value
from chatjudge.summarize.tries import PASS_HAT, parse_passk, task_of, zero_one_metrics

VOTE = {CANDIDATE: 1.0, TIE: 0.5, BASELINE: 0.0}
MISSING = "(missing)"  # the `--by` slice of rows with no value for the field
MAX_FIELDS = 30  # the fields an unknown `--by` lists


@dataclass(frozen=True, slots=True)
class Scale:
    """What one measurement of a metric can be: its range, and its few values when it
    takes only a few (a vote, a 0/1 metric); the gate's small-sample guard needs them."""

    low: float
    high: float
    values: tuple[float, ...] | None


@dataclass(frozen=True, slots=True)
class Row:
    """One results record as the gate sees it."""

    id: str
    unit: str  # the source id: samples of one row are one unit
    ok: bool
    inner: tuple[float, ...]  # one value per (judge, sample); empty when failed
    fields: dict[str, Any]
    # a ratio metric's (numerator, denominator), each the mean over (judge, sample): the
    # gate compares ΣN/ΣD over the paired rows, not the mean of the rows' own ratios
    parts: tuple[float, float] | None = None
    # judged, but the metric has no value for it (a macro precision with no call made):
    # left out of the pairs and counted, as the summary leaves it out of the mean
    no_value: bool = False

    @property
    def value(self) -> float:
        return mean(self.inner)


@dataclass(slots=True)
class RunRows:
    """A run directory read for the gate: its configuration and its rows by id."""

    path: Path
    info: RunInfo
    summary: Summary
    scale: Scale | None = None  # of the metric read
    rows: dict[str, Row] = field(default_factory=dict)

    @property
    def failed(self) -> int:
        return sum(not r.ok and not r.no_value for r in self.rows.values())

    @property
    def no_value(self) -> int:
        return sum(r.no_value for r in self.rows.values())


def metric_names(protocol: Protocol) -> list[str]:
    return kind_of(protocol).gate_metrics(protocol)


def check_metric(protocol: Protocol, metric: str | None) -> str:
    """The metric to gate on (default: pairwise `preference`, else the first metric); a
    0/1 metric's `<metric>_pass_hat_<k>` or `<metric>_pass_at_<k>` too."""
    names = metric_names(protocol)
    if metric is None:
        if not names:
            raise UsageError(f"protocol {protocol.name!r} declares no metric to gate on")
        return names[0]
    tried = parse_passk(metric)
    zero_one = [m.name for m in zero_one_metrics(protocol)]
    if metric not in names and (tried is None or tried[0] not in zero_one):
        also = f"; or <metric>_pass_hat_<k> / _pass_at_<k> of {', '.join(zero_one)}"
        raise UsageError(
            f"--metric {metric!r} is not a metric of {protocol.name}: use one of "
            + ", ".join(names)
            + (also if zero_one else "")
        )
    return metric


def inner_values(protocol: Protocol, metric: str, calls: Sequence[CallRecord]) -> list[float]:
    """One value per (judge, sample) of an item's calls."""
    groups: dict[tuple[str, int], list[CallRecord]] = defaultdict(list)
    for call in calls:
        groups[(call.judge, call.sample)].append(call)
    spec = _spec(protocol, metric)
    choice = protocol.choice.name if protocol.choice is not None else None
    prefers = kind_of(protocol).prefers
    values = []
    for group in groups.values():
        if prefers and choice is not None and spec_reads(spec, choice):
            sides = {c.scores[choice] for c in group}
            vote = sides.pop() if len(sides) == 1 else TIE  # orders disagree: a tie
            values.append(VOTE[vote] if spec is None else metric_value(spec, {choice: vote}))
        else:
            assert spec is not None
            values.append(mean([metric_value(spec, c.scores) for c in group]))
    return values


def mean(values: Sequence[float]) -> float:
    """`np.mean` of a few values, bit for bit (numpy adds fewer than 8 in order), without
    numpy's cost per call: a run's every row takes one or two of these."""
    if len(values) < 8:
        return float(sum(values) / len(values)) if values else math.nan
    return float(np.mean(values))


def spec_reads(spec: MetricSpec | None, choice: str) -> bool:
    return spec is None or spec.source == choice


def metric_scale(protocol: Protocol, metric: str) -> Scale | None:
    """The range (and the values, when few) of one measurement of `metric`: a vote 0,
    1/2 or 1; a choice's share 0 or 1; a score's declared range, offset and scaled,
    whose two ends are its only values when it is an integer from k to k + 1. None for a
    metric reading a choice as a number, or a ratio metric (nothing bounds a row)."""
    spec = _spec(protocol, metric)
    if spec is None:
        return Scale(0.0, 1.0, (0.0, 0.5, 1.0))
    if spec.denominator:
        return None
    if spec.equals is not None:
        return Scale(0.0, 1.0, (0.0, 1.0))
    score = next((s for s in protocol.scores if s.name == spec.source), None)
    if score is None:
        return None
    low, high = sorted((end + spec.offset) * spec.scale for end in (score.min, score.max))
    # a pairwise run averages a score over the two orders: more than its two ends
    two = score.integer and score.max - score.min == 1 and not kind_of(protocol).swappable
    return Scale(low, high, (low, high) if two else None)


def _spec(protocol: Protocol, metric: str) -> MetricSpec | None:
    """The metric's declaration; `None` for the pairwise preference."""
    return kind_of(protocol).gate_spec(protocol, metric)


def read_rows(
    run_dir: Path, protocol: Protocol, metric: str, joined: dict[str, dict[str, Any]] | None
) -> RunRows:
    """Every results record of `run_dir` as a `Row` (fields joined from `--data` by id);
    for a pass^k or pass@k metric, every task as one (`task_rows`)."""
    tried = parse_passk(metric)
    if tried is not None:
        return task_rows(read_rows(run_dir, protocol, tried[0], joined), tried[1], tried[2])
    opened = RunDir(run_dir)
    run = RunRows(run_dir, opened.info, opened.summary, metric_scale(protocol, metric))
    ratio = is_ratio(protocol, metric)
    for record in opened.results():
        fields = dict(record.fields)
        item_id = record.id
        unit = source_id(item_id, fields)
        if joined is not None:
            extra = joined.get(item_id) or joined.get(unit) or {}
            fields = {**extra, **fields}
        ok = record.status == "ok"
        inner = tuple(inner_values(protocol, metric, record.calls)) if ok else ()
        if not ratio:  # a null score has no value, as in the summary's means (a ratio's
            inner = tuple(v for v in inner if not math.isnan(v))  # row keeps its parts)
        parts = ratio_parts(protocol, metric, record.calls) if ok and inner else None
        has = ok and bool(inner)
        run.rows[item_id] = Row(item_id, unit, has, inner, fields, parts, ok and not has)
    return run


def is_ratio(protocol: Protocol, metric: str) -> bool:
    """Whether `metric` is a ratio over all rows (micro), not a mean of row values."""
    spec = _spec(protocol, metric) if parse_passk(metric) is None else None
    return spec is not None and bool(spec.denominator)


def ratio_parts(
    protocol: Protocol, metric: str, calls: Sequence[CallRecord]
) -> tuple[float, float] | None:
    """A ratio metric's (numerator, denominator) of one item, each the mean over its
    calls; (0, 0) when no call has a numerator (it adds nothing, as in the summary).
    None for a metric that is not a ratio."""
    spec = _spec(protocol, metric)
    if spec is None or not spec.denominator:
        return None
    found = [metric_parts(spec, c.scores) for c in calls]
    counted = [(top, bottom) for top, bottom in found if not math.isnan(top)]
    if not counted:
        return 0.0, 0.0
    tops, bottoms = zip(*counted, strict=True)
    return float(np.mean(tops)), float(np.mean(bottoms))


def source_id(item_id: str, fields: dict[str, Any]) -> str:
    """The unit of a row: its task (`task_id`, or `p7` for `p7#2` with a `sample` field,
    from `--samples K`), else the row itself."""
    return task_of(item_id, fields) or item_id


def task_rows(tries: RunRows, kind: str, k: int) -> RunRows:
    """A run's tasks as rows of their pass^k (or pass@k) estimate at `k`, from their tries
    judged ok (a try succeeds when most of its judge samples say so). A task with fewer
    than k tries judged ok, or only one, has no estimate: it counts as failed."""
    by_task: dict[str, list[Row]] = defaultdict(list)
    for row in tries.rows.values():
        by_task[row.unit].append(row)
    estimate = pass_hat if kind == PASS_HAT else pass_at
    run = RunRows(tries.path, tries.info, tries.summary, Scale(0.0, 1.0, None))
    for task, rows in by_task.items():
        done = [r.value for r in rows if r.ok]
        ok = len(done) >= max(k, 2)
        inner: tuple[float, ...] = ()
        if ok:
            c = succeeded(np.array(done)).sum()
            inner = (float(estimate(np.array([len(done)]), np.array([c]), k)[0]),)
        run.rows[task] = Row(task, task, ok, inner, rows[0].fields)
    return run


def read_joined(path: Path) -> dict[str, dict[str, Any]]:
    """`--data FILE`: the input rows by id, for runs whose results lack a column."""
    rows: dict[str, dict[str, Any]] = {}
    for raw in Source(path, None):
        if raw.data is None:
            raise UsageError(f"{path}: row {raw.number}: {raw.error}")
        key = raw.data.get("id")
        rows[str(key) if key is not None else str(raw.number)] = raw.data
    return rows


def field_value(item_id: str, fields: dict[str, Any], name: str, option: str) -> str:
    """A row's value of column `name` (for `--cluster`), as text."""
    if name not in fields:
        raise UsageError(
            f"row {item_id!r} has no field {name!r} ({option}): results of runs made before "
            "chatjudge kept every input column lack it; join the input with --data FILE"
        )
    if _missing(fields[name]):
        raise UsageError(
            f"row {item_id!r} has no value for {name!r} ({option}): every row needs one "
            "to be grouped"
        )
    return str(fields[name])


def slice_values(ids: Sequence[str], rows: Sequence[dict[str, Any]], name: str) -> list[str]:
    """Each row's value of column `name` (for `--by`), as text; null, NaN or absent is
    the one slice `(missing)`. Refused only when no row has the column at all."""
    if ids and not any(name in fields for fields in rows):
        known = sorted({k for fields in rows for k in fields})
        shown = ", ".join(known[:MAX_FIELDS]) + (" ..." if len(known) > MAX_FIELDS else "")
        raise UsageError(
            f"row {ids[0]!r} has no field {name!r} (--by), nor has any other row; their "
            f"fields: {shown or '(none)'}. Results of runs made before chatjudge kept every "
            "input column lack them: join the input with --data FILE"
        )
    return [MISSING if _missing(f.get(name)) else str(f[name]) for f in rows]


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))
