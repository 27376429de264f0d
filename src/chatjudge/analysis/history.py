"""`chatjudge history`: a line of releases, one run each, with the step between each two.

Each run shows its metrics as its summary states them (value and 95% interval). Each step
between two consecutive runs gets the gate's paired difference (`gate.pair_rows`, the same
statistics as `chatjudge gate --baseline A --candidate B`) when their rows pair by id, and an
unpaired difference from the two summaries' intervals otherwise. Only the latest step is
decided by default, as CI asks; `all_steps` decides every step with Holm's correction. A
step between runs judged differently is "judge changed", never a regression: its
difference measures the judge as much as the system.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.stats import norm

from chatjudge.analysis.gate.assemble import boundary, slice_differences
from chatjudge.analysis.gate.pair_rows import Paired, pair
from chatjudge.analysis.gate.provenance import changed_text, compared_checks, mismatches
from chatjudge.analysis.gate.units import RunRows, check_metric, read_rows
from chatjudge.errors import UsageError
from chatjudge.formats.analyses import GateDifference
from chatjudge.formats.history import History, HistoryRun, HistoryStep
from chatjudge.formats.run_info import RunInfo
from chatjudge.formats.shared import Metric
from chatjudge.protocols import Protocol
from chatjudge.rundir import RunDir
from chatjudge.stats.bootstrap import Estimate
from chatjudge.stats.intervals import Range, guard
from chatjudge.stats.small_sample import SMALL_UNITS

# A history reads many runs: each step's bootstrap is capped here (the gate's default is
# 10,000); the interval's Monte Carlo error at this size is far below its width.
RESAMPLES = 2000
Z95 = 1.959964
# One-sided, as a two-sided 95% interval's upper end below −margin.
ALPHA = 0.025


@dataclass(frozen=True)
class _Run:
    """A run as the steps read it."""

    record: HistoryRun
    path: Path
    info: RunInfo
    protocol: Protocol


def history(
    given: Sequence[str],
    *,
    metrics: Sequence[str] = (),
    by: str | None = None,
    margin: float = 0.0,
    all_steps: bool = False,
    seed: int = 0,
    protocol: str | Path | None = None,
    check_level: float = 0.01,
) -> History:
    """The runs `given` (`DIR` or `NAME=DIR`) in order, their metrics and their steps;
    `protocol`: the protocol's file for runs of a custom one; `check_level`: the judge
    check's level, as `gate --judge-check-level`."""
    if len(given) < 2:
        raise UsageError(f"history needs at least 2 runs, got {len(given)}")
    if margin < 0:
        raise UsageError(f"--margin must be 0 or more (a distance below zero), got {margin}")
    runs = order_runs([_read(name, path, protocol) for name, path in named_runs(given)], given)
    chosen = _metrics(runs, metrics)
    changed = [judge_changed(a, b, check_level, seed) for a, b in zip(runs, runs[1:], strict=False)]
    steps: list[HistoryStep] = []
    pairs: dict[int, Paired] = {}  # by id of a paired step: its interval at another level
    for metric in chosen:
        rows = [read_rows(r.path, r.protocol, metric, None) for r in runs]  # each run once
        for i in range(1, len(runs)):
            pair_ = (runs[i - 1], runs[i]), (rows[i - 1], rows[i])
            step, paired = _step(*pair_, metric, by, margin, seed, changed[i - 1])
            steps.append(step)
            if paired is not None:
                pairs[id(step)] = paired

    def interval_at(step: HistoryStep, level: float) -> list[float]:
        """A paired step's interval at `level`: the gate's, guarded for a decision at −margin."""
        diff = pairs[id(step)].difference(None, boundary(margin, "not-worse"), level, seed,
                                          RESAMPLES)  # fmt: skip
        return list(diff.ci95)

    return History(
        protocol=runs[-1].protocol.name,
        metrics=chosen,
        margin=margin,
        all_steps=all_steps,
        runs=[r.record for r in runs],
        steps=decide(steps, margin, all_steps, interval_at),
    )


def named_runs(given: Sequence[str]) -> list[tuple[str, Path]]:
    """Each argument as (name, directory): `NAME=DIR`, or a directory named by itself."""
    found = [_named(arg) or (Path(arg).name or arg, Path(arg)) for arg in given]
    names = [n for n, _ in found]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise UsageError(f"runs named twice: {', '.join(repeated)}; name them NAME=DIR")
    return found


def _named(arg: str) -> tuple[str, Path] | None:
    """`NAME=DIR` as its parts; None for a plain directory (which may hold an `=`)."""
    name, sep, rest = arg.partition("=")
    if not sep or Path(arg).is_dir():
        return None
    if not name or not rest:
        raise UsageError(f"{arg!r}: give a run as DIR or NAME=DIR")
    return name, Path(rest)


def order_runs(runs: list[_Run], given: Sequence[str]) -> list[_Run]:
    """Named runs in the order given; unnamed ones by when they were judged."""
    named = [_named(arg) is not None for arg in given]
    if all(named):
        return runs
    if any(named):
        raise UsageError("name every run (NAME=DIR, in order) or none (ordered by time)")
    return sorted(runs, key=lambda r: r.record.created)


def _read(name: str, path: Path, protocol: str | Path | None) -> _Run:
    if not path.is_dir():
        raise UsageError(f"{path}: not a run directory")
    run = RunDir(path)
    info, summary = run.info, run.summary
    check = summary.judge_check
    record = HistoryRun(
        name=name, path=str(path), created=summary.created, judges=list(summary.judges),
        metrics=summary.metrics, evaluator=info.evaluator.short if info.evaluator else None,
        judge_check=check.agreement if check is not None else None,
    )  # fmt: skip
    return _Run(record, path, info, run.protocol(protocol))


