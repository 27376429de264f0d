"""The API keys chatjudge sends, held in memory only, and masked out of every text it keeps.

Some servers and proxies quote the request's `Authorization` header in their error
messages, and a reply may echo anything. chatjudge knows the keys it sends, so every
text that reaches a person or a file (error messages, raw replies, rationales, the
store) goes through `mask` first, whatever the server said: a key shows up as the name
of the variable it came from, e.g. `[OPENAI_API_KEY]`.

Values shorter than `MIN_LENGTH` are not masked: servers of one's own are often given a
placeholder key (`EMPTY`, `none`, `x`), and masking it would rewrite ordinary words.
"""

from __future__ import annotations

import os

MIN_LENGTH = 8
_KNOWN: dict[str, str] = {}  # secret -> what is written instead


def remember(value: str | None, name: str) -> None:
    """Mask `value` from now on, shown as `[name]`."""
    if value and len(value) >= MIN_LENGTH and value not in _KNOWN:
        _KNOWN[value] = f"[{name}]"


def remember_env(*names: str) -> None:
    """Mask the values of these environment variables (the keys a provider sends)."""
    for name in names:
        remember(os.environ.get(name), name)


def mask(text: str) -> str:
    """`text` with every known key replaced by its variable's name (costs nothing without keys)."""
    if not _KNOWN or not text:
        return text
    for secret, shown in _KNOWN.items():
        if secret in text:
            text = text.replace(secret, shown)
    return text
