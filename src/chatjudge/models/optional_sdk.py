"""Optional SDKs, imported only when their provider is used."""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from chatjudge.errors import UsageError


def import_sdk(module: str, *, provider: str, extra: str, what: str) -> ModuleType:
    """Import `module`, or say which `pip install` gives it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise UsageError(missing(provider, extra, what)) from exc


def require(module: str, *, provider: str, extra: str, what: str) -> None:
    """Check that `module` is installed without importing it (it may be heavy or fragile)."""
    if importlib.util.find_spec(module) is None:
        raise UsageError(missing(provider, extra, what))


def missing(provider: str, extra: str, what: str) -> str:
    return f"{provider}/ models need {what}: pip install 'chatjudge[{extra}]'"
