"""The run summary: counts, every metric with its 95% interval (valid at every size for its
kind, `chatjudge.stats.intervals`), usage and cost,
built from the results records as they are written (by the run, and by `chatjudge merge`
from its shards' records)."""

from __future__ import annotations

import datetime as dt
import math
from array import array
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np

from chatjudge.__about__ import __version__
from chatjudge.formats.cost import Cost
from chatjudge.formats.summary import PassKRecord, Summary
from chatjudge.protocols.kinds import kind_of
from chatjudge.protocols.spec import BASELINE, CANDIDATE, TIE, MetricSpec, Protocol
from chatjudge.stats import bootstrap_metrics, bootstrap_ratios
from chatjudge.stats.intervals import Range, guard_all
from chatjudge.stats.style import StyleControl, response_text, style_control, style_counts
from chatjudge.summarize.ranges import SIMULATION_RANGES, metric_ranges
from chatjudge.summarize.tries import PASS_AT, PASS_HAT, passk_name, task_of, zero_one_metrics

CANDIDATE_FIELD, BASELINE_FIELD = "response", "baseline_model_response"
_OUTCOME = {CANDIDATE: 1.0, TIE: 0.5, BASELINE: 0.0}  # the candidate's side; a tie counts half


def metric_value(spec: MetricSpec, scores: dict[str, Any]) -> float:
    """One item's contribution to a metric (a ratio metric: the item's own ratio); NaN
    where the item has none (a null score, a ratio over 0)."""
    top, bottom = metric_parts(spec, scores)
    if not spec.denominator:
        return top
    return top / bottom if bottom else math.nan


def metric_parts(spec: MetricSpec, scores: dict[str, Any]) -> tuple[float, float]:
    """An item's numerator and denominator of a metric (the denominator of a mean is 1)."""
    return _parts(scores, _fields(spec))


# What `_parts` reads of a metric: source, equals, offset, scale, denominator.
_Fields = tuple[str, str | None, float, float, tuple[str, ...]]


def _fields(spec: MetricSpec) -> _Fields:
    return spec.source, spec.equals, spec.offset, spec.scale, spec.denominator


def _parts(scores: dict[str, Any], fields: _Fields) -> tuple[float, float]:
    # one tuple, not 5 arguments: called per metric per item
    source, equals, offset, scale, denominator = fields
    value = scores[source]
    if equals is not None:
        return (1.0 if value == equals else 0.0), 1.0
    if value is None:
        return math.nan, 1.0
    top = (float(value) + offset) * scale
    if not denominator:
        return top, 1.0
    bottom = 0.0  # a loop, not sum(...): this runs for every item and metric
    for name in denominator:
        bottom += float(scores[name])
    return top, bottom


