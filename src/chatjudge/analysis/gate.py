"""`chatjudge gate`: should the candidate ship? A paired, calibrated decision.

Inputs: one pairwise run (the effect is the candidate's preference rate minus 1/2), or
a baseline and a candidate run of one protocol on the same rows (the paired difference
of a metric, candidate minus baseline; two pairwise runs against one baseline compare
their preference rates). The interval treats the row as the unit (samples, orders and
a panel's judges nested inside it; `cluster` groups rows that move together), and the
decision follows DESIGN.md §8: not-worse passes when lo > -margin and fails when
hi < -margin; better passes when lo > 0 and fails when hi < 0; else inconclusive.
The statistics are `chatjudge.stats.paired`'s; this module pairs, decides and records,
and gives the statistics what the protocol knows: the range a row's difference can
take, which guards a small sample's interval.
"""

from __future__ import annotations

import datetime as dt
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np

from chatjudge.__about__ import __version__
from chatjudge.analysis.formats import (
    GATE,
    CalibratedMetric,
    Gate,
    GateDifference,
    GateLook,
    GateNoise,
    GateSlice,
    GateSmallSample,
    read_gate,
)
from chatjudge.analysis.gate_corrections import (
    Control,
    calibrated,
    controlled_difference,
    corrected,
    style_of,
)
from chatjudge.analysis.gate_units import (
    RunRows,
    check_metric,
    field_value,
    read_joined,
    read_rows,
    resolve_protocol,
    slice_values,
)
from chatjudge.errors import ChatJudgeWarning, UsageError
from chatjudge.outputs import check_file_output
from chatjudge.protocols import Protocol
from chatjudge.rundir import Metric, read_run_info, run_differences, write_json
from chatjudge.stats.paired import (
    Difference,
    SmallSample,
    decide,
    guarded_interval,
    mde80,
    noise_split,
    paired_difference,
    rows_to_decide,
)

Require = Literal["not-worse", "better"]
SLICE_MIN_ROWS = 30  # a smaller slice is shown but never fails the gate


@dataclass(frozen=True, slots=True)
class Paired:
    """The rows judged ok in both runs, in a fixed order, as arrays for the statistics."""

    ids: list[str]
    candidate: np.ndarray
    baseline: np.ndarray
    candidate_inner: list[np.ndarray]
    baseline_inner: list[np.ndarray] | None  # None: one pairwise run (the baseline is 1/2)
    clusters: np.ndarray | None
    rows: list[dict[str, Any]]  # each pair's fields (the candidate's)
    bounds: tuple[float, float] | None = None  # the range of one row's difference
    three_point: bool = False  # every row's difference is -a, 0 or a (no clusters)

    def difference(
        self, mask: np.ndarray | None, boundary: float, level: float, seed: int
    ) -> Difference:
        """The paired difference over the rows in `mask` (all: None), guarded for a
        small sample as a decision at `boundary` needs."""
        keep = slice(None) if mask is None else mask
        return paired_difference(
            self.candidate[keep],
            self.baseline[keep],
            self.clusters[keep] if self.clusters is not None else None,
            level=level,
            seed=seed,
            bounds=self.bounds,
            boundary=boundary,
            three_point=self.three_point,
        )


