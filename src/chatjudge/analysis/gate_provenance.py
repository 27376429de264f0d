"""Who judged the two runs a gate compares: its mismatch check by the evaluator
fingerprint (naming the parts that differ), and each side's evaluator and what its
providers reported serving, recorded in `gate.json`."""

from __future__ import annotations

from pathlib import Path

from chatjudge.formats.analyses import Gate
from chatjudge.formats.io import read_model
from chatjudge.formats.run_info import RunInfo
from chatjudge.formats.summary import Summary
from chatjudge.rundir import SUMMARY, read_run_info, run_differences
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
        result.evaluators[role] = read_run_info(run).evaluator
        summary = run / SUMMARY
        served = read_model(summary, Summary).served if summary.is_file() else None
        if served:
            result.served[role] = served