class SummaryBuilder:
    """Collects per-item metric values (compactly: 8 bytes an item a metric) as items finish."""

    def __init__(self, protocol: Protocol, judges: list[str], *, flip: bool, samples: int) -> None:
        self.protocol = protocol
        self.judges = judges
        self.kind = kind_of(protocol)
        self.flip = self.kind.swaps_sides(flip)
        self.samples = samples
        self.n_items = 0
        self.n_failed = 0
        self._values: dict[str, array[float]] = _columns(protocol)
        self._plan = _plan(protocol, self._values)
        self._judge_plans: dict[str, _Plan] = {}
        self._consistency: array[float] = array("d")
        self._per_judge: dict[str, dict[str, array[float]]] = defaultdict(
            lambda: _columns(protocol)
        )
        self._panel: dict[str, list[Any]] = defaultdict(list)  # judge -> per-item verdicts
        self._simulation: dict[str, array[float]] = {}  # simulated conversations' figures
        # Items finish in any order; the bootstrap resamples them in input order, so the
        # intervals do not depend on which call came back first (or on the executor).
        self._order: array[int] = array("q")
        self._simulation_order: array[int] = array("q")
        # Pairwise: per item, the outcome and both responses' style counts (9 numbers).
        self._style: array[float] = array("d")
        self._style_order: array[int] = array("q")
        self._tasks: dict[int, str] = {}  # item index -> its task, for items that are tries

    def add(
        self,
        index: int,
        ok: bool,
        scores: dict[str, Any],
        consistent: bool | None,
        judge_scores: dict[str, dict[str, Any]] | None = None,
        task: str | None = None,
    ) -> None:
        """One finished item; `task`: the task it is a try of (`summarize.tries.task_of`),
        None for an item on its own. A failed item is no try: it never counts as one."""
        self.n_items += 1
        if not ok:
            self.n_failed += 1
            return
        self._order.append(index)
        if task is not None:
            self._tasks[index] = task
        _add(self._plan, scores)
        if self.flip:
            self._consistency.append(float("nan") if consistent is None else float(consistent))
        if judge_scores:
            for judge, js in judge_scores.items():
                plan = self._judge_plans.get(judge)
                if plan is None:
                    plan = self._judge_plans[judge] = _plan(self.protocol, self._per_judge[judge])
                _add(plan, js)
                self._panel[judge].append(_label(self.protocol, js))

    def add_simulation(self, index: int, simulated: dict[str, Any]) -> None:
        """One item's conversation figures (from `chatjudge simulate`): the summary shows
        them as CollabLLM and Vertex report them beside the judge's metrics."""
        tokens = simulated.get("assistant_tokens")
        values = {
            "turns": float(simulated["turns"]),
            "assistant_tokens": float("nan") if tokens is None else float(tokens),
            "ended_by_user": float(simulated["ended"] == "user"),
            "ended_by_max_turns": float(simulated["ended"] == "max_turns"),
        }
        self._simulation_order.append(index)
        for name, value in values.items():
            self._simulation.setdefault(name, array("d")).append(value)

    def add_style(self, index: int, scores: dict[str, Any], fields: dict[str, Any]) -> None:
        """A pairwise item's outcome and its responses' length and markdown counts, for the
        style-controlled preference (`chatjudge.stats.style`); items without both
        responses (a custom protocol naming them otherwise) are left out."""
        choice = self.protocol.choice
        if choice is None or not {CANDIDATE_FIELD, BASELINE_FIELD} <= fields.keys():
            return
        outcome = _OUTCOME.get(str(scores.get(choice.name)))
        if outcome is None:
            return
        self._style_order.append(index)
        self._style.append(outcome)
        for name in (CANDIDATE_FIELD, BASELINE_FIELD):
            self._style.extend(style_counts(response_text(fields[name])))

    def build(
        self,
        usage: dict[str, int],
        cost: Cost | None,
        n_skipped: int = 0,
        skipped: list[dict[str, Any]] | None = None,
        *,
        derived_tool_definitions: int = 0,
        unparsed_tool_arguments: int = 0,
    ) -> Summary:
        """The run's `summary.json`; `n_skipped`: the rows --skip-invalid left out, and
        `skipped` their problems; the tool counts of the rows judged (written when not 0)."""
        columns = dict(self._values)
        if self.flip:
            columns["position_consistency"] = self._consistency
        metrics = _metrics(self.protocol, columns, self._order)
        optional: dict[str, Any] = {}  # sections written only when they apply
        tried = self._pass_k()
        if tried is not None:
            metrics.update(tried[0])
            optional["pass_k"] = tried[1]
        if self._simulation:
            optional["simulation"] = _metrics(
                None, self._simulation, self._simulation_order, SIMULATION_RANGES
            )
        if len(self._style_order):
            control = self._style_control()
            metrics["length_controlled_preference"] = control.length.to_dict()
            metrics["style_controlled_preference"] = control.style.to_dict()
            optional["style_control"] = control.to_dict()
        if n_skipped:
            optional.update(n_skipped=n_skipped, skipped=skipped or [])
        if derived_tool_definitions:
            optional["derived_tool_definitions"] = derived_tool_definitions
        if unparsed_tool_arguments:
            optional["unparsed_tool_arguments"] = unparsed_tool_arguments
        if self.protocol.provenance:
            optional["protocol_provenance"] = self.protocol.provenance
        if self.kind.scorer:
            optional["scorer"] = self.kind.scorer
        return Summary(
            protocol=self.protocol.name,
            kind=self.protocol.kind,
            judge="+".join(self.judges),
            judges=self.judges,
            n_items=self.n_items,
            n_ok=self.n_items - self.n_failed,
            n_failed=self.n_failed,
            metrics=metrics,
            samples=self.samples,
            flip=self.flip,
            usage=usage,
            cost_usd=cost.total_usd if cost else None,
            cost=cost,
            per_judge=self._per_judge_summary(),
            created=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            chatjudge_version=__version__,
            **optional,
        )

    def _pass_k(self) -> tuple[dict[str, Any], PassKRecord] | None:
        """Each 0/1 metric's pass^k and pass@k over the tasks of several tries (items in
        input order; a try succeeds when most of its judge samples say so); None when no
        task has two tries judged ok, or the protocol has no 0/1 metric."""
        specs = zero_one_metrics(self.protocol)
        if not self._tasks or not specs:
            return None
        from chatjudge.stats.passk import count_tries, pass_k, succeeded  # only with tries

        order = np.frombuffer(self._order, dtype=np.int64)
        by_index = np.argsort(order, kind="stable")
        tasks = self._tasks
        keys = [(1, tasks[i]) if i in tasks else (0, str(i)) for i in order[by_index].tolist()]
        metrics: dict[str, Any] = {}
        found = None
        for spec in specs:
            values = np.frombuffer(self._values[spec.name], dtype=np.float64)[by_index]
            found = pass_k(*count_tries(keys, succeeded(values)))
            if found is None:
                return None
            for kind, estimates in ((PASS_HAT, found.pass_hat), (PASS_AT, found.pass_at)):
                for k, estimate in estimates.items():
                    metrics[passk_name(spec.name, kind, k)] = estimate.to_dict()
        assert found is not None
        record = PassKRecord(
            metrics=[spec.name for spec in specs],
            max_k=found.max_k,
            n_tasks=found.n_tasks,
            single_try_tasks=found.single_try,
            min_tries=found.min_tries,
            max_tries=found.max_tries,
        )
        return metrics, record

    def _style_control(self) -> StyleControl:
        """Raw, length- and style-controlled preference over the items, in input order."""
        by_index = np.argsort(np.frombuffer(self._style_order, dtype=np.int64), kind="stable")
        rows = np.frombuffer(self._style, dtype=np.float64).reshape(-1, 9)[by_index]
        return style_control(rows[:, 0], rows[:, 1:5], rows[:, 5:9])

    def _per_judge_summary(self) -> dict[str, Any]:
        if len(self.judges) < 2:
            return {}
        out: dict[str, Any] = {
            judge: {"metrics": _metrics(self.protocol, self._per_judge[judge], self._order)}
            for judge in self.judges
        }
        pairs = []
        for i, a in enumerate(self.judges):
            for b in self.judges[i + 1 :]:
                va, vb = self._panel[a], self._panel[b]
                same = [x == y for x, y in zip(va, vb, strict=True)]
                pairs.append(
                    {
                        "judges": [a, b],
                        "agreement": sum(same) / len(same) if same else None,
                        "n": len(same),
                    }
                )
        out["inter_judge_agreement"] = pairs
        return out


