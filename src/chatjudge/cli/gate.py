"""`chatjudge gate`: whether the candidate ships, from finished runs or judged batch by
batch (`--sequential`); its options are `chatjudge.options.GateOptions` and the run options
it passes on, its terminal text is `chatjudge.report.gate_text`'s."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from pydantic import ValidationError

from chatjudge.cli.common import (
    exit_for,
    fail,
    interrupted,
    option_values,
    out,
    show_warnings,
    with_options,
    write_markdown,
)
from chatjudge.errors import BudgetReachedError, ChatJudgeError, UsageError

if TYPE_CHECKING:
    from chatjudge.formats.analyses import Gate
    from chatjudge.options import GateOptions

RunOrDataArg = Annotated[
    Path | None,
    typer.Argument(
        help="One pairwise run directory (candidate vs baseline); with --sequential, "
        "the DATA file to judge."
    ),
]
# How a gate's Markdown summary opens (`chatjudge.report.gate_text.markdown`): --markdown
# replaces a file that opens so, as an earlier gate's.
SUMMARY_HEADING = b"### chatjudge gate:"
# The run options a sequential gate passes on only when given (`run`'s defaults otherwise).
WHEN_GIVEN = ("max_cost_usd", "price_in", "price_out", "prices")


@with_options("gate")
def gate(run_or_data: RunOrDataArg = None, **options: Any) -> None:
    """Decide whether the candidate ships: a paired difference with its 95% interval.

    One pairwise run (the candidate's preference rate minus 1/2), or --baseline DIR
    --candidate DIR (two runs of one protocol on the same rows). Exit status: 0 pass,
    1 fail, 3 inconclusive, 2 bad usage or invalid input, 4 --max-cost-usd reached
    before a decision. Failed or unpaired rows are counted and shown, never an exit code.
    """
    show_warnings()
    values = option_values(options, "gate")
    chosen = _checked(values)
    try:
        _refuse_markdown_over_inputs(run_or_data, chosen)
        if chosen.sequential:
            result = _sequential(run_or_data, chosen, values)
        else:
            result = _finished(run_or_data, chosen)
    except BudgetReachedError as exc:
        raise fail(str(exc), exit_for(exc)) from None
    except (ChatJudgeError, ValueError) as exc:
        raise fail(str(exc)) from None
    except KeyboardInterrupt:
        if not chosen.sequential:
            raise
        kept = f"the judgments of the batches so far are kept in {chosen.out}"
        raise interrupted(kept) from None
    _show(result, chosen.markdown)
    budget = result.sequential is not None and result.sequential.stopped == "budget"
    raise typer.Exit(exit_for("budget" if budget else result.outcome))


def _checked(values: dict[str, Any]) -> GateOptions:
    """The gate's options, and the run options it passes on, within their limits (exit 2
    naming the flag otherwise), whether or not the gate judges."""
    from chatjudge.options import OPTION_GROUPS, GateOptions, RunConfig, describe

    if values["require"] not in ("not-worse", "better"):
        raise fail(f"--require must be not-worse or better, got {values['require']!r}")
    if values["control"] not in (None, "length", "style"):
        raise fail(f"--control takes length or style, not {values['control']!r}")
    own = {k: v for k, v in values.items() if k in GateOptions.model_fields}
    try:
        RunConfig.from_options({k: v for k, v in values.items() if k in OPTION_GROUPS})
        return GateOptions(**own)
    except ValidationError as exc:
        raise fail(describe(exc)) from None
    except UsageError as exc:
        raise fail(str(exc)) from None


def _refuse_markdown_over_inputs(run_or_data: Path | None, chosen: GateOptions) -> None:
    """--markdown is written last: refused now by the output rule (`chatjudge.outputs`),
    never a link, an input or a run's file; GitHub's step summary is appended to, an
    earlier gate's summary replaced, any other file only with --overwrite."""
    from chatjudge.outputs import check_file_output, check_written, step_summary

    if chosen.markdown is None:
        return
    given = (run_or_data, chosen.data, chosen.human, chosen.baseline_data)
    inputs = [p for p in given if p is not None]
    summary = step_summary(chosen.markdown)
    if summary is not None:  # written by the name GitHub gave it
        check_written(chosen.markdown, [summary], inputs, flag="--markdown")
        return
    kind = "gate's Markdown summary"
    check_file_output(chosen.markdown, inputs, kind=kind, is_kind=_is_summary,
                      overwrite=chosen.overwrite, flag="--markdown")  # fmt: skip


def _is_summary(path: Path) -> bool:
    """Whether `path` is a gate's Markdown summary: it opens with the heading that
    `chatjudge.report.gate_text.markdown` writes first."""
    with path.open("rb") as text:
        return text.readline().startswith(SUMMARY_HEADING)


def _decision(chosen: GateOptions) -> dict[str, Any]:
    """The options both kinds of gate decide with."""
    return chosen.model_dump(
        include={"metric", "margin", "require", "cluster", "by", "slices_must_not_regress", "seed"}
    )


def _sequential(data: Path | None, chosen: GateOptions, values: dict[str, Any]) -> Gate:
    """Judge DATA batch by batch until decided, with the run options given."""
    from chatjudge.analysis.gate.sequential_judging import gate_sequential

    if data is None or chosen.protocol is None:
        raise UsageError("--sequential needs DATA and --protocol")
    if chosen.control or chosen.human:
        raise UsageError("--control and --human apply to a gate on finished runs")
    options = {k: values[k] for k in ("concurrency", "samples")}
    options.update((k, values[k]) for k in WHEN_GIVEN if values[k] is not None)
    if values["base_url"]:
        options["base_url"] = values["base_url"]
    if chosen.overwrite:
        options["overwrite"] = True  # the judged runs' --out, as `run --overwrite`
    result = gate_sequential(
        data,
        chosen.protocol,
        list(chosen.judge) or ["local"],
        chosen.out,
        baseline_data=chosen.baseline_data,
        batch=chosen.batch,
        **_decision(chosen),
        **options,
    )
    _write_report(Path(result.runs.get("candidate") or result.runs["run"]))
    return result


def _finished(run: Path | None, chosen: GateOptions) -> Gate:
    """Gate one pairwise run, or a baseline run against a candidate run."""
    from chatjudge.analysis.gate.decide import gate as run_gate
    from chatjudge.analysis.gate.decide import report_dir

    baseline, candidate = chosen.baseline, chosen.candidate
    if (baseline is None) != (candidate is None):
        raise UsageError("give both --baseline DIR and --candidate DIR")
    if run is not None and candidate is not None:
        raise UsageError("give one pairwise run, or --baseline and --candidate, not both")
    if run is None and candidate is None:
        raise UsageError(
            "gate needs one pairwise run (chatjudge gate DIR) or --baseline DIR --candidate DIR"
        )
    gated = candidate or run
    assert gated is not None
    result = run_gate(gated, baseline, chosen)
    _write_report(report_dir(gated, chosen))
    return result


def _write_report(run_dir: Path | None) -> None:
    """The gate's section in the report of the run whose directory holds gate.json."""
    if run_dir is not None:
        from chatjudge.report import write_report

        write_report(run_dir)


def _show(result: Gate, markdown: Path | None) -> None:
    """The decision on the terminal, and in --markdown's file when given."""
    from chatjudge.report.gate_text import markdown as gate_markdown
    from chatjudge.report.gate_text import notes, table

    out.print(table(result))
    for line in notes(result):
        out.print(line, highlight=False, markup=False, soft_wrap=True)
    if markdown is not None:
        write_markdown(markdown, gate_markdown(result))