def _metrics(runs: list[_Run], asked: Sequence[str]) -> list[str]:
    protocols = {r.protocol.name for r in runs}
    if len(protocols) > 1:
        raise UsageError(f"the runs are of different protocols: {', '.join(sorted(protocols))}")
    last = runs[-1].protocol
    names = list(
        dict.fromkeys([check_metric(last, m) for m in asked] or [check_metric(last, None)])
    )
    for run in runs:
        for name in names:
            if name not in run.record.metrics:
                raise UsageError(f"{run.path}: its summary has no metric {name!r}")
    return names


def _step(
    runs: tuple[_Run, _Run],
    rows: tuple[RunRows, RunRows],
    metric: str,
    by: str | None,
    margin: float,
    seed: int,
    changed: str | None,
) -> tuple[HistoryStep, Paired | None]:
    """The step from `runs[0]` to `runs[1]`, their rows of `metric` read once each, and its
    pairs (None: the runs do not pair)."""
    (a, b), (base, cand) = runs, rows
    step = HistoryStep(
        before=a.record.name, after=b.record.name, metric=metric, difference=None, n_pairs=0,
        paired=False, judge_changed=changed, decided=False, regression=False,
    )  # fmt: skip
    paired, _ = pair(cand, base, None)
    if len(paired.ids) < 2:
        metrics = (a.record.metrics[metric], b.record.metrics[metric])
        return _unpaired(step, (base, cand), metrics), None
    diff = paired.difference(None, boundary(margin, "not-worse"), 0.95, seed, RESAMPLES)
    step.difference = GateDifference(value=diff.value, ci95=list(diff.ci95))
    step.n_pairs, step.paired, step.p = len(paired.ids), True, _p(diff.value, diff.se, margin)
    if by is not None:
        step.slices = slice_differences(paired, by, margin, seed, RESAMPLES)
    return step, paired


def judge_changed(a: _Run, b: _Run, level: float, seed: int) -> str | None:
    """Why two runs were judged differently (None: alike): the evaluator fingerprint's parts
    that differ (what both run.json files record, for runs older than it), or a judge check
    on the same check file whose verdicts changed beyond the judge's own noise."""
    found = mismatches(a.info, b.info)
    compared = compared_checks(a.path, b.path, level, seed)
    if compared is not None and compared[0].changed:
        found.append(changed_text(*compared))
    return "; ".join(found) if found else None


def _unpaired(
    step: HistoryStep, rows: tuple[RunRows, RunRows], metrics: tuple[Metric, Metric]
) -> HistoryStep:
    """Runs whose rows do not pair: the difference of their summaries' values. From
    SMALL_UNITS items a run, the normal interval of two independent estimates (each one's se
    read off its summary's interval); below, where the normal one does not cover, the
    difference of each run's own interval at 97.5% (the summary's rule for its kind), 95%
    by Bonferroni; none for a metric of no known range (a ratio's)."""
    x, y = metrics
    if x.value is None or y.value is None or not x.ci95 or not y.ci95:
        return step
    value = y.value - x.value
    values = [np.array([r.value for r in run.rows.values() if r.inner]) for run in rows]
    if min(v.size for v in values) >= SMALL_UNITS:
        se = math.hypot(*((m.ci95[1] - m.ci95[0]) / (2 * Z95) for m in (x, y)))  # type: ignore[index]
        step.difference = GateDifference(value=value, ci95=[value - Z95 * se, value + Z95 * se])
        return step
    scale = rows[0].scale
    if scale is None:
        step.difference = GateDifference(value=value, ci95=[])
        return step
    known = Range(scale.low, scale.high, zero_one=(scale.low, scale.high) == (0.0, 1.0))
    ends = [
        guard(Estimate(float(v.mean()), None, int(v.size)), v, known, level=1 - ALPHA).ci95
        for v in values
    ]
    a, b = ends
    if a is None or b is None:
        step.difference = GateDifference(value=value, ci95=[])
        return step
    step.difference = GateDifference(value=value, ci95=[b[0] - a[1], b[1] - a[0]])
    return step


def _p(value: float, se: float | None, margin: float) -> float | None:
    """One-sided p of the null "the metric fell by no more than the margin"."""
    if se is None or not math.isfinite(se):
        return None
    if se == 0:
        return 0.0 if value < -margin else 1.0
    return float(norm.cdf((value + margin) / se))


def decide(
    steps: list[HistoryStep],
    margin: float,
    all_steps: bool,
    interval_at: Callable[[HistoryStep, float], list[float]] | None = None,
) -> list[HistoryStep]:
    """Flag regressions: the latest step of each metric (its interval below −margin, as the
    gate fails), or, with `all_steps`, every paired step by Holm's step-down: in the order
    of their one-sided p-values, the step of rank i regresses when its own interval at
    level 1 − 2·ALPHA/(m − i) (`interval_at`: the gate's, guarded at every size) lies below
    −margin, and the stepping stops at the first that does not. A step across a judge
    change is never decided (it measures the judge as much as the system), nor, with
    `all_steps`, an unpaired one (no interval of it at another level)."""
    if not all_steps:
        for s in {s.metric: s for s in steps}.values():  # each metric's latest step
            if s.judge_changed is None and s.difference is not None and s.difference.ci95:
                s.decided, s.regression = True, s.difference.ci95[1] < -margin
        return steps
    assert interval_at is not None
    tested = [s for s in steps if s.paired and s.judge_changed is None and s.p is not None]
    tested.sort(key=lambda s: s.p)  # type: ignore[arg-type,return-value]
    stepping = True
    for rank, s in enumerate(tested):
        s.decided = True
        if stepping:
            ci = interval_at(s, 1 - 2 * ALPHA / (len(tested) - rank))
            s.regression = stepping = bool(ci) and ci[1] < -margin
    return steps