def gate(
    candidate: str | Path,
    baseline: str | Path | None = None,
    *,
    metric: str | None = None,
    margin: float = 0.0,
    require: Require = "not-worse",
    cluster: str | None = None,
    by: str | None = None,
    slices_must_not_regress: bool = False,
    data: str | Path | None = None,
    protocol: str | Path | Protocol | None = None,
    allow_mismatch: bool = False,
    out: str | Path | None = None,
    overwrite: bool = False,
    seed: int = 0,
    report: bool = True,
    control: Control | None = None,
    human: str | Path | None = None,
    human_column: str | None = None,
    human_score: str | None = None,
) -> Gate:
    """Decide whether `candidate` ships against `baseline` and write `gate.json`.

    `candidate` alone must be a pairwise run (candidate vs baseline inside it); with
    `baseline`, two runs of one protocol on the same rows. `out`: where gate.json goes
    (default: the candidate run directory, whose report.html then gets a gate section;
    `out=False`-like callers pass a path); a file there that is not a gate.json is refused
    unless `overwrite`, and an input or a run's file always. Warnings (`ChatJudgeWarning`) tell of
    accepted mismatches and of peeking (gating a grown run again).

    Corrections (`chatjudge.analysis.gate_corrections`): `control` decides one pairwise
    run on its length- or style-controlled preference; `human` (a labels file, the
    `agree` format) adds the candidate run's human-calibrated metrics to the outcome.
    """
    if require not in ("not-worse", "better"):
        raise UsageError(f"--require must be not-worse or better, got {require!r}")
    if margin < 0:
        raise UsageError(f"--margin must be 0 or more (a distance below zero), got {margin}")
    cand_dir = Path(candidate)
    base_dir = Path(baseline) if baseline is not None else None
    if base_dir is not None and base_dir.resolve() == cand_dir.resolve():
        raise UsageError(
            f"--baseline {base_dir} and --candidate {cand_dir} are the same run directory: "
            "nothing to compare"
        )
    target = Path(out) if out is not None else cand_dir / GATE
    inputs = [Path(p) for p in (data, human) if p is not None]
    check_file_output(target, inputs, kind="gate.json", is_kind=_is_gate, overwrite=overwrite)
    cand_info = read_run_info(cand_dir)
    found: list[str] = []
    if base_dir is not None:
        # Two assistants' runs hold different data; only their length may differ.
        found = run_differences(
            read_run_info(base_dir), cand_info, data=False, ignore=frozenset({"limit"})
        )
        if found and not allow_mismatch:
            raise UsageError(
                "the runs differ in what changes results; gate runs judged alike "
                "(or pass --allow-mismatch):\n  " + "\n  ".join(found)
            )
        for line in found:
            warnings.warn(f"runs differ: {line} (--allow-mismatch)", ChatJudgeWarning, 2)
    proto = resolve_protocol(cand_info, protocol)
    if base_dir is None and proto.kind != "pairwise":
        raise UsageError(
            f"{cand_dir} is a {proto.kind} run: gate two runs of it with "
            "--baseline DIR --candidate DIR (one run alone must be pairwise)"
        )
    name = check_metric(proto, metric)
    joined = read_joined(Path(data)) if data is not None else None
    cand = read_rows(cand_dir, proto, name, joined)
    base = read_rows(base_dir, proto, name, joined) if base_dir is not None else None
    if base is not None and proto.kind == "pairwise" and not allow_mismatch:
        _same_baseline(proto, base, cand)
    paired, counts = pair(cand, base, cluster)
    units = len(set(paired.clusters)) if paired.clusters is not None else len(paired.ids)
    if units < 2:
        both = " in both runs" if base is not None else ""
        raise UsageError(
            f"{len(paired.ids)} row(s) in {units} unit(s) judged ok{both}: an interval needs "
            f"at least 2 units, nothing to gate on ({_counts_text(counts)})"
        )
    diff = raw = paired.difference(None, _boundary(margin, require), 0.95, seed)
    style = style_of(paired.rows, paired.candidate, seed) if _one_pairwise(proto, base) else None
    if control is not None:
        if style is None:
            raise UsageError("--control applies to one pairwise run (candidate vs baseline)")
        if paired.clusters is not None:
            raise UsageError(
                "--control resamples single rows: it cannot be combined with --cluster or "
                "with samples grouped by source row"
            )
        diff = _held_to(controlled_difference(style, control, raw), raw)
    runs = (
        {"run": str(cand_dir)}
        if base_dir is None
        else {"baseline": str(base_dir), "candidate": str(cand_dir)}
    )
    metric_name = f"{control}_controlled_{name}" if control else name
    settings = Settings(metric_name, margin, require, cluster, by, slices_must_not_regress, seed)
    result = assemble(paired, counts, diff, settings, mismatches=found, runs=runs)
    if style is not None:
        result.corrected = {k: Metric(**v) for k, v in corrected(style).items()}
        result.style_control = style.to_dict()
    if control is not None:
        result.control = control
        result.raw_difference = _difference(raw)
    if human is not None:
        figures, notices = calibrated(cand_dir, Path(human), human_column, human_score)
        result.calibrated = {k: CalibratedMetric(**v) for k, v in figures.items()}
        for notice in notices:
            warnings.warn(notice, ChatJudgeWarning, 2)
    result.looks = earlier_looks(target, result)
    target.parent.mkdir(parents=True, exist_ok=True)
    write_json(target, result)
    if report and target == cand_dir / GATE:
        from chatjudge.report import write_report

        write_report(cand_dir)
    return result


