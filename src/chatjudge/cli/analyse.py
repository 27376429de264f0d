"""Analyses of finished runs: `compare` (several candidates rated) and `agree` (the judge
against human raters). Their terminal text is built beside the analyses
(`chatjudge.analysis.compare_text`, `chatjudge.analysis.agree_text`)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer

from chatjudge.cli.common import ColumnOpt, err, fail, out
from chatjudge.errors import ChatJudgeError, UsageError

if TYPE_CHECKING:
    from chatjudge.analysis.compare import Control


def compare(
    runs: Annotated[list[str], typer.Argument(help="Run directories, optionally named: NAME=DIR.")],
    out_dir: Annotated[
        Path | None, typer.Option("--out", "-o", help="Where compare.json/.html go.")
    ] = None,
    baseline_name: Annotated[
        str, typer.Option(help="Pairwise runs: the name of their shared baseline.")
    ] = "baseline",
    score: Annotated[
        str | None, typer.Option(help="Pointwise runs: the score to compare (default: first).")
    ] = None,
    control: Annotated[
        str | None,
        typer.Option(
            help="length or style: also rate with the responses' length (and markdown) "
            "differences as covariates (Arena's style control)."
        ),
    ] = None,
    human: Annotated[
        list[str] | None,
        typer.Option(
            "--human",
            help="NAME=FILE (repeatable; FILE alone with one run): human ratings of run "
            "NAME, for its human-calibrated (PPI++) metrics.",
        ),
    ] = None,
) -> None:
    """Rate several candidates judged on the same items: Bradley-Terry ratings with 95%
    intervals and the pairwise win-rate matrix (Arena-Hard-Auto style)."""
    from chatjudge.analysis import compare_runs
    from chatjudge.analysis.calibration import calibrate_run
    from chatjudge.formats.analyses import Comparison
    from chatjudge.formats.io import write_json
    from chatjudge.report import write_compare_report
    from chatjudge.rundir import COMPARISON, COMPARISON_REPORT

    named = _named_runs(runs)
    try:
        humans = _human_files(human, named)
        target = _compare_target(out_dir, named, humans.values())
        if control not in (None, "length", "style"):
            raise UsageError(f"--control takes length or style, not {control!r}")
        chosen = cast("Control | None", control)  # checked just above
        result = compare_runs(named, baseline=baseline_name, score=score, control=chosen)
        calibrations = {
            name: calibrate_run(named[name], path, score=score) for name, path in humans.items()
        }
        if calibrations:
            result["calibrated"] = {n: c["calibrated"] for n, c in calibrations.items()}
            result = Comparison.model_validate(result).model_dump(mode="json")
    except (ChatJudgeError, ValueError) as exc:
        raise fail(str(exc)) from None
    _show_ratings(result, calibrations)
    target.mkdir(parents=True, exist_ok=True)
    write_json(target / COMPARISON, Comparison.model_validate(result))
    page = write_compare_report(target / COMPARISON_REPORT, result)
    err.print(
        f"comparison: {target / COMPARISON}\nreport:     {page}", highlight=False, markup=False
    )


def _compare_target(out_dir: Path | None, runs: dict[str, Path], inputs: Iterable[Path]) -> Path:
    """Where compare.json and compare.html go, by the output rule (`chatjudge.outputs`)."""
    from chatjudge.outputs import check_written
    from chatjudge.rundir import COMPARISON, COMPARISON_REPORT, RUNS_ROOT

    target = out_dir or RUNS_ROOT / ("compare-" + "-".join(runs)[:60])
    check_written(target, [target / COMPARISON, target / COMPARISON_REPORT], inputs)
    return target


def _named_runs(specs: list[str]) -> dict[str, Path]:
    """`compare`'s runs by name: NAME=DIR, or DIR named after itself."""
    named: dict[str, Path] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        run_dir = Path(path if sep else spec)
        named[name if sep else run_dir.name] = run_dir
    return named


def _show_ratings(result: dict[str, Any], calibrations: dict[str, Any]) -> None:
    """The ratings table, its control note, and each run's human-calibrated metrics."""
    from chatjudge.analysis.compare_text import control_note, evaluator_note, ratings_table
    from chatjudge.report import calibration_table

    out.print(ratings_table(result))
    out.print(evaluator_note(result), highlight=False, markup=False)
    note = control_note(result)
    if note is not None:
        out.print(note, highlight=False, markup=False)
    for name, calibration in calibrations.items():
        out.print(calibration_table(calibration, f"{name}: human-calibrated (PPI++)"))


def _human_files(specs: list[str] | None, runs: dict[str, Path]) -> dict[str, Path]:
    """`compare --human`: NAME=FILE per run, or one FILE when one run is compared."""
    files: dict[str, Path] = {}
    for spec in specs or []:
        name, sep, path = spec.partition("=")
        if not sep:
            if len(runs) != 1:
                raise UsageError(f"--human {spec}: name the run it rates, NAME=FILE")
            name, path = next(iter(runs)), spec
        if name not in runs:
            raise UsageError(f"--human {spec}: no run named {name!r} ({', '.join(runs)})")
        files[name] = Path(path)
    return files


def agree(
    run_dir: Annotated[Path, typer.Argument(help="A run directory written by `chatjudge run`.")],
    human: Annotated[
        Path, typer.Option("--human", help="JSONL/CSV of human ratings: id, label or score.")
    ],
    column: ColumnOpt = None,
    score: Annotated[
        str | None, typer.Option(help="Pointwise runs: the judge score to correlate.")
    ] = None,
) -> None:
    """Agreement of a run's judge with human raters: agreement with and without ties and
    Cohen's kappa (pairwise), Spearman/Kendall and Krippendorff's alpha (scores); and the
    run's metrics calibrated by the human labels (PPI++), in agreement.json's `calibrated`."""
    from chatjudge.analysis import agree_with_humans
    from chatjudge.analysis.agree_text import agreement_lines
    from chatjudge.formats.analyses import Agreement
    from chatjudge.formats.io import write_json
    from chatjudge.outputs import check_written
    from chatjudge.rundir import AGREEMENT

    try:
        check_written(run_dir / AGREEMENT, [run_dir / AGREEMENT], [human])
        result = agree_with_humans(run_dir, human, column=column, score=score)
    except (ChatJudgeError, ValueError) as exc:
        raise fail(str(exc)) from None
    out.print(agreement_lines(result), highlight=False, markup=False)
    if result.get("calibrated"):
        from chatjudge.report import calibration_table

        out.print(calibration_table({**result["calibration"], "calibrated": result["calibrated"]}))
    write_json(run_dir / AGREEMENT, Agreement.model_validate(result), only_set=True)
    err.print(f"agreement: {run_dir / AGREEMENT}", highlight=False, markup=False)
