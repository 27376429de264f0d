"""Judging: `run`, and what goes with a run: `report`, `protocols`, `prompt`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from chatjudge.chat.render import TOOL_RESULT_CHARS, JudgeSees
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
    exit_status,
    fail,
    option_values,
    out,
    print_paths,
    refused_before_sending,
    show_warnings,
    stopping,
    warn_skipped,
    with_options,
)
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
    from chatjudge.api import judged
    from chatjudge.formats.summary import Summary
    from chatjudge.report import summary_table
    from chatjudge.rundir import REPORT

    page = engine.out_dir / REPORT

    def written(summary: dict[str, Any]) -> None:
        out.print(summary_table(Summary.model_validate(summary)))  # as summary.json holds it
        print_paths(engine.out_dir, page)

    kept = f"finished judgments are kept in {engine.out_dir}"
    with stopping(f"item(s) are kept in {engine.out_dir}", kept, written):
        outcome = judged(engine)
    written(outcome.summary)
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
    from chatjudge.rundir import RunDir

    try:
        summary = RunDir(run_dir).summary
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
    data: Annotated[
        Path | None,
        typer.Argument(help="JSONL, CSV or Parquet file of items (not with --realism)."),
    ] = None,
    protocol: Annotated[
        str | None,
        typer.Option("--protocol", "-p", help="A built-in protocol name or a custom .toml file."),
    ] = None,
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
    realism: Annotated[
        str | None,
        typer.Option(
            metavar="NAME",
            help="Print a fixed prompt of `chatjudge realism` instead: goal (the goal writer's), "
            "disclosure, pushback or discriminator (the judge's), placeholders in braces.",
        ),
    ] = None,
) -> None:
    """Print the exact prompt a judge would get for one row (DATA --protocol P), or one of
    `chatjudge realism`'s fixed prompts (--realism NAME)."""
    if realism is not None:
        _realism_prompt(realism, data, protocol)
        return
    if data is None or protocol is None:
        raise fail("prompt needs DATA and --protocol (or --realism NAME)")
    view = {
        "include_system": include_system,
        "judge_sees": judge_sees,
        "tool_result_chars": tool_result_chars,
    }
    try:
        proto, item = _prompt_item(data, protocol, row, map_, view)
    except DataValidationError as exc:
        raise fail(f"{data}: {exc}") from None
    except ChatJudgeError as exc:
        raise fail(str(exc)) from None
    text = proto.render(item.text, flipped=flipped)
    sys.stdout.write(text + (proto.output_instruction if instruction else "") + "\n")


def _prompt_item(
    data: Path, protocol: str, row: int, map_: list[str] | None, view: dict[str, Any]
) -> tuple[Any, Any]:
    """The protocol and the item of `row` as the judge would see it."""
    from chatjudge.data import Source, iter_items, validate
    from chatjudge.options import RunConfig
    from chatjudge.protocols import get_protocol
    from chatjudge.protocols.kinds import kind_of

    if row < 1:
        raise UsageError(f"--row {row}: rows are numbered from 1 (the first row is --row 1)")
    judge_view = RunConfig.from_options(view).run.judge_view()
    proto = get_protocol(protocol)
    if not kind_of(proto).judged:
        raise UsageError(f"{proto.name} sends no prompt: it scores without a judge")
    source = Source(data, column_map(map_))
    n = validate(source, proto.fields, limit=row).n_rows
    if row < 1 or row > n:
        raise UsageError(f"--row {row} is out of range: the data has {n} row(s)")
    item = next(
        i
        for i in iter_items(source, proto.fields, limit=row, view=judge_view)
        if i.index == row - 1
    )
    return proto, item


def _realism_prompt(name: str, data: Path | None, protocol: str | None) -> None:
    from chatjudge.user_realism.fixed_prompts import fixed_prompt

    if data is not None or protocol is not None:
        raise fail("--realism prints a fixed prompt: it takes no DATA and no --protocol")
    try:
        text = fixed_prompt(name)
    except UsageError as exc:
        raise fail(str(exc)) from None
    sys.stdout.write(text + "\n")