def _one_pairwise(protocol: Protocol, base: RunRows | None) -> bool:
    return protocol.kind == "pairwise" and base is None


def _held_to(controlled: Difference, raw: Difference) -> Difference:
    """A controlled difference on a small sample, under the raw one's small-sample rule:
    a fitted model is no more exact with a few rows than the bootstrap is."""
    if raw.small is None:
        return controlled
    return replace(
        controlled,
        ci95=guarded_interval(controlled.ci95, raw.small),
        method=f"{controlled.method}; {raw.small.rule} on the raw preference",
        small=raw.small,
    )


def _boundary(margin: float, require: Require) -> float:
    return -margin if require == "not-worse" else 0.0


def _counts_text(counts: dict[str, dict[str, int]]) -> str:
    return "; ".join(
        f"{role}: {c['rows']} rows, {c['failed']} failed, {c['unpaired']} unpaired"
        for role, c in counts.items()
    )


def _difference(diff: Difference) -> GateDifference:
    return GateDifference(
        value=round(diff.value, 6), ci95=[round(float(v), 6) for v in diff.ci95]
    )


@dataclass(frozen=True, slots=True)
class Settings:
    """What the user asked of the gate, beside the runs."""

    metric: str
    margin: float
    require: Require
    cluster: str | None
    by: str | None
    slices_must_not_regress: bool
    seed: int


def assemble(
    paired: Paired,
    counts: dict[str, dict[str, int]],
    diff: Difference,
    settings: Settings,
    *,
    mismatches: list[str],
    runs: dict[str, str],
    project: bool = True,
) -> Gate:
    """The decision on `diff`'s interval, with slices, noise and counts, as a `Gate`.
    `project`: say how many rows would decide an inconclusive gate (not for a
    sequential gate, whose interval already holds at every look)."""
    s = settings
    ci = (float(diff.ci95[0]), float(diff.ci95[1]))
    outcome = decide(ci, s.margin, s.require)
    reason = _reason(outcome, ci, s.margin, s.require)
    boundary = _boundary(s.margin, s.require)
    slices = _slices(paired, s.by, s.margin, s.seed) if s.by else []
    if s.slices_must_not_regress and outcome != "fail":
        bad = [x for x in slices if x.counts and x.below_margin]
        if bad:
            outcome = "fail"
            reason = "slice(s) regressed beyond the margin: " + ", ".join(
                f"{s.by}={x.value}" for x in bad
            )
    undecided = outcome == "inconclusive" and project
    return Gate(
        outcome=outcome,
        reason=reason,
        metric=s.metric,
        difference=_difference(diff),
        se=round(float(diff.se), 6),
        method=diff.method,
        mde80=round(
            mde80(
                diff.se,
                n_units=diff.n_units,
                lower=paired.bounds[0] if paired.bounds else None,
                boundary=boundary,
            ),
            6,
        ),
        rows_to_decide=(
            rows_to_decide(diff, s.margin, s.require, paired.bounds) if undecided else None
        ),
        small_sample=_small(diff.small, paired.bounds),
        margin=s.margin,
        require=s.require,
        n_pairs=len(paired.ids),
        n_units=int(diff.n_units),
        counts=counts,
        by=s.by,
        cluster=s.cluster,
        slices=slices,
        noise=_noise(paired),
        mismatches=mismatches,
        looks=[],
        runs=runs,
        created=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        chatjudge_version=__version__,
    )


