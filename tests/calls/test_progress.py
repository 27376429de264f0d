"""The progress bar shows items, rate, failures, tokens and ETA on a terminal, nothing elsewhere."""

from __future__ import annotations

import io
import time

from rich.console import Console

from chatjudge.calls.progress import RunProgress


def _render(progress: RunProgress) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=200, color_system=None)
    console.print(progress._progress.get_renderable())
    return buffer.getvalue()


def test_a_terminal_bar_shows_the_figures() -> None:
    console = Console(file=io.StringIO(), force_terminal=True, width=200)
    progress = RunProgress(10, console=console)
    with progress:
        for i in range(4):
            progress.advance(failed=i == 3, tokens=1000)
            time.sleep(0.01)
        text = _render(progress)
    assert "4/10" in text
    assert "items/s" in text and "- items/s" not in text  # a measured rate
    assert "1 failed" in text and "4,000 tokens" in text
    assert "ETA" in text


def test_no_terminal_no_bar_but_counts() -> None:
    buffer = io.StringIO()
    progress = RunProgress(3, console=Console(file=buffer))
    with progress:
        progress.advance(failed=False, tokens=5)
    assert buffer.getvalue() == ""
    assert (progress.done, progress.failed, progress.tokens) == (1, 0, 5)
