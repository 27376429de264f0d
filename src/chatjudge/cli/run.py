"""Judging: `run`, and what goes with a run: `report`, `protocols`, `prompt`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from chatjudge.cli.common import (
    ColumnOpt,
    DryRunOpt,
    HumanOpt,
    MapOpt,
    ProtocolOpt,
    QuietOpt,
    collect_less_often,
    column_map,
    err,
    exit_for,
    exit_status,
    fail,
    interrupted,
    option_values,
    out,
    print_paths,
    refused_before_sending,
    show_warnings,
    warn_skipped,
    with_options,
)
from chatjudge.conversation import TOOL_RESULT_CHARS, JudgeSees
from chatjudge.errors import ChatJudgeError, DataValidationError, ExitCode, UsageError
from chatjudge.options.declare import PROVIDERS
from chatjudge.options.texts import JUDGE_SEES_HELP, TOOL_RESULT_CHARS_HELP

DataArg = Annotated[Path, typer.Argument(help="JSONL, CSV or Parquet file of items.")]
RunDirArg = Annotated[Path, typer.Argument(help="A run directory written by `chatjudge run`.")]
JudgeOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--judge",
        "-j",
        help=f"{PROVIDERS}; repeat for a panel. Default: local; none for a "
        "deterministic protocol (tool-trajectory), which refuses one.",
    ),
]
RunOutOpt = Annotated[
    Path | None,
    typer.Option(
        "--out",
        "-o",
        help="Run directory (default: under ./chatjudge-runs/, named "
        "after the run, so the same command resumes).",
    ),
]

if TYPE_CHECKING:
    from chatjudge.runner.engine import Engine


@with_options("run")
def run(
    data: DataArg,
    protocol: ProtocolOpt,
    judge: JudgeOpt = None,
    out_dir: RunOutOpt = None,
    map_: MapOpt = None,
    quiet: QuietOpt = False,
    dry_run: DryRunOpt = False,
    **options: Any,
) -> None:
    """Judge every item of DATA and write results.jsonl, summary.json and report.html."""
    from chatjudge.api import build_engine
    from chatjudge.options import RunConfig

    show_warnings()
    collect_less_often()  # before the data is read: validation goes through every row too
    with refused_before_sending(data, "a judge"):
        config = RunConfig.from_options(option_values(options, "run"), progress=not quiet)
        engine = build_engine(
            data,
            protocol,
            judge,
            out_dir,
            column_map=column_map(map_),
            config=config,
            dry_run=dry_run,
        )
    if dry_run:
        from chatjudge.report.terminal import estimate_table

        with refused_before_sending(data, "a judge"):
            estimate = engine.estimate()
        out.print(estimate_table(estimate))
        raise typer.Exit(ExitCode.OK)
    judges = ", ".join(m.name for m in engine.models) or "no judge: deterministic"
    verb = engine.kind.verb
    err.print(
        f"{verb} {engine.n_rows} item(s) of {data} with {protocol} ({judges}) -> {engine.out_dir}",
        highlight=False,
        markup=False,
    )
    _judge(engine)


def _judge(engine: Engine) -> None:
    """Judge, building the report as items finish; everything is written however it ends."""
    from chatjudge.api import run_sync
    from chatjudge.errors import BudgetReachedError, FatalModelError
    from chatjudge.report import ReportBuilder, summary_table

    builder = ReportBuilder(engine.out_dir)  # the page is built as items finish
    try:
        outcome = run_sync(engine, on_item=builder.add)
    except BudgetReachedError as exc:  # everything is written: the page too, then exit 4
        page = builder.finish(exc.summary)
        out.print(summary_table(exc.summary))
        print_paths(engine.out_dir, page)
        raise fail(str(exc), exit_for(exc)) from None
    except FatalModelError as exc:
        builder.close()
        raise fail(
            f"{exc}\n{exc.finished} finished item(s) are kept in {engine.out_dir}; "
            "after the fix, the same command resumes.",
            exit_for(exc),
        ) from None
    except ChatJudgeError as exc:
        builder.close()
        raise fail(str(exc)) from None
    except KeyboardInterrupt:
        builder.close()
        raise interrupted(f"finished judgments are kept in {engine.out_dir}") from None
    page = builder.finish(outcome.summary)
    out.print(summary_table(outcome.summary))
    print_paths(engine.out_dir, page)
    warn_skipped(outcome.summary, "summary.json and the report")
    raise exit_status(outcome.summary)


def report(
    run_dir: RunDirArg,
    human: HumanOpt = None,
    column: ColumnOpt = None,
    score: Annotated[
        str | None, typer.Option(help="Pointwise runs: the score the rating column rates.")
    ] = None,
) -> None:
    """Print a run's summary and (re)write DIR/report.html."""
    from chatjudge.analysis.calibration import calibrate_run
    from chatjudge.report import calibration_table, summary_table, write_report
    from chatjudge.report.load import read_summary

    try:
        summary = read_summary(run_dir)
        calibration = calibrate_run(run_dir, human, column=column, score=score) if human else None
        page = write_report(run_dir, calibrated=calibration and calibration["calibrated"])
    except (ChatJudgeError, ValueError) as exc:
        raise fail(str(exc)) from None
    out.print(summary_table(summary))
    if calibration is not None:
        out.print(calibration_table(calibration))
    print_paths(run_dir, page)


