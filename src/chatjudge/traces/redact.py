"""--redact REGEX: matches replaced in everything a row holds, before the row is written."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from chatjudge.errors import UsageError

REPLACEMENT = "[REDACTED]"


class Redactor:
    """Replaces every match of any of the patterns in the strings of a value."""

    def __init__(self, patterns: Sequence[str]) -> None:
        self.patterns = []
        for pattern in patterns:
            try:
                self.patterns.append(re.compile(pattern))
            except re.error as exc:
                raise UsageError(
                    f"--redact {pattern!r} is not a regular expression: {exc}"
                ) from None

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def text(self, value: str) -> str:
        for pattern in self.patterns:
            value = pattern.sub(REPLACEMENT, value)
        return value

    def value(self, value: Any) -> Any:
        """Strings redacted, inside lists and objects too; anything else as it is."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        return value
