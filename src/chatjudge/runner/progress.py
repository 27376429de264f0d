"""The terminal progress bar: items, rate, ETA, failures and tokens (rich, on stderr)."""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


class RunProgress:
    """Counts finished items; draws a live bar only on a terminal, refreshed 4 times a second."""

    def __init__(self, total: int, *, enabled: bool = True) -> None:
        console = Console(stderr=True)
        self.failed = 0
        self._tokens = 0
        self._progress = Progress(
            TextColumn("judging"),
            BarColumn(),
            MofNCompleteColumn(),
            TaskProgressColumn(),
            TextColumn("[cyan]{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("[red]{task.fields[failed]} failed"),
            TextColumn("{task.fields[tokens]} tokens"),
            console=console,
            refresh_per_second=4,
            disable=not (enabled and console.is_terminal),
        )
        self._task = self._progress.add_task("judging", total=total, failed=0, tokens=0, rate="")

    def advance(self, *, failed: bool, tokens: dict[str, int]) -> None:
        self.failed += failed
        self._tokens += tokens.get("input_tokens", 0) + tokens.get("output_tokens", 0)
        task = self._progress.tasks[0]
        speed = task.speed
        self._progress.update(
            self._task,
            advance=1,
            failed=self.failed,
            tokens=self._tokens,
            rate=f"{speed:.1f} items/s" if speed else "",
        )

    def __enter__(self) -> RunProgress:
        self._progress.__enter__()
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._progress.__exit__(et, ev, tb)
