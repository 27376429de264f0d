"""Headless Chromium (Debian's package) driven by Playwright, for tests of the HTML report.

Playwright's own browser download is never used: install Chromium with
`apt-get install -y chromium chromium-driver`. Each launch gets a fresh profile and
flags that keep the browser from talking to the network on its own.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

from playwright.sync_api import BrowserContext, Dialog, Page, Request, sync_playwright

CHROMIUM = Path(os.environ.get("CHATJUDGE_CHROMIUM", "/usr/bin/chromium"))
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@contextmanager
def chromium() -> Iterator[BrowserContext]:
    """A headless Chromium with a throw-away profile; closed (and the profile removed) on exit."""
    if not CHROMIUM.exists():
        raise RuntimeError(
            f"Chromium not found at {CHROMIUM}: apt-get install -y chromium chromium-driver"
        )
    with (
        tempfile.TemporaryDirectory(prefix="chatjudge-chromium-") as profile,
        sync_playwright() as pw,
    ):
        context = pw.chromium.launch_persistent_context(
            profile,
            executable_path=str(CHROMIUM),
            headless=True,
            args=ARGS,
            viewport={"width": 1280, "height": 900},
        )
        try:
            yield context
        finally:
            context.close()


class PageWatch:
    """A page plus what it did: every request URL, every uncaught script error, every dialog."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        page.on("request", self._on_request)
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        page.on("dialog", self._on_dialog)

    def _on_request(self, request: Request) -> None:
        self.requests.append(request.url)

    def _on_dialog(self, dialog: Dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def open(self, path: Path) -> Page:
        """Load a local file and wait until its scripts have run."""
        self.page.goto(path.resolve().as_uri(), wait_until="load")
        return self.page

    def __enter__(self) -> PageWatch:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.page.close()
