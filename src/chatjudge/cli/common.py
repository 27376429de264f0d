"""What the commands share: the consoles, the exit with a message, the flags generated from
`chatjudge.options`, the options several commands take, and the set-up of a command that
sends model calls."""

from __future__ import annotations

import contextlib
import gc
import inspect
import warnings
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from chatjudge.errors import (
    BudgetReachedError,
    ChatJudgeError,
    DataValidationError,
    ExitCode,
    FatalModelError,
    UsageError,
)
from chatjudge.options import (
    COLUMN_HELP,
    HUMAN_HELP,
    OVERWRITE_HELP,
    flags_of,
    help_of,
    metavar_of,
    option_fields,
)
from chatjudge.secrets import mask

# No `:name:` emoji codes: text such as a path or a judge's reply is printed as it is, and
# rich's table of 3,600 codes (0.9 MB) is never loaded.
out = Console(emoji=False)
err = Console(stderr=True, emoji=False)

ProtocolOpt = Annotated[
    str, typer.Option("--protocol", "-p", help="A built-in protocol name or a custom .toml file.")
]
MapOpt = Annotated[
    list[str] | None,
    typer.Option("--map", help="Rename an input column: COLUMN=FIELD (repeatable)."),
]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")]
HumanOpt = Annotated[
    Path | None,
    typer.Option("--human", help=HUMAN_HELP),
]
DryRunOpt = Annotated[
    bool,
    typer.Option(
        "--dry-run",
        help="Send nothing: print the calls the command would send (after what the store "
        "holds), their input tokens (the model's own tokenizer where one is known), the "
        "output caps and the cost as a range; exit 0.",
    ),
]
OverwriteOpt = Annotated[bool, typer.Option("--overwrite", help=OVERWRITE_HELP)]
ColumnOpt = Annotated[str | None, typer.Option(help=COLUMN_HELP)]


# A gate's decision, and a sequential gate stopped by its budget before one.
GATE_EXITS = {
    "pass": ExitCode.OK,
    "fail": ExitCode.FAILED,
    "inconclusive": ExitCode.INCONCLUSIVE,
    "budget": ExitCode.BUDGET,
}


def exit_for(outcome: BaseException | Mapping[str, Any] | str) -> ExitCode:
    """Every command's exit status, from its outcome: the error that stopped it, the summary
    of what it did (a row failed or skipped is 1), or a gate's decision (`GATE_EXITS`)."""
    if isinstance(outcome, str):
        return GATE_EXITS[outcome]
    if isinstance(outcome, KeyboardInterrupt):
        return ExitCode.INTERRUPTED
    if isinstance(outcome, BudgetReachedError):
        return ExitCode.BUDGET
    if isinstance(outcome, FatalModelError):  # 1: items finished before the stop (all kept)
        return ExitCode.FAILED if outcome.finished else ExitCode.USAGE
    if isinstance(outcome, BaseException):
        return ExitCode.USAGE
    failed = outcome["n_failed"] or outcome.get("n_skipped")
    return ExitCode.FAILED if failed else ExitCode.OK


def fail(message: str, code: ExitCode = ExitCode.USAGE) -> typer.Exit:
    """Print `error: message` on stderr; raise the returned exit with status `code`."""
    message = escape(mask(message))  # no key, and a message's brackets are not rich markup
    err.print(f"[bold red]error:[/] {message}", highlight=False, markup=True, soft_wrap=True)
    return typer.Exit(code)


def interrupted(kept: str) -> typer.Exit:
    """Ctrl-C: say what is `kept` and that the same command resumes; exit 130, as a
    shell reports a process that SIGINT stopped."""
    return fail(f"interrupted: {kept}; run the same command again to resume.", ExitCode.INTERRUPTED)


@contextlib.contextmanager
def stopping(finished: str, kept: str, written: Callable[[dict[str, Any]], None]) -> Iterator[None]:
    """The one ladder from how a command that sends calls stopped to what it says and its
    exit status: at `--max-cost-usd` everything is written, `written(summary)` shows it,
    exit 4; a fatal fault: the `finished` units (`"item(s) are kept in DIR"`) and that the
    command resumes after the fix, exit 1 (2 when none finished); another of chatjudge's
    errors, exit 2; Ctrl-C: what is `kept`, exit 130."""
    try:
        yield
    except BudgetReachedError as exc:  # everything is written, then exit 4
        written(exc.summary)
        raise fail(str(exc), exit_for(exc)) from None
    except FatalModelError as exc:
        raise fail(
            f"{exc}\n{exc.finished} finished {finished}; after the fix, the same command resumes.",
            exit_for(exc),
        ) from None
    except ChatJudgeError as exc:
        raise fail(str(exc)) from None
    except KeyboardInterrupt:
        raise interrupted(kept) from None


