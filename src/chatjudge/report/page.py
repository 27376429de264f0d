"""What the report's HTML pages share: the template environment, the inlined static
files, and the write that never leaves half a page under its final name.

A run's page (`chatjudge.report.html`) and the comparison page
(`chatjudge.report.compare_page`) both render through `render_page`.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterable
from importlib.resources import files
from pathlib import Path
from typing import Any

from jinja2 import (
    BytecodeCache,
    Environment,
    FileSystemBytecodeCache,
    PackageLoader,
    StrictUndefined,
)
from jinja2.bccache import Bucket
from markupsafe import Markup

from chatjudge.writing import replaced


class _TemplateCache(FileSystemBytecodeCache):
    """jinja2's cache of compiled templates, in its private directory under the system's
    temporary one: a page is then not compiled from source on every run. A cache that
    cannot be written is left alone; the page is not."""

    def dump_bytecode(self, bucket: Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


def _template_cache() -> BytecodeCache | None:
    """The cache, or none where jinja2 finds no directory of this user's to hold it."""
    try:
        return _TemplateCache()
    except (OSError, RuntimeError):
        return None


_ENV = Environment(
    loader=PackageLoader("chatjudge.report", "templates"),
    bytecode_cache=_template_cache(),
    autoescape=True,
    trim_blocks=True,
    lstrip_blocks=True,
    undefined=StrictUndefined,
)


def render_page(template: str, context: dict[str, Any], path: Path) -> Path:
    """Render `template` with `context` into `path`, streamed as it renders; return `path`."""
    return _write(_ENV.get_template(template).generate(**context), path)


def _write(chunks: Iterable[str], path: Path) -> Path:
    """Write the page next to its final name first, so a reader never sees half a report
    (never through a symbolic link: `chatjudge.writing`)."""
    with replaced(path) as raw:
        out = io.TextIOWrapper(raw, encoding="utf-8")
        out.writelines(chunks)
        out.detach()  # flushed; `replaced` closes the file
    return path


def static_text(name: str) -> Markup:
    """A shipped stylesheet or script, inlined into the page (our own code, not data)."""
    return Markup(files("chatjudge.report").joinpath("static", name).read_text("utf-8"))


_ENV.globals["static_text"] = static_text
