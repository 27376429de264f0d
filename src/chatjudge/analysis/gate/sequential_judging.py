"""`chatjudge gate --sequential`: the gate drives judging and stops as soon as it decides.

Units (rows, or the rows of one `--cluster` value or of one source row's samples) are
put in a seeded random order, fixed before anything is judged. Batch after batch, the
engine judges the prefix of that order into the same run directory: the store answers
what was judged already, so a batch sends only its new rows' calls, and running the
command again resumes without sending anything twice. After each batch the
anytime-valid confidence sequence of `chatjudge.stats.sequential` (valid however often
it is looked at) is the interval the decision is taken on.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from chatjudge.analysis.gate.assemble import Require, Settings, assemble
from chatjudge.analysis.gate.pair_rows import Paired, pair
from chatjudge.analysis.gate.units import (
    check_metric,
    field_value,
    is_ratio,
    read_rows,
    source_id,
)
from chatjudge.calls.budget import Budget
from chatjudge.calls.run_sync import run_sync
from chatjudge.data import Source, validate
from chatjudge.errors import BudgetReachedError, UsageError
from chatjudge.formats.analyses import Gate, GateSequential
from chatjudge.formats.io import write_json
from chatjudge.models import ModelSpec
from chatjudge.options import RunConfig
from chatjudge.protocols import Protocol, get_protocol
from chatjudge.protocols.kinds import PREFERENCE, kind_of
from chatjudge.rundir import GATE, RESULTS, RunDir
from chatjudge.runner import build_engine
from chatjudge.stats.decision import decide
from chatjudge.stats.sequential import PLANNED_UNITS, confidence_sequence
from chatjudge.summarize.tries import parse_passk

Stopped = Literal["decided", "exhausted", "budget"]


def gate_sequential(
    data: str | Path,
    protocol: str | Path | Protocol,
    judge: ModelSpec | Sequence[ModelSpec],
    out: str | Path | None,
    *,
    baseline_data: str | Path | None = None,
    batch: int = 50,
    metric: str | None = None,
    margin: float = 0.0,
    require: Require = "not-worse",
    cluster: str | None = None,
    by: str | None = None,
    slices_must_not_regress: bool = False,
    seed: int = 0,
    **options: Any,
) -> Gate:
    """Judge `data` (pairwise; pointwise: the candidate's rows, `baseline_data` the
    baseline's, same ids) in seeded batches until the gate decides; write `gate.json`
    in the candidate's run directory (pairwise: `out`; pointwise: `out/candidate`, beside
    `out/baseline`). `options`: run options, as `chatjudge.evaluate`."""
    if batch < 1:
        raise UsageError(f"--batch must be 1 or more, got {batch}")
    if out is None:
        raise UsageError("--sequential needs --out DIR: the run directory it judges into")
    proto = get_protocol(protocol)
    pairwise = kind_of(proto).one_run_compares  # the data holds both sides
    if pairwise == (baseline_data is not None):
        raise UsageError(
            "--sequential: a pairwise protocol judges DATA alone; a pointwise one needs "
            "--baseline-data FILE (the baseline's rows, same ids)"
        )
    name = check_metric(proto, metric)
    if parse_passk(name) is not None:
        raise UsageError(
            f"--sequential judges rows in batches, not whole tasks: gate {name} on finished "
            "runs (--baseline DIR --candidate DIR)"
        )
    if is_ratio(proto, name):
        raise UsageError(
            f"--sequential bounds a mean of row differences; {name} is a ratio over all "
            "rows (micro): gate it on finished runs (--baseline DIR --candidate DIR)"
        )
    cand_rows = _rows(data, proto)
    base_rows = _rows(baseline_data, proto) if baseline_data is not None else None
    if base_rows is not None and {r["id"] for r in base_rows} != {r["id"] for r in cand_rows}:
        raise UsageError(f"--baseline-data {baseline_data} and DATA {data} hold different ids")
    order = _units(cand_rows, cluster, seed)
    root = Path(out)
    dirs = (
        {"run": root}
        if pairwise
        else {"baseline": root / "baseline", "candidate": root / "candidate"}
    )
    target = dirs["run" if pairwise else "candidate"]
    settings = Settings(name, margin, require, cluster, by, slices_must_not_regress, seed)
    bound = _bound(proto, name, pairwise)
    judged_units = 0
    n_batches = 0
    result: tuple[Paired, dict[str, dict[str, int]], Any] | None = None
    limit = options.pop("max_cost_usd", None)
    if limit is not None and not (math.isfinite(limit) and limit > 0):
        raise UsageError(f"--max-cost-usd must be a finite number more than 0, got {limit:g}")
    batches = _Batches(proto, judge, RunConfig.from_options(options, progress=False), limit)
    while judged_units < len(order) and not batches.reached:
        judged_units = min(judged_units + batch, len(order))
        n_batches += 1
        ids = {i for unit in order[:judged_units] for i in unit[1]}
        batches.judge(cand_rows, ids, target)
        if base_rows is not None and not batches.reached:
            batches.judge(base_rows, ids, dirs["baseline"])
        if not all((d / RESULTS).is_file() for d in dirs.values()):
            break  # the budget stopped it before either run had a result
        cand = read_rows(target, proto, name, None)
        base = None if pairwise else read_rows(dirs["baseline"], proto, name, None)
        paired, counts = pair(cand, base, cluster)
        cs = _sequence(paired, order[:judged_units], len(order), bound)
        result = (paired, counts, cs)
        if cs is not None and decide(cs.ci95, margin, require) != "inconclusive":
            break
    if result is None or result[2] is None:
        if batches.reached:
            raise BudgetReachedError(
                f"--max-cost-usd {limit:g} was reached before the gate could "
                "decide anything: raise it to go on (what was judged is kept)",
                summary={},
            )
        raise UsageError("every row failed: nothing to gate on (see the run's results)")
    paired, counts, cs = result
    runs = {k: str(v) for k, v in dirs.items()}
    gate = assemble(paired, counts, cs, settings, mismatches=[], runs=runs, project=False)
    per_row = _calls_per_row(proto, judge, options) * (1 if pairwise else 2)
    rows_judged = min(sum(1 for _ in RunDir(d).results()) for d in dirs.values())  # a cut batch too
    stopped: Stopped = (
        "decided"
        if gate.outcome != "inconclusive"
        else "budget"
        if batches.reached
        else "exhausted"
    )
    gate.sequential = GateSequential(
        batch=batch,
        batches=n_batches,
        seed=seed,
        rows_total=len(cand_rows),
        rows_judged=rows_judged,
        calls=rows_judged * per_row,
        # only a decision saves the rest: a budget's undecided gate still needs them
        calls_saved=(len(cand_rows) - rows_judged) * per_row if stopped == "decided" else 0,
        stopped=stopped,
        max_cost_usd=limit,
        cost_usd=batches.spent,
    )
    write_json(target / GATE, gate)
    return gate


def _rows(path: str | Path, proto: Protocol) -> list[dict[str, Any]]:
    """The input rows, validated (nothing is sent for bad data), each with its id."""
    source = Source(path, None)
    validate(source, proto.fields)
    rows = []
    for raw in source:
        assert raw.data is not None
        row = dict(raw.data)
        row["id"] = str(row["id"]) if row.get("id") is not None else str(raw.number)
        rows.append(row)
    return rows


def _units(
    rows: list[dict[str, Any]], cluster: str | None, seed: int
) -> list[tuple[str, list[str]]]:
    """Units and their row ids, in a seeded random order that no judgment can change."""
    units: dict[str, list[str]] = {}
    for row in rows:
        key = (
            field_value(row["id"], row, cluster, "--cluster")
            if cluster is not None
            else source_id(row["id"], row)
        )
        units.setdefault(key, []).append(row["id"])
    names = sorted(units)
    shuffled = np.random.default_rng(seed).permutation(len(names))
    return [(names[k], units[names[k]]) for k in shuffled]


class _Batches:
    """The gate's batches: each judges a prefix of the rows into a run directory, every
    one spending from one budget (`--max-cost-usd`), which lasts across the batches and
    across both run directories of a pointwise gate. A run reaches a budget only less than
    one call's worst case below it (`chatjudge.calls.budget`), whatever its concurrency,
    so the gate's spend ends that close to the limit too."""

    def __init__(
        self,
        proto: Protocol,
        judge: ModelSpec | Sequence[ModelSpec],
        config: RunConfig,
        limit: float | None,
    ) -> None:
        self.proto = proto
        self.judges = judge
        self.config = config
        self.budget = Budget(limit) if limit is not None else None
        self.reached = False
        self._unbudgeted: float | None = 0.0  # without a budget: the runs' costs summed

    @property
    def spent(self) -> float | None:
        """What the batches cost: the budget's own count (replies without usage at their
        worst case); without one, the runs' costs (None when a price is unknown)."""
        if self.budget is not None:
            return round(self.budget.spent_usd, 6)
        return self._unbudgeted

    def judge(self, rows: list[dict[str, Any]], ids: set[str], out: Path) -> None:
        """Judge the rows of `ids` into `out`: the store answers those judged before."""
        chosen = [r for r in rows if r["id"] in ids]
        engine = build_engine(
            chosen, self.proto, self.judges, out, column_map=None, config=self.config
        )
        try:
            total = run_sync(engine.run(budget=self.budget)).cost.invocation_usd
        except BudgetReachedError:
            self.reached = True
            return
        if self._unbudgeted is not None:
            self._unbudgeted = None if total is None else self._unbudgeted + total


