"""`--help` of every command reads as whole paragraphs at any width, and flags show no
value type (`--quiet`, not `--quiet <bool>`)."""

from __future__ import annotations

import re

import pytest
import typer
from rich.text import Text
from typer.main import get_command
from typer.testing import CliRunner

from chatjudge.cli import app
from chatjudge.cli.help import paragraphs

ANSI = re.compile(r"\x1b\[[0-9;]*m")
COMMANDS = sorted(get_command(app).commands)  # type: ignore[attr-defined]


def render_help(application: typer.Typer, args: list[str], width: int) -> str:
    done = CliRunner().invoke(application, [*args, "--help"], env={"COLUMNS": str(width)})
    assert done.exit_code == 0, done.output
    return ANSI.sub("", done.output)


def hard_breaks(text: str, width: int) -> list[str]:
    """Lines that end before the width where the next line's first word would have fit:
    a line break written in the source, not one the terminal made."""
    found = []
    lines = [line.rstrip() for line in text.splitlines()]
    for first, second in zip(lines, lines[1:], strict=False):
        if first.startswith("│") and second.startswith("│"):  # a row of a panel
            a, b = first[1:-1], second[1:-1]
            column = len(b) - len(b.lstrip())  # a continuation line starts at its column
            if column < 6 or not b.strip() or not a[column:].strip():
                continue
            before, room, word = a[column:].rstrip(), len(b) - column - 2, b.split()[0]
        elif first.strip() and second.strip() and not ({"╭", "╰", "│"} & {first[0], second[0]}):
            # the description, padded one column a side
            before, room, word = first.strip(), width - 2, second.split()[0]
        else:
            continue
        if not word.startswith("[") and len(before) + 1 + len(word) <= room:
            found.append(f"{before!r} / {word!r}")
    return found


@pytest.mark.parametrize("width", [80, 100, 140])
@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_help_is_whole_paragraphs_and_bare_flags(command: str, width: int) -> None:
    text = render_help(app, [command] if command else [], width)
    assert "Usage:" in text and "--help" in text
    assert "<bool>" not in text
    assert hard_breaks(text, width) == []


def test_the_check_catches_broken_paragraphs_and_bool_types() -> None:
    """Plain typer, which keeps a docstring's line breaks: the checks above would fail."""
    plain = typer.Typer()

    @plain.command()
    def cmd(quiet: bool = typer.Option(False, help="No progress bar.")) -> None:
        """The first paragraph, as the list
        of commands shows it.

        A second paragraph that breaks
        in the middle of its sentence.
        """

    @plain.command()
    def other() -> None:
        """Another command, so that `cmd` is a subcommand."""

    listing, text = render_help(plain, [], 100), render_help(plain, ["cmd"], 100)
    assert "<bool>" in text
    assert hard_breaks(listing, 100) == ["'The first paragraph, as the list' / 'of'"]
    assert hard_breaks(text, 100) == ["'A second paragraph that breaks' / 'in'"]


def test_paragraphs_keeps_paragraphs_and_joins_their_lines() -> None:
    text = """One line
    and its continuation.

    Second  paragraph,
    wrapped."""
    assert paragraphs(text) == "One line and its continuation.\n\nSecond paragraph, wrapped."
    assert paragraphs(None) is None


def test_brackets_in_help_are_shown_not_read_as_markup() -> None:
    """D11: `--tool-result-chars`' help ends with `… [cut N of M characters]`, which rich
    markup took for a style and dropped; a command's own help keeps its brackets too."""
    text = " ".join(render_help(app, ["run"], 400).split())
    assert "ending with `… [cut N of M characters]`." in text
    written = "Values in [0, 1], [cut N of M characters] and [bold]x[/bold]."
    assert Text.from_markup(paragraphs(written) or "").plain == written