def pair(
    cand: RunRows, base: RunRows | None, cluster: str | None
) -> tuple[Paired, dict[str, dict[str, int]]]:
    """The rows ok in both runs (all ok rows of one pairwise run), and per run its rows,
    failed rows and rows the other run lacks: counted, never silently dropped."""
    if base is None:
        ids = sorted((i for i, r in cand.rows.items() if r.ok), key=lambda i: _order(cand, i))
        counts = {"run": _count(cand, 0)}
    else:
        both = cand.rows.keys() & base.rows.keys()
        ids = sorted(
            (i for i in both if cand.rows[i].ok and base.rows[i].ok),
            key=lambda i: _order(cand, i),
        )
        counts = {
            "baseline": _count(base, len(base.rows.keys() - cand.rows.keys())),
            "candidate": _count(cand, len(cand.rows.keys() - base.rows.keys())),
        }
    rows = [cand.rows[i] for i in ids]
    base_rows = [base.rows[i] for i in ids] if base is not None else []
    units = [r.unit for r in rows]
    if cluster is not None:
        clusters: np.ndarray | None = np.array(
            [field_value(r.id, r.fields, cluster, "--cluster") for r in rows]
        )
    elif len(set(units)) < len(units):  # samples of one source row move together
        clusters = np.array(units)
    else:
        clusters = None
    paired = Paired(
        ids=ids,
        candidate=np.array([r.value for r in rows], dtype=float),
        baseline=(
            np.full(len(rows), 0.5)
            if base is None
            else np.array([base.rows[i].value for i in ids], dtype=float)
        ),
        candidate_inner=[np.array(r.inner, dtype=float) for r in rows],
        baseline_inner=(
            None if base is None else [np.array(r.inner, dtype=float) for r in base_rows]
        ),
        clusters=clusters,
        rows=[dict(r.fields) for r in rows],
        bounds=_bounds(cand, base),
        three_point=clusters is None
        and all(len(r.inner) == 1 for r in [*rows, *base_rows])
        and _three_point(cand, base),
    )
    return paired, counts


def _bounds(cand: RunRows, base: RunRows | None) -> tuple[float, float] | None:
    """The range of one row's difference: the metric's range less the baseline's (one
    pairwise run: its fixed 1/2)."""
    scale = cand.scale
    if scale is None:
        return None
    if base is None:
        return (scale.low - 0.5, scale.high - 0.5)
    return (scale.low - scale.high, scale.high - scale.low)


def _three_point(cand: RunRows, base: RunRows | None) -> bool:
    """Whether one measurement's difference can only be -a, 0 or a: a vote against the
    fixed 1/2, or two 0/1 metrics (then the exact sign test is valid for the mean)."""
    scale = cand.scale
    if scale is None or scale.values is None:
        return False
    others = (0.5,) if base is None else scale.values
    found = {c - b for c in scale.values for b in others}
    reach = max(abs(d) for d in found)
    return found <= {-reach, 0.0, reach}


def _order(run: RunRows, item_id: str) -> tuple[str, str]:
    return (run.rows[item_id].unit, item_id)


def _count(run: RunRows, unpaired: int) -> dict[str, int]:
    return {
        "rows": len(run.rows),
        "failed": run.failed,
        "unpaired": unpaired,
    }


def _same_baseline(proto: Protocol, base: RunRows, cand: RunRows) -> None:
    """Two pairwise runs compare only against one baseline: the same response per item."""
    assert proto.swap is not None
    name = proto.swap[0]
    differ = [
        i
        for i in sorted(base.rows.keys() & cand.rows.keys())
        if base.rows[i].fields.get(name) != cand.rows[i].fields.get(name)
    ]
    if differ:
        shown = ", ".join(repr(i) for i in differ[:5]) + (" ..." if len(differ) > 5 else "")
        raise UsageError(
            f"the two pairwise runs judged different {name} on {len(differ)} matched "
            f"item(s) ({shown}): they are not against the same baseline (--allow-mismatch)"
        )


