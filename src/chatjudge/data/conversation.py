"""Rendering conversation fields into judge prompt text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

ROLES = frozenset({"user", "assistant", "system"})


def render_messages(messages: Sequence[dict[str, Any]], *, include_system: bool = False) -> str:
    """One message per line as `**role**: content`, the format CollabLLM's judge was used with.

    System messages are left out unless asked for: they instruct the assistant,
    they are not part of the conversation being judged.
    """
    return "\n".join(
        f"**{m['role']}**: {m['content']}"
        for m in messages
        if include_system or m["role"] != "system"
    )
