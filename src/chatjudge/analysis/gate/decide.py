"""`chatjudge gate`: should the candidate ship? A paired, calibrated decision.

Inputs: one pairwise run (the effect is the candidate's preference rate minus 1/2), or
a baseline and a candidate run of one protocol on the same rows (the paired difference
of a metric, candidate minus baseline; two pairwise runs against one baseline compare
their preference rates). The interval treats the row as the unit (samples, orders and
a panel's judges nested inside it; `cluster` groups rows that move together), and the
decision follows DESIGN.md §8: not-worse passes when lo > -margin and fails when
hi < -margin; better passes when lo > 0 and fails when hi < 0; else inconclusive.
The statistics are `chatjudge.stats.paired`'s; `gate.pair_rows` pairs the runs' rows and
gives the statistics what the protocol knows (the range a row's difference can take,
which guards a small sample's interval), `gate.small` decides a small sample of a ratio
(micro) metric on its macro figure, `gate.assemble` decides and builds the record, and
this module checks the inputs, applies the corrections and writes `gate.json`.
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from pathlib import Path
from typing import cast

from chatjudge.analysis.gate.assemble import (
    Require,
    Settings,
    assemble,
    boundary,
    gate_difference,
)
from chatjudge.analysis.gate.corrections import (
    Control,
    calibrated,
    controlled_difference,
    corrected,
    style_of,
)
from chatjudge.analysis.gate.pair_rows import pair, same_baseline
from chatjudge.analysis.gate.provenance import judge_check, mismatches, record
from chatjudge.analysis.gate.small import (
    check_defined,
    small_ratio_pairs,
    warn_left_out,
    why_macro,
)
from chatjudge.analysis.gate.units import (
    RunRows,
    check_metric,
    read_joined,
    read_rows,
)
from chatjudge.errors import ChatJudgeWarning, UsageError
from chatjudge.formats.analyses import CalibratedMetric, Gate, GateLook, counts_text
from chatjudge.formats.io import read_model, write_json
from chatjudge.formats.shared import Metric
from chatjudge.options import GateSettings
from chatjudge.outputs import check_file_output
from chatjudge.protocols import Protocol
from chatjudge.protocols.kinds import kind_of
from chatjudge.rundir import GATE, RunDir
from chatjudge.stats.paired import Difference
from chatjudge.stats.small_sample import guarded_interval


def gate(candidate: str | Path, baseline: str | Path | None, settings: GateSettings) -> Gate:
    """Decide whether `candidate` ships against `baseline` and write `gate.json`.

    `candidate` alone must be a pairwise run (candidate vs baseline inside it); with
    `baseline`, two runs of one protocol on the same rows. `settings.out`: where gate.json
    goes (default: the candidate run directory, whose report then gets a gate section:
    `report_dir`); a file there that is not a gate.json is refused unless
    `settings.overwrite`, and an input or a run's file always. Warnings (`ChatJudgeWarning`)
    tell of accepted mismatches and of peeking (gating a grown run again).

    Corrections (`chatjudge.analysis.gate.corrections`): `settings.control` decides one
    pairwise run on its length- or style-controlled preference; `settings.human` (a labels
    file, the `agree` format) adds the candidate run's human-calibrated metrics.
    """
    s = settings
    if s.require not in ("not-worse", "better"):
        raise UsageError(f"--require must be not-worse or better, got {s.require!r}")
    if s.margin < 0:
        raise UsageError(f"--margin must be 0 or more (a distance below zero), got {s.margin}")
    require = cast(Require, s.require)
    control = cast(Control | None, s.control)
    cand_dir = Path(candidate)
    base_dir = Path(baseline) if baseline is not None else None
    if base_dir is not None and base_dir.resolve() == cand_dir.resolve():
        raise UsageError(
            f"--baseline {base_dir} and --candidate {cand_dir} are the same run directory: "
            "nothing to compare"
        )
    target = gate_path(cand_dir, s)
    inputs = [p for p in (s.data, s.human) if p is not None]
    check_file_output(target, inputs, kind="gate.json", is_kind=_is_gate, overwrite=s.overwrite)
    cand_run = RunDir(cand_dir)
    cand_info = cand_run.info
    found: list[str] = []
    if base_dir is not None:
        # Two assistants' runs hold different data; only their length may differ.
        found = mismatches(RunDir(base_dir).info, cand_info)
        if found and not s.allow_mismatch:
            raise UsageError(
                "the runs differ in what changes results; gate runs judged alike "
                "(or pass --allow-mismatch):\n  " + "\n  ".join(found)
            )
        for line in found:
            warnings.warn(f"runs differ: {line} (--allow-mismatch)", ChatJudgeWarning, 3)
    check = judge_check(base_dir, cand_dir, s) if base_dir is not None else None
    proto = cand_run.protocol(s.protocol)
    kind = kind_of(proto)
    if base_dir is None and not kind.one_run_compares:
        raise UsageError(
            f"{cand_dir} is a {proto.kind} run: gate two runs of it with "
            "--baseline DIR --candidate DIR (one run alone must be pairwise)"
        )
    name = check_metric(proto, s.metric)
    joined = read_joined(s.data) if s.data is not None else None
    cand = read_rows(cand_dir, proto, name, joined)
    base = read_rows(base_dir, proto, name, joined) if base_dir is not None else None
    if base is not None and kind.one_run_compares and not s.allow_mismatch:
        same_baseline(proto, base, cand)
    paired, counts = pair(cand, base, s.cluster)
    units = len(set(paired.clusters)) if paired.clusters is not None else len(paired.ids)
    if units < 2:
        both = " in both runs" if base is not None else ""
        raise UsageError(
            f"{len(paired.ids)} row(s) in {units} unit(s) judged ok{both}: an interval needs "
            f"at least 2 units, nothing to gate on ({counts_text(counts)})"
        )
    check_defined(proto, name, paired)
    diff = raw = paired.difference(None, boundary(s.margin, require), 0.95, s.seed)
    small_ratio = raw.small if paired.ratio else None  # nothing guards it: `gate.small`
    macro = None
    if small_ratio is not None and base_dir is not None:
        macro = small_ratio_pairs(proto, name, (base_dir, cand_dir), joined, s.cluster)
    if macro is not None:
        _, cand, paired, counts = macro
        diff = raw = paired.difference(None, boundary(s.margin, require), 0.95, s.seed)
    warn_left_out(proto, macro[0] if macro else name, cand, paired)
    style = style_of(paired.rows, paired.candidate, s.seed) if _styled(proto, base) else None
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
    decision = Settings(
        metric_name, s.margin, require, s.cluster, s.by, s.slices_must_not_regress, s.seed
    )
    result = assemble(paired, counts, diff, decision, mismatches=found, runs=runs)
    if macro is not None and small_ratio is not None:
        result.decided_on = macro[0]
        result.reason = f"{why_macro(name, macro[0], small_ratio.why)}: {result.reason}"
    if style is not None:
        result.corrected = {k: Metric(**v) for k, v in corrected(style).items()}
        result.style_control = style.to_dict()
    if control is not None:
        result.control = control
        result.raw_difference = gate_difference(raw)
    if s.human is not None:
        figures, notices = calibrated(cand_dir, s.human, s.column, s.score)
        result.calibrated = {k: CalibratedMetric(**v) for k, v in figures.items()}
        for notice in notices:
            warnings.warn(notice, ChatJudgeWarning, 3)
    record(result)
    result.judge_check = check
    result.looks = earlier_looks(target, result)
    target.parent.mkdir(parents=True, exist_ok=True)
    write_json(target, result)
    return result


def gate_path(candidate: Path, settings: GateSettings) -> Path:
    """Where the gate of `candidate` writes `gate.json`: `settings.out`, else in the run."""
    return settings.out if settings.out is not None else candidate / GATE


def report_dir(candidate: str | Path, settings: GateSettings) -> Path | None:
    """The run directory whose report shows this gate (the caller writes it: the report is
    the CLI's and the API's): the candidate's, when gate.json goes there; else none."""
    run = Path(candidate)
    return run if gate_path(run, settings) == run / GATE else None


