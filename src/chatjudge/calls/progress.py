"""The terminal progress bar: items, rate, ETA, failures and tokens (rich, on stderr).

Per item it only bumps counters; the rate and the other figures are computed when
the bar redraws (4 times a second), so the bar costs nothing per judge call.
"""

from __future__ import annotations

from types import TracebackType

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


class RunProgress:
    """Counts finished items; draws a live bar only on a terminal."""

    def __init__(
        self,
        total: int,
        *,
        enabled: bool = True,
        console: Console | None = None,
        label: str = "judging",
    ) -> None:
        console = console or Console(stderr=True)
        self.done = 0
        self.failed = 0
        self.tokens = 0
        self.enabled = enabled and console.is_terminal
        self._progress = Progress(
            TextColumn(label),
            BarColumn(),
            MofNCompleteColumn(),
            _FiguresColumn(self),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            refresh_per_second=4,
            disable=not self.enabled,
        )
        self._task = self._progress.add_task(label, total=total)

    def advance(self, *, failed: bool, tokens: int) -> None:
        self.done += 1
        self.failed += failed
        self.tokens += tokens
        if self.enabled:
            self._progress.advance(self._task)

    def __enter__(self) -> RunProgress:
        self._progress.__enter__()
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._progress.__exit__(et, ev, tb)


class _FiguresColumn(ProgressColumn):
    """Rate, failures and tokens, read from the run's counters at redraw time."""

    def __init__(self, run: RunProgress) -> None:
        super().__init__()
        self.run = run

    def render(self, task: Task) -> Text:
        speed = task.speed
        rate = f"{speed:,.1f} items/s" if speed else "- items/s"
        return Text.assemble(
            (rate, "cyan"),
            "  ",
            (f"{self.run.failed:,} failed", "red"),
            "  ",
            f"{self.run.tokens:,} tokens",
        )