def column_map(pairs: list[str] | None) -> dict[str, str]:
    """`--map COLUMN=FIELD` pairs as a mapping."""
    mapping: dict[str, str] = {}
    for pair in pairs or []:
        column, sep, field = pair.partition("=")
        if not sep or not column or not field:
            raise UsageError(f"--map takes COLUMN=FIELD, got {pair!r}")
        mapping[column] = field
    return mapping


def with_options(name: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Give a command one flag per option `chatjudge.options` declares for command `name`
    (type, default, help, limits); their values arrive in the command's `**options`."""

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        signature = inspect.signature(command, eval_str=True)
        fixed = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
        generated = [_flag(option, info, name) for option, info in option_fields(name)]
        command.__signature__ = signature.replace(parameters=[*fixed, *generated])  # type: ignore[attr-defined]
        return command

    return decorate


def _flag(name: str, info: Any, command: str) -> inspect.Parameter:
    annotation: Any = info.annotation
    default = info.default
    if default == ():  # a repeatable option
        annotation, default = list[str] | None, None
    help = help_of(info, command)  # providers named as help is shown (`cli.help.named`)
    option = typer.Option(*flags_of(name, info), help=help, metavar=metavar_of(info))
    return inspect.Parameter(
        name,
        inspect.Parameter.KEYWORD_ONLY,
        default=default,
        annotation=Annotated[annotation, option],
    )


def option_values(raw: dict[str, Any], command: str) -> dict[str, Any]:
    """The CLI's option values as the options model takes them (repeatables as tuples)."""
    repeatable = {name for name, info in option_fields(command) if info.default == ()}
    return {k: tuple(v or ()) if k in repeatable else v for k, v in raw.items()}


@contextlib.contextmanager
def refused_before_sending(data: Path, to: str) -> Iterator[None]:
    """A problem found while setting a command up (options, data, models) is exit 2 with its
    message; nothing has been sent to `to` yet."""
    try:
        yield
    except DataValidationError as exc:
        raise fail(f"{data}: {exc}\nnothing was sent to {to}.") from None
    except (ChatJudgeError, ValueError) as exc:
        raise fail(str(exc)) from None


def show_warnings() -> None:
    """Warnings (an AMX build of llama.cpp, say) as one `warning:` line each, on stderr."""

    def show(message: Warning | str, *_: Any, **__: Any) -> None:
        text = escape(mask(str(message)))
        err.print(f"[bold yellow]warning:[/] {text}", highlight=False, soft_wrap=True)

    warnings.showwarning = show


def collect_less_often() -> None:
    """Tune the cyclic garbage collector for the judge loop, in our own process only.

    With hundreds of calls in flight, the default gen-0 threshold (700 allocations) runs
    a collection every few calls, and each one walks the requests still waiting: the more
    calls in flight, the more CPU per call. With start-up objects frozen (modules, models:
    never garbage) and a 10,000 threshold that cost all but goes. Garbage without cycles is
    freed by reference counting as before. `evaluate()` leaves the caller's collector alone.
    """
    gc.freeze()
    gc.set_threshold(10_000)


def warn_skipped(summary: dict[str, Any], where: str) -> None:
    """The `warning:` line for invalid rows that `--skip-invalid` left out."""
    if summary.get("n_skipped"):
        err.print(
            f"[bold yellow]warning:[/] {summary['n_skipped']} invalid row(s) skipped "
            f"(listed in {escape(where)})",
            highlight=False,
        )


def exit_status(summary: dict[str, Any]) -> typer.Exit:
    """0 when every item was done; 1 when one failed or was skipped (all recorded)."""
    return typer.Exit(exit_for(summary))


def print_paths(run_dir: Path, page: Path) -> None:
    from chatjudge.rundir import RESULTS

    err.print(f"results: {run_dir / RESULTS}\nreport:  {page}", highlight=False, markup=False)


def write_markdown(path: Path, text: str) -> None:
    """A command's Markdown summary (`gate`, `history`): GitHub's step summary gets it
    appended; any other file is replaced whole."""
    from chatjudge.outputs import step_summary
    from chatjudge.writing import open_write, replaced

    summary = step_summary(path)
    if summary is not None:
        with open_write(summary, append=True) as out:
            out.write(text.encode())
        return
    with replaced(path) as out:
        out.write(text.encode())