def _styled(protocol: Protocol, base: RunRows | None) -> bool:
    """Style control applies to one run whose items hold the candidate against a baseline."""
    return kind_of(protocol).controls_style and base is None


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


def _is_gate(path: Path) -> bool:
    try:
        read_model(path, Gate)
    except UsageError:
        return False
    return True


def earlier_looks(target: Path, new: Gate) -> list[GateLook]:
    """The looks before this one at the same runs and metric. Gating a run again after
    it grew is peeking: the interval's 95% no longer holds, so it is warned about."""
    if not target.is_file() or not _is_gate(target):  # not a gate: --overwrite replaces it
        return []
    old = read_model(target, Gate)
    if old.runs != new.runs or old.metric != new.metric:
        return []
    if old.n_pairs >= new.n_pairs:
        return list(old.looks)
    warnings.warn(
        f"this gate looked at these runs before, on {old.n_pairs} pair(s) (now "
        f"{new.n_pairs}): gating a grown run again is peeking, and the 95% interval no "
        "longer holds for the sequence of looks; use `chatjudge gate --sequential`",
        ChatJudgeWarning,
        4,
    )
    look = GateLook(
        n_pairs=old.n_pairs, outcome=old.outcome, difference=old.difference, created=old.created
    )
    return [*old.looks, look]
