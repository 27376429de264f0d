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
