"""`chatjudge import`: production traces and logs in, rows for a pairwise replay out; its
options are `chatjudge.options.ImportOptions`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from chatjudge.cli.common import err, fail, option_values, with_options
from chatjudge.errors import ChatJudgeError, ExitCode

if TYPE_CHECKING:
    from chatjudge.traces import Imported

MAX_DUPLICATES_SHOWN = 20

FilesArg = Annotated[
    list[Path],
    typer.Argument(
        metavar="FILE",
        help="OTLP JSON files (spans, and log records of the older GenAI event form), "
        "chat-completions logs (.jsonl), or span tables (.parquet, .csv).",
        show_default=False,
    ),
]
OutOpt = Annotated[
    Path,
    typer.Option(
        "--out",
        "-o",
        help="The JSONL file of rows to write; beside it, <name>.run.json records the "
        "import (files and options), so that the same import rewrites it.",
    ),
]


@with_options("import")
def import_traces(files: FilesArg, out: OutOpt, **options: Any) -> None:
    """Turn production traces into rows for a pairwise replay: calls grouped into
    conversations, each row the history and user turn a production call saw and the reply
    it gave (baseline_model_response). Tool calls and results stay messages (OpenAI's chat
    format); a turn that called tools keeps them in baseline_trajectory, and the tools
    offered go in `tools` where the trace records them. A span whose trace and span ids
    were read before is read once if it makes the same call, and left out with a warning if
    not.

    Then `generate --field response --model CANDIDATE`, `run -p pairwise-chat-quality`
    and `gate` compare a candidate model with production.
    """
    from chatjudge.options import ImportOptions
    from chatjudge.traces import TraceError, import_traces

    try:
        done = import_traces(files, out, ImportOptions(**option_values(options, "import")))
    except TraceError as exc:
        raise fail(f"{exc}\nnothing was written.") from None
    except ChatJudgeError as exc:
        raise fail(str(exc)) from None
    _tell(done, out)
    if done.skipped:
        raise typer.Exit(ExitCode.FAILED)


def _tell(done: Imported, out: Path) -> None:
    """What was imported, and what was passed over, left out or skipped, on stderr."""
    err.print(
        f"imported {done.n_calls} call(s): {done.n_conversations} conversation(s), "
        f"{done.n_rows} row(s) -> {out}",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    if done.n_failed_calls:
        err.print(
            f"passed over {done.n_failed_calls} call(s) that failed in production (error "
            "status, no reply)",
            highlight=False,
            soft_wrap=True,
        )
    if done.duplicates:
        shown = done.duplicates[:MAX_DUPLICATES_SHOWN]
        more = len(done.duplicates) - len(shown)
        listed = "".join(f"\n  {escape(d)}" for d in shown) + (
            f"\n  ... and {more} more" if more else ""
        )
        err.print(
            f"[bold yellow]warning:[/] {len(done.duplicates)} span(s) left out: a span read "
            f"before has the same trace and span ids, with other content{listed}",
            highlight=False,
            soft_wrap=True,
        )
    for problem in done.skipped:
        err.print(f"[bold yellow]skipped:[/] {escape(problem)}", highlight=False, soft_wrap=True)


RunArg = Annotated[
    Path,
    typer.Argument(metavar="RUN", help="The run directory of `chatjudge run`.", show_default=False),
]


@with_options("export")
def export(run: RunArg, **options: Any) -> None:
    """Send a run's verdicts back where its traces came from: one OpenTelemetry
    `gen_ai.evaluation.result` log record per judged item and metric (score value and
    label, the judge's rationale as explanation; CANDIDATE 1, BASELINE 0, TIE 0.5 for a
    pairwise choice), parented to the span each row was imported from (its trace_id and
    span_id), or carrying chatjudge.row_id; the evaluator under chatjudge.protocol,
    .protocol.sha256, .judge, .version and .run_id. A failed item is exported as an error
    (error.type), never a score; no key is ever exported.

    A collector that refuses the records or cannot be reached: exit 2, saying how many
    were sent.
    """
    from chatjudge.options import ExportOptions
    from chatjudge.otel import SendError, export_run

    chosen = ExportOptions(**option_values(options, "export"))
    try:
        done = export_run(
            run,
            chosen.otlp,
            chosen.otlp_endpoint,
            redact=chosen.redact,
            protocol=chosen.protocol,
            overwrite=chosen.overwrite,
        )
    except SendError as exc:
        raise fail(str(exc)) from None
    except ChatJudgeError as exc:
        raise fail(str(exc)) from None
    where = " and ".join(str(w) for w in (done.otlp, done.endpoint) if w is not None)
    err.print(
        f"exported {done.records} record(s), {done.parented} parented to their span -> {where}",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
