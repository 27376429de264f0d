"""`chatjudge merge`: join the outputs of N drivers run with `--shard I/N`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from chatjudge.cli.common import (
    OverwriteOpt,
    err,
    exit_status,
    fail,
    out,
    print_paths,
    warn_skipped,
)
from chatjudge.errors import ChatJudgeError


def merge(
    shards: Annotated[
        list[Path],
        typer.Argument(
            metavar="SHARD",
            help="Every shard's output: the run directories of `run --shard I/N`, or the "
            "JSONL files of `generate`/`simulate --shard I/N` (their store and summary beside).",
        ),
    ],
    out_path: Annotated[
        Path,
        typer.Option(
            "--out",
            "-o",
            help="The merged run directory (or JSONL file): what one unsharded command "
            "would have written, so that command resumes there sending nothing. One merge "
            "at a time: another one into the same --out meanwhile is refused (in use).",
        ),
    ],
    protocol: Annotated[
        str | None,
        typer.Option(
            "--protocol", "-p", help="Runs judged with a custom protocol: its .toml file."
        ),
    ] = None,
    overwrite: OverwriteOpt = False,
) -> None:
    """Join the shards of one run (or of one generate/simulate) into one output, identical
    to an unsharded run's; shards of different configurations are refused (exit 2)."""
    from chatjudge.merge import merge as join
    from chatjudge.report import produced_table, summary_table
    from chatjudge.rundir import REPORT, Produced, RunDir

    try:
        merged = join(shards, out_path, protocol=protocol, overwrite=overwrite)
    except ChatJudgeError as exc:
        raise fail(str(exc)) from None
    err.print(f"merged {len(shards)} shard(s) -> {merged.out}", highlight=False, markup=False)
    if merged.kind == "run":
        out.print(summary_table(RunDir(merged.out).summary))
        print_paths(merged.out, merged.out / REPORT)
        warn_skipped(merged.summary, "summary.json and the report")
    else:
        out.print(produced_table(merged.summary))
        summary = Produced(merged.out).summary
        err.print(f"rows:    {merged.out}\nsummary: {summary}", highlight=False, markup=False)
        warn_skipped(merged.summary, "the summary")
    raise exit_status(merged.summary)
