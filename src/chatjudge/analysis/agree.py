"""`chatjudge agree`: how far a run's judge agrees with human raters.

Human labels come from a JSONL or CSV file keyed by item `id`, one row per rating
(a `rater` column is optional). Pairwise runs: the judge's choice against every
human vote, with ties (MT-Bench setup S1) and without (S2), with Cohen's kappa.
Pointwise runs: Spearman and Kendall correlation of the judge's score with the
mean human score, and Krippendorff's alpha among the humans and with the judge
as one more rater. Every figure carries a 95% interval valid at its size (the share
equal: Clopper-Pearson) or, for kappa, correlations and alpha on too few or too alike
pairs, none and a `too_few` saying why. Both kinds also
get the run's metrics calibrated by the labels (`calibrated`, PPI++:
`chatjudge.analysis.calibration`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any

from chatjudge.analysis.calibration import calibrate_run, read_label_frame
from chatjudge.errors import UsageError
from chatjudge.formats.analyses import Agreement
from chatjudge.protocols.kinds import kind_named
from chatjudge.rundir import RunDir
from chatjudge.stats import agreement, correlation
from chatjudge.stats.reliability import krippendorff_alpha_estimate


def read_human_labels(path: Path, column: str | None = None) -> tuple[str, dict[str, list[Any]]]:
    """`(column, {item id: [ratings]})` from a JSONL/CSV file with `id` and a rating column."""
    frame = read_label_frame(path)
    if "id" not in frame.columns:
        raise UsageError(f"{path}: no 'id' column")
    if column is None:
        column = next((c for c in ("label", "score", "human") if c in frame.columns), None)
        if column is None:
            raise UsageError(
                f"{path}: name the rating column with --column (found {list(frame.columns)})"
            )
    if column not in frame.columns:
        raise UsageError(f"{path}: no column '{column}'")
    labels: dict[str, list[Any]] = defaultdict(list)
    for row_number, item_id, value in zip(frame.index, frame["id"], frame[column], strict=True):
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        if isinstance(value, str) and not value.strip():
            raise UsageError(f"{path}: row {row_number}, field '{column}': empty rating")
        labels[str(item_id)].append(value)
    return column, dict(labels)


def agree_with_humans(
    run_dir: Path, human_path: Path, *, column: str | None = None, score: str | None = None
) -> dict[str, Any]:
    run = RunDir(run_dir)
    summary = run.summary
    judged = run.ok_scores()
    # First: a bad human file is refused with its row and field before anything else.
    calibration = calibrate_run(run_dir, human_path, column=column, score=score)
    prefers = kind_named(summary.kind, summary.scorer).prefers
    if column is None and not prefers:
        # A file whose columns are named after scores: agree on the first of them.
        named = [c for c, s in calibration["columns"].items() if c == s]
        if named and not {"label", "score", "human"} & set(_header(human_path)):
            column, score = named[0], score or named[0]
    column, humans = read_human_labels(human_path, column)
    shared = [i for i in judged if i in humans]
    if not shared:
        raise UsageError(f"no item of {run_dir} judged ok has a human label in {human_path}")
    out: dict[str, Any] = {
        "format": Agreement.version(),
        "run": str(run_dir),
        "human": str(human_path),
        "column": column,
        "protocol": summary.protocol,
        "judge": summary.judge,
        "n_items": len(shared),
    }
    out["calibrated"] = calibration.pop("calibrated")
    out["calibration"] = calibration
    if prefers:
        judge, human = zip(
            *((judged[i]["pairwise_choice"], h) for i in shared for h in humans[i]), strict=True
        )
        out["with_ties"] = agreement(judge, human, ties=True).to_dict()
        try:
            out["without_ties"] = agreement(judge, human, ties=False).to_dict()
        except ValueError as exc:  # every pair had a tie on one side
            out["without_ties"] = {"error": str(exc)}
        return _agreement(out)
    score = score or next(k for k, v in judged[shared[0]].items() if isinstance(v, int | float))
    judge_scores = [float(judged[i][score]) for i in shared]
    human_means = [sum(map(float, humans[i])) / len(humans[i]) for i in shared]
    out["score"] = score
    try:
        out["correlation"] = correlation(judge_scores, human_means).to_dict()
    except ValueError as exc:  # a constant side (a judge giving one score to all): undefined
        out["correlation"] = {"error": str(exc), "n": len(shared)}
    raters = max(len(humans[i]) for i in shared)
    if raters >= 2:
        matrix = [
            [float(humans[i][r]) if r < len(humans[i]) else math.nan for i in shared]
            for r in range(raters)
        ]
        with_judge = [*matrix, judge_scores]
        out["krippendorff_alpha"] = {
            "humans": _alpha(matrix),
            "humans_and_judge": _alpha(with_judge),
            "n_raters": raters,
        }
    return _agreement(out)


def _agreement(out: dict[str, Any]) -> dict[str, Any]:
    """The content of agreement.json, checked against `chatjudge.formats.analyses.Agreement`."""
    return Agreement.model_validate(out).model_dump(mode="json", exclude_unset=True)


def _header(path: Path) -> list[str]:
    """The column names of a human labels file."""
    return [str(c) for c in read_label_frame(path).columns]


def _alpha(matrix: list[list[float]]) -> dict[str, Any]:
    try:
        found = krippendorff_alpha_estimate(matrix, "ordinal").to_dict()
        return {k: v for k, v in found.items() if k != "n"}
    except ValueError as exc:
        return {"value": None, "ci95": None, "error": str(exc)}
