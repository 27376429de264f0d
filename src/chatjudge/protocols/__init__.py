"""Judge protocols: the built-in two and custom ones from TOML files."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from chatjudge.errors import UsageError
from chatjudge.protocols.builtin import (
    interactivity_accuracy,
    pairwise_chat_quality,
    tool_trajectory,
)
from chatjudge.protocols.digest import check_recorded, protocol_sha256
from chatjudge.protocols.spec import (
    BASELINE,
    CANDIDATE,
    TIE,
    ChoiceSpec,
    FieldSpec,
    MetricSpec,
    Protocol,
    ScoreSpec,
)
from chatjudge.protocols.template import Template

BUILTIN = {
    "interactivity-accuracy": interactivity_accuracy,
    "pairwise-chat-quality": pairwise_chat_quality,
    "tool-trajectory": tool_trajectory,
}


@cache
def _builtin(name: str) -> Protocol:
    return BUILTIN[name]()


def get_protocol(name_or_path: str | Path | Protocol) -> Protocol:
    """A built-in protocol by name, or a custom one from a `.toml` file."""
    if isinstance(name_or_path, Protocol):
        return name_or_path
    key = str(name_or_path)
    if key in BUILTIN:
        return _builtin(key)
    if key.endswith(".toml"):
        from chatjudge.protocols.toml import load_toml_protocol

        return load_toml_protocol(Path(key))
    raise UsageError(
        f"unknown protocol '{key}': use one of {', '.join(BUILTIN)} or a path to a .toml file"
    )


def list_protocols() -> list[Protocol]:
    return [_builtin(name) for name in BUILTIN]


__all__ = [
    "BASELINE",
    "CANDIDATE",
    "TIE",
    "BUILTIN",
    "ChoiceSpec",
    "FieldSpec",
    "MetricSpec",
    "Protocol",
    "ScoreSpec",
    "Template",
    "check_recorded",
    "get_protocol",
    "list_protocols",
    "protocol_sha256",
]
