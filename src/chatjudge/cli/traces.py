"""`chatjudge import`: production traces and logs in, rows for a pairwise replay out."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from chatjudge.cli.common import OverwriteOpt, err, fail
from chatjudge.errors import ChatJudgeError

MAX_DUPLICATES_SHOWN = 20


def import_traces(
    files: Annotated[
        list[Path],
        typer.Argument(
            metavar="FILE",
            help="OTLP JSON files (spans, and log records of the older GenAI event form), "
            "chat-completions logs (.jsonl), or span tables (.parquet, .csv).",
            show_default=False,
        ),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            "-o",
            help="The JSONL file of rows to write; beside it, <name>.run.json records the "
            "import (files and options), so that the same import rewrites it.",
        ),
    ],
    turns: Annotated[
        str,
        typer.Option(
            help="last: one row per conversation, its last assistant turn; all: one row per "
            "assistant turn."
        ),
    ] = "last",
    sample: Annotated[
        int | None,
        typer.Option(help="Keep N conversations, drawn at random with --seed.", metavar="N"),
    ] = None,
    seed: Annotated[int, typer.Option(help="The seed of --sample.")] = 0,
    redact: Annotated[
        list[str] | None,
        typer.Option(
            "--redact",
            metavar="REGEX",
            help="Replace matches with [REDACTED] in everything written (repeatable), e.g. "
            "e-mail addresses or keys.",
        ),
    ] = None,
    keep: Annotated[
        list[str] | None,
        typer.Option(
            "--keep",
            metavar="ATTR",
            help="Copy this span attribute (or log field) into a column of its name, to "
            "slice by with `gate --by` (repeatable).",
        ),
    ] = None,
    skip_invalid: Annotated[
        bool,
        typer.Option(
            "--skip-invalid",
            help="Go on with the valid calls and list the invalid ones (file, line or span "
            "id) on stderr, exit 1; without it, invalid input stops everything (exit 2).",
        ),
    ] = False,
    overwrite: OverwriteOpt = False,
) -> None:
    """Turn production traces into rows for a pairwise replay: calls grouped into
    conversations, each row the history and user turn a production call saw and the reply
    it gave (baseline_model_response). A span whose trace and span ids were read before
    is read once if it makes the same call, and left out with a warning if not.

    Then `generate --field response --model CANDIDATE`, `run -p pairwise-chat-quality`
    and `gate` compare a candidate model with production.
    """
    from chatjudge.traces import ImportOptions, TraceError, import_traces

    options = ImportOptions(
        turns=turns,  # type: ignore[arg-type]
        sample=sample,
        seed=seed,
        redact=tuple(redact or ()),
        keep=tuple(keep or ()),
        skip_invalid=skip_invalid,
        overwrite=overwrite,
    )
    try:
        done = import_traces(files, out, options)
    except TraceError as exc:
        raise fail(f"{exc}\nnothing was written.") from None
    except ChatJudgeError as exc:
        raise fail(str(exc)) from None
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
    if done.skipped:
        raise typer.Exit(1)
