"""`chatjudge history`: a metric across a line of runs, where the judge changed, and whether
the latest step (or any, with --all-steps) is a regression."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from chatjudge.cli.common import fail, out, show_warnings, write_markdown
from chatjudge.errors import ChatJudgeError

if TYPE_CHECKING:
    from chatjudge.formats.history import History

# A page this command wrote, found by its generator line and its title.
PAGE_MARK = b"<title>Release history"


def history(
    runs: Annotated[
        list[str],
        typer.Argument(
            help="Run directories, oldest first by their summaries' time; or "
            "NAME=DIR each, in the order given."
        ),
    ],  # fmt: skip
    metric: Annotated[
        list[str] | None,
        typer.Option("--metric", help="A metric to follow (repeatable; default: the first)."),
    ] = None,
    by: Annotated[
        str | None, typer.Option(help="Show each step's difference per value of this column.")
    ] = None,
    margin: Annotated[
        float, typer.Option(help="A step regresses when its 95% interval lies below −margin.")
    ] = 0.0,
    all_steps: Annotated[
        bool,
        typer.Option(
            "--all-steps", help="Decide every step, Holm-corrected (default: the latest)."
        ),
    ] = False,
    page: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write the history page (HTML) here.")
    ] = None,
    markdown: Annotated[
        Path | None,
        typer.Option(help="Write a Markdown summary here (GitHub's step summary is appended to)."),
    ] = None,
    protocol: Annotated[
        str | None,
        typer.Option("--protocol", "-p", help="A custom protocol's .toml, for runs judged by it."),
    ] = None,
    seed: Annotated[int, typer.Option(help="The bootstrap's seed.")] = 0,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace --out/--markdown files of another kind.")
    ] = False,
) -> None:
    """Show a metric across runs: each run with its interval, each step's paired difference
    (as `gate` computes it), where the judge changed, and whether the latest step is a
    regression. Exit status: 0, 1 when a decided step is a regression, 2 bad input."""
    from chatjudge.analysis.history import history as build

    show_warnings()
    try:
        inputs = [Path(r.partition("=")[2] or r) for r in runs]
        _check_outputs(page, markdown, inputs, overwrite)
        result = build(runs, metrics=metric or (), by=by, margin=margin, all_steps=all_steps,
                       seed=seed, protocol=protocol)  # fmt: skip
    except (ChatJudgeError, ValueError) as exc:
        raise fail(str(exc)) from None
    _show(result, page, markdown)
    raise typer.Exit(1 if result.regressions else 0)


def _show(result: History, page: Path | None, markdown: Path | None) -> None:
    """The tables and notes on the terminal; the page and the Markdown where asked."""
    from chatjudge.report.history_page import write_history_page
    from chatjudge.report.history_text import markdown as history_markdown
    from chatjudge.report.history_text import notes, table

    out.print(table(result))
    for line in notes(result):
        out.print(line, highlight=False, markup=False, soft_wrap=True)
    if page is not None:
        write_history_page(result, page)
    if markdown is not None:
        write_markdown(markdown, history_markdown(result))


def _check_outputs(
    page: Path | None, markdown: Path | None, inputs: list[Path], overwrite: bool
) -> None:
    """Both outputs by the output rule (`chatjudge.outputs`), before any run is read."""
    from chatjudge.outputs import check_file_output, check_written, step_summary
    from chatjudge.report.history_text import HEADING

    if page is not None:
        check_file_output(page, inputs, kind="history page", overwrite=overwrite,
                          is_kind=lambda p: _opens_with(p, PAGE_MARK, 2048))  # fmt: skip
    if markdown is None:
        return
    summary = step_summary(markdown)
    if summary is not None:
        check_written(markdown, [summary], inputs, flag="--markdown")
        return
    check_file_output(markdown, inputs, kind="history's Markdown summary", overwrite=overwrite,
                      is_kind=lambda p: _opens_with(p, HEADING.encode(), len(HEADING)),
                      flag="--markdown")  # fmt: skip


def _opens_with(path: Path, mark: bytes, within: int) -> bool:
    with path.open("rb") as text:
        return mark in text.read(within)