def _reason(outcome: str, ci: tuple[float, float], margin: float, require: str) -> str:
    lo, hi = ci
    bound = f"{-margin:+.4g}" if require == "not-worse" and margin else "0"
    if outcome == "pass":
        return f"the interval's lower end {lo:+.4g} is above {bound}"
    if outcome == "fail":
        return f"the interval's upper end {hi:+.4g} is below {bound}"
    return f"the interval [{lo:+.4g}, {hi:+.4g}] contains {bound}"


def _small(small: SmallSample | None, bounds: tuple[float, float] | None) -> GateSmallSample | None:
    if small is None:
        return None
    return GateSmallSample(
        rule=small.rule,
        why=small.why,
        sign_p=[round(p, 6) for p in small.sign_p] if small.sign_p else None,
        betting_ci=[round(float(v), 6) for v in small.betting] if small.betting else None,
        difference_range=list(bounds) if bounds is not None else None,
    )


def _slices(paired: Paired, by: str, margin: float, seed: int) -> list[GateSlice]:
    """Per value of `by`: the difference with a Bonferroni-adjusted interval (guarded
    for a small slice at that level and at -margin, where a slice regresses), worst
    first; rows without a value are one slice."""
    rows = slice_values(paired.ids, paired.rows, by)
    values = np.array(rows)
    names = sorted(set(rows))
    level = 1 - 0.05 / len(names)
    out = []
    for value in names:
        mask = values == value
        n = int(mask.sum())
        clusters = paired.clusters[mask] if paired.clusters is not None else None
        units = len(set(clusters)) if clusters is not None else n
        method = None
        if units < 2:
            delta = float(np.mean(paired.candidate[mask] - paired.baseline[mask]))
            ci: list[float] | None = None
        else:
            d = paired.difference(mask, -margin, level, seed)
            delta, ci, method = float(d.value), [round(float(v), 6) for v in d.ci95], d.method
        out.append(
            GateSlice(
                value=value,
                n_pairs=n,
                difference=GateDifference(value=round(delta, 6), ci95=ci or []),
                level=round(level, 6),
                below_margin=ci is not None and ci[1] < -margin,
                counts=n >= SLICE_MIN_ROWS,
                method=method,
            )
        )
    return sorted(out, key=lambda s: (s.difference.value, s.value))


def _noise(paired: Paired) -> GateNoise | None:
    """The judge-noise split, when rows hold several inner measurements."""
    inner = paired.candidate_inner + (paired.baseline_inner or [])
    if max(len(a) for a in inner) < 2:
        return None
    split = noise_split(paired.candidate_inner, paired.baseline_inner)
    if split is None:
        return None
    return GateNoise(
        judge_share=round(float(split.judge_share), 6),
        width=round(float(split.width), 6),
        width_double_samples=round(float(split.width_double_samples), 6),
        width_double_rows=round(float(split.width_double_rows), 6),
        width_floor=round(float(split.width_floor), 6),
        samples_per_row=round(float(split.samples_per_row), 6),
    )


def _is_gate(path: Path) -> bool:
    try:
        read_gate(path)
    except UsageError:
        return False
    return True


def earlier_looks(target: Path, new: Gate) -> list[GateLook]:
    """The looks before this one at the same runs and metric. Gating a run again after
    it grew is peeking: the interval's 95% no longer holds, so it is warned about."""
    if not target.is_file() or not _is_gate(target):  # not a gate: --overwrite replaces it
        return []
    old = read_gate(target)
    if old.runs != new.runs or old.metric != new.metric:
        return []
    if old.n_pairs >= new.n_pairs:
        return list(old.looks)
    warnings.warn(
        f"this gate looked at these runs before, on {old.n_pairs} pair(s) (now "
        f"{new.n_pairs}): gating a grown run again is peeking, and the 95% interval no "
        "longer holds for the sequence of looks; use `chatjudge gate --sequential`",
        ChatJudgeWarning,
        3,
    )
    look = GateLook(
        n_pairs=old.n_pairs, outcome=old.outcome, difference=old.difference, created=old.created
    )
    return [*old.looks, look]
