"""Safe substitution of data into a `str.format`-style judge template.

The template is parsed once; rendering joins literal chunks and field values, so
a value containing `{answer}` or a lone `{` is data and never a placeholder.
"""

from __future__ import annotations

import string
from collections.abc import Mapping

from chatjudge.errors import UsageError


class Template:
    """A parsed template: literal text with `{field}` placeholders and `{{`/`}}` escapes."""

    __slots__ = ("text", "fields", "_parts")

    def __init__(self, text: str) -> None:
        self.text = text
        parts: list[tuple[str, str | None]] = []
        try:
            parsed = list(string.Formatter().parse(text))
        except ValueError as exc:
            raise UsageError(f"template is not a valid format string: {exc}") from exc
        for literal, name, spec, conversion in parsed:
            if name is not None and (spec or conversion or not name.isidentifier()):
                raise UsageError(f"template placeholder {{{name}}} must be a plain field name")
            parts.append((literal, name))
        self._parts = tuple(parts)
        self.fields = tuple(dict.fromkeys(n for _, n in parts if n is not None))

    def render(self, values: Mapping[str, str]) -> str:
        """Substitute `values` (every placeholder must be present) verbatim."""
        out: list[str] = []
        for literal, name in self._parts:
            out.append(literal)
            if name is not None:
                out.append(values[name])
        return "".join(out)
