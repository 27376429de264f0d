"""The `chatjudge` command line, one module per command or group of commands. Exit status:
`chatjudge.errors.ExitCode`, mapped from every command's outcome by `common.exit_for`."""

from __future__ import annotations

import gc
import os
from typing import Annotated

import typer

from chatjudge.__about__ import __version__
from chatjudge.cli.commands import Commands
from chatjudge.errors import ExitCode

app = typer.Typer(
    name="chatjudge",
    cls=Commands,
    help="Evaluate multi-turn chat assistants with LLM judges.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _print_version(given: bool) -> None:
    if given:
        typer.echo(f"chatjudge {__version__}")
        raise typer.Exit(ExitCode.OK)


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_print_version,
            is_eager=True,
            help="Print chatjudge's version and exit.",
        ),
    ] = False,
) -> None:
    """The options of `chatjudge` itself, before the command."""
    # Before any command imports numpy: OpenBLAS would start a thread per core, each with
    # its buffers, for the summary's small matrices, which one thread computes alike (the
    # more cores, the more CPU spent for nothing). A value the user set is kept.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def main() -> None:
    """`chatjudge`, the process: what only a process of its own may set, then the command."""
    # pydantic looks for plugins as it builds its first model: a scan of every installed
    # distribution's entry points (the more packages installed, the longer) for plugins
    # that would only observe chatjudge's own validation. A
    # value the user set is kept: pydantic's list of the plugins to leave out.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    # Before typer builds its flags' validators (loading pydantic) and the command's modules
    # load: the cyclic collector's default threshold would walk the start-up objects, which
    # are never garbage, over a hundred times in a small run. The judge loop
    # then freezes them (`common.collect_less_often`).
    gc.set_threshold(10_000)
    app()


__all__ = ["app", "main"]
