"""Who judged the two runs a gate compares: its mismatch check by the evaluator
fingerprint (naming the parts that differ), the judge check (did the judge's verdicts on
the same check items change beyond its own noise?), and each side's evaluator and what its
providers reported serving, recorded in `gate.json`."""

from __future__ import annotations

import warnings
from pathlib import Path

from chatjudge.errors import ChatJudgeWarning, UsageError
from chatjudge.formats.analyses import Gate
from chatjudge.formats.io import read_model
from chatjudge.formats.provenance import GateJudgeCheck, JudgeCheck
from chatjudge.formats.results import read_results
from chatjudge.formats.run_info import RunInfo
from chatjudge.formats.summary import Summary
from chatjudge.options import GateSettings
from chatjudge.rundir import RESULTS, SUMMARY, RunDir, run_differences
from chatjudge.runner.judge_check import CHECK_DIR, item_verdicts
from chatjudge.stats.judge_change import change_p_value
from chatjudge.verdicts.evaluator import differences


def mismatches(baseline: RunInfo, candidate: RunInfo) -> list[str]:
    """What differs between two runs in what decides a verdict: the evaluator's parts, or,
    where a run was written before the fingerprint, what both run.json files record (only
    the length of two assistants' runs, and their data, may differ)."""
    found = differences(baseline, candidate)
    if found is not None:
        return found
    return run_differences(baseline, candidate, data=False, ignore=frozenset({"limit"}))


def record(result: Gate) -> None:
    """Each side's evaluator and served models, by the role `result.runs` names it."""
    for role, directory in result.runs.items():
        run = Path(directory)
        result.evaluators[role] = RunDir(run).info.evaluator
        summary = run / SUMMARY
        served = read_model(summary, Summary).served if summary.is_file() else None
        if served:
            result.served[role] = served


def judge_check(baseline: Path, candidate: Path, settings: GateSettings) -> GateJudgeCheck | None:
    """The judge check of two runs that judged the same check file (None otherwise), as
    `compared_checks` tests it. A change refuses the gate (exit 2) unless
    `allow_judge_change`."""
    compared = compared_checks(baseline, candidate, settings.judge_check_level, settings.seed)
    if compared is None:
        return None
    found, a, b = compared
    if found.changed and not settings.allow_judge_change:
        raise UsageError(f"{changed_text(found, a, b)}: gate anyway with --allow-judge-change")
    if found.changed:
        found.allowed = True
        warnings.warn(f"{changed_text(found, a, b)} (--allow-judge-change)", ChatJudgeWarning, 4)
    return found


def compared_checks(
    baseline: Path, candidate: Path, level: float, seed: int
) -> tuple[GateJudgeCheck, JudgeCheck, JudgeCheck] | None:
    """Per verdict component, a test paired by item of whether the judge's verdicts on the
    check items changed between two runs beyond its disagreement with itself, at `level`
    split over the components; with each run's check. None: the runs did not judge the same
    check file."""
    checks = [_check(run) for run in (baseline, candidate)]
    a, b = checks
    if a is None or b is None or a.file_sha256 != b.file_sha256:
        return None
    sides = [
        item_verdicts(read_results(run / CHECK_DIR / RESULTS)) for run in (baseline, candidate)
    ]
    items = sorted(sides[0].keys() & sides[1].keys())
    names = sorted({c for side in sides for i in items for c in side[i]})
    p_values = {
        c: change_p_value(
            [sides[0][i].get(c, []) for i in items],
            [sides[1][i].get(c, []) for i in items],
            seed=seed,
        )
        for c in names
    }
    changed = any(p <= level / len(names) for p in p_values.values())
    found = GateJudgeCheck(
        file_sha256=a.file_sha256,
        n_items=len(items),
        level=level,
        p_values=p_values,
        changed=changed,
        allowed=False,
        agreement={"baseline": a.agreement, "candidate": b.agreement},
    )
    return found, a, b


def changed_text(found: GateJudgeCheck, a: JudgeCheck, b: JudgeCheck) -> str:
    """`the judge changed between these runs: check agreement 0.91 → 0.74 [...]`."""
    tests = ", ".join(f"{c} p = {p:.4f}" for c, p in found.p_values.items())
    noise = ", ".join(f"{x.disagreement:.2f}" if x.disagreement is not None else "—"
                      for x in (a, b))  # fmt: skip
    return (
        f"the judge changed between these runs: check agreement {_share(a.agreement)} → "
        f"{_share(b.agreement)} [{found.n_items} check items; {tests}, level "
        f"{found.level:g} over {len(found.p_values)} component(s); its disagreement with "
        f"itself {noise}]"
    )


def _share(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _check(run: Path) -> JudgeCheck | None:
    summary = run / SUMMARY
    return read_model(summary, Summary).judge_check if summary.is_file() else None