def _sequence(
    paired: Paired, judged: list[tuple[str, list[str]]], total: int, bound: float | None
) -> Any:
    """The confidence sequence over the units judged so far (`judged`, in their order)."""
    position = {i: k for k, (_, ids) in enumerate(judged) for i in ids}
    sums: dict[int, float] = {}
    sizes: dict[int, int] = {}
    for item_id, c, b in zip(paired.ids, paired.candidate, paired.baseline, strict=True):
        k = position[item_id]
        sums[k] = sums.get(k, 0.0) + float(c - b)
        sizes[k] = sizes.get(k, 0) + 1
    if len(sums) < 2:
        return None
    keys = sorted(sums)
    cs = confidence_sequence(
        np.array([sums[k] for k in keys]),
        np.array([sizes[k] for k in keys], dtype=float),
        planned=min(total, PLANNED_UNITS),  # fixed before the first look
        bound=bound,
    )
    if bound is not None:  # an interval of means never reaches past the bound
        lo, hi = cs.ci95
        cs = type(cs)(
            value=cs.value,
            ci95=(max(lo, -bound), min(hi, bound)),
            se=cs.se,
            n_units=cs.n_units,
            n_rows=cs.n_rows,
            method=cs.method,
        )
    return cs


def _bound(proto: Protocol, metric: str, pairwise: bool) -> float | None:
    """The largest possible |difference| of one row."""
    if metric == PREFERENCE:
        return 0.5 if pairwise else 1.0
    spec = next(m for m in proto.metrics if m.name == metric)
    if spec.equals is not None:
        return 1.0
    score = next((s for s in proto.scores if s.name == spec.source), None)
    if score is None:
        return None
    return float((score.max - score.min) * abs(spec.scale))


def _calls_per_row(
    proto: Protocol, judge: ModelSpec | Sequence[ModelSpec], options: dict[str, Any]
) -> int:
    judges = len(judge) if isinstance(judge, list | tuple) else 1
    orders = 2 if kind_of(proto).swaps_sides(options.get("flip", True)) else 1
    return judges * orders * int(options.get("samples", 1))
