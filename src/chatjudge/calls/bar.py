"""The drawing of the progress bar (rich): only a run on a terminal imports it."""

from __future__ import annotations

from typing import Protocol

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text


class Counts(Protocol):
    """What the bar reads at redraw time besides the items done."""

    failed: int
    tokens: int


def progress_bar(counts: Counts, label: str, console: Console) -> Progress:
    """Items, rate, failures, tokens and ETA, redrawn 4 times a second."""
    return Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        _FiguresColumn(counts),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
        refresh_per_second=4,
    )


class _FiguresColumn(ProgressColumn):
    """Rate, failures and tokens, read from the run's counters at redraw time."""

    def __init__(self, counts: Counts) -> None:
        super().__init__()
        self.counts = counts

    def render(self, task: Task) -> Text:
        speed = task.speed
        rate = f"{speed:,.1f} items/s" if speed else "- items/s"
        return Text.assemble(
            (rate, "cyan"),
            "  ",
            (f"{self.counts.failed:,} failed", "red"),
            "  ",
            f"{self.counts.tokens:,} tokens",
        )
