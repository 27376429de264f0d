"""The terminal progress bar: items, rate, ETA, failures and tokens (rich, on stderr).

Per item it only bumps counters; the rate and the other figures are computed when
the bar redraws (4 times a second), so the bar costs nothing per judge call. Off a
terminal there is no bar, and rich's progress module is not even imported (`calls.bar`).
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING

from rich.console import Console

if TYPE_CHECKING:
    from rich.progress import Progress


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
        console = console or Console(stderr=True, emoji=False)
        self.done = 0
        self.failed = 0
        self.tokens = 0
        self.enabled = enabled and console.is_terminal
        self._progress: Progress | None = None
        if self.enabled:
            from chatjudge.calls.bar import progress_bar

            self._progress = progress_bar(self, label, console)
            self._task = self._progress.add_task(label, total=total)

    def advance(self, *, failed: bool, tokens: int) -> None:
        self.done += 1
        self.failed += failed
        self.tokens += tokens
        if self._progress is not None:
            self._progress.advance(self._task)

    def __enter__(self) -> RunProgress:
        if self._progress is not None:
            self._progress.__enter__()
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._progress is not None:
            self._progress.__exit__(et, ev, tb)