def protocols() -> None:
    """List the built-in protocols with their data fields, verdict and metrics."""
    from chatjudge.protocols import list_protocols
    from chatjudge.protocols.kinds import kind_of

    for p in list_protocols():
        fields = ", ".join(
            f.name
            + (" (optional)" if not f.required else "")
            + (" [messages]" if f.conversation else "")
            for f in p.fields
        )
        scores = [
            f"{s.name} {s.min:g}-{s.max:g}" if s.max < 1e6 else f"{s.name} (a count)"
            for s in p.scores
        ]
        if p.choice is not None:
            scores.append(f"{p.choice.name} {'/'.join(p.choice.options)}")
        kind = kind_of(p)
        judged = p.kind if kind.judged else "no judge"
        out.print(f"[bold]{escape(p.name)}[/] ({judged}): {escape(p.description)}", highlight=False)
        out.print(f"  fields:  {fields}", highlight=False, markup=False)
        label = "verdict:" if kind.judged else "scores: "
        out.print(f"  {label} {', '.join(scores)}", highlight=False, markup=False)
        out.print(
            f"  metrics: {', '.join(m.name for m in p.metrics)}\n", highlight=False, markup=False
        )
    out.print(
        "Custom protocols: pass a .toml file to --protocol (see examples/chat_quality_1to5.toml; "
        "examples/tool_use_judge.toml places a trajectory and its tools)."
    )


def prompt(
    data: DataArg,
    protocol: ProtocolOpt,
    row: Annotated[int, typer.Option("--row", help="Which row (1-based, among rows).")] = 1,
    map_: MapOpt = None,
    flipped: Annotated[bool, typer.Option(help="Pairwise: show the flipped order.")] = False,
    instruction: Annotated[
        bool, typer.Option(help="Append the output-format instruction (judges without schema).")
    ] = False,
    include_system: Annotated[
        bool, typer.Option("--include-system", help="Show the conversation's system messages.")
    ] = False,
    judge_sees: Annotated[
        JudgeSees, typer.Option(metavar="VIEW", help=JUDGE_SEES_HELP)
    ] = "trajectory",
    tool_result_chars: Annotated[
        int, typer.Option(metavar="N", help=TOOL_RESULT_CHARS_HELP)
    ] = TOOL_RESULT_CHARS,
) -> None:
    """Print the exact prompt a judge would get for one row."""
    from chatjudge.data import Source, iter_items, validate
    from chatjudge.options import RunConfig
    from chatjudge.protocols import get_protocol
    from chatjudge.protocols.kinds import kind_of

    try:
        if row < 1:
            raise UsageError(f"--row {row}: rows are numbered from 1 (the first row is --row 1)")
        view = RunConfig.from_options(
            {
                "include_system": include_system,
                "judge_sees": judge_sees,
                "tool_result_chars": tool_result_chars,
            }
        ).run.judge_view()
        proto = get_protocol(protocol)
        if not kind_of(proto).judged:
            raise UsageError(f"{proto.name} sends no prompt: it scores without a judge")
        source = Source(data, column_map(map_))
        n = validate(source, proto.fields, limit=row).n_rows
        if row < 1 or row > n:
            raise UsageError(f"--row {row} is out of range: the data has {n} row(s)")
        item = next(
            i for i in iter_items(source, proto.fields, limit=row, view=view) if i.index == row - 1
        )
    except DataValidationError as exc:
        raise fail(f"{data}: {exc}") from None
    except ChatJudgeError as exc:
        raise fail(str(exc)) from None
    text = proto.render(item.text, flipped=flipped)
    sys.stdout.write(text + (proto.output_instruction if instruction else "") + "\n")