def _label(protocol: Protocol, scores: dict[str, Any]) -> Any:
    return tuple(scores[n] for n in protocol.score_names)


_DENOMINATOR = "/"  # suffix of a ratio metric's column of denominators


def _columns(protocol: Protocol) -> dict[str, array[float]]:
    """One column of values per metric, and one of denominators per ratio metric."""
    columns = {m.name: array("d") for m in protocol.metrics}
    columns.update({m.name + _DENOMINATOR: array("d") for m in protocol.metrics if m.denominator})
    return columns


# Per metric, its fields and the appends of its columns (of values, of denominators).
_Plan = list[tuple[_Fields, Callable[[float], None], Callable[[float], None] | None]]


def _plan(protocol: Protocol, columns: dict[str, array[float]]) -> _Plan:
    """How `_add` fills `columns`, read once: a metric's fields are pydantic attributes,
    slow to read, and five a metric would be read for every item."""
    return [
        (
            _fields(spec),
            columns[spec.name].append,
            columns[spec.name + _DENOMINATOR].append if spec.denominator else None,
        )
        for spec in protocol.metrics
    ]


def _add(plan: _Plan, scores: dict[str, Any]) -> None:
    for fields, values, denominators in plan:
        top, bottom = _parts(scores, fields)
        values(top)
        if denominators is not None:
            denominators(bottom)


def _metrics(
    protocol: Protocol | None,
    columns: dict[str, array[float]],
    order: array[int],
    ranges: dict[str, Range] | None = None,
) -> dict[str, Any]:
    """Each metric's value and 95% interval: a bootstrap's, the means from one shared
    resampling of the items and the ratios (`MetricSpec.denominator`) from another, taken
    in input order (`order`: each value's item index), then made valid at the sample's size
    for the metric's range (`ranges`, else the protocol's); in the order of `columns`."""
    by_index = np.argsort(np.frombuffer(order, dtype=np.int64), kind="stable")
    ordered = {
        name: np.frombuffer(col, dtype=np.float64)[by_index] for name, col in columns.items()
    }
    ratios = {m.name for m in protocol.metrics if m.denominator} if protocol else set()
    means = {
        name: col
        for name, col in ordered.items()
        if name not in ratios and not name.endswith(_DENOMINATOR)
    }
    found = bootstrap_metrics(means)
    values, sizes = dict(means), {}
    if ratios:
        parts = {name: (ordered[name], ordered[name + _DENOMINATOR]) for name in ratios}
        found.update(bootstrap_ratios(parts))
        for name, (top, bottom) in parts.items():  # each item's own ratio, weighed by its
            with np.errstate(invalid="ignore", divide="ignore"):  # denominator
                values[name] = np.where(bottom != 0, top / bottom, np.nan)
            sizes[name] = bottom
    if ranges is None:
        ranges = metric_ranges(protocol) if protocol else {}
    found = guard_all(found, values, ranges, sizes)
    return {name: found[name].to_dict() for name in columns if name in found}


def count(summary: SummaryBuilder, record: dict[str, Any]) -> bool:
    """Count a results record (a `ResultRecord`'s fields) in the summary, as the run does
    and `chatjudge merge` for the records of its shards; returns whether it was judged ok."""
    ok: bool = record["status"] == "ok"
    index = record["index"]
    task = task_of(record["id"], record["fields"])
    summary.add(index, ok, record["scores"], record["consistent"], record.get("judge_scores"), task)
    if "simulation" in record:
        summary.add_simulation(index, record["simulation"])
    if ok:
        summary.add_style(index, record["scores"], record["fields"])
    return ok
