"""How numbers are written, shared by the page and the terminal so both show the same figures."""

from __future__ import annotations

import re
from typing import Any

# Metrics that are shares of items read best as percentages.
_SHARE_SUFFIXES = ("_rate", "accuracy", "consistency", "agreement")
_SHARES = frozenset(
    {
        "ended_by_user",
        "ended_by_max_turns",
        "first_message_restates_question",
        "preference",
        "length_controlled_preference",
        "style_controlled_preference",
    }
)
# Corrected figures are named so that nobody takes them for the judge's raw rates.
_LABELS = {
    "length_controlled_preference": "Preference, length-controlled (corrected)",
    "style_controlled_preference": "Preference, style-controlled (corrected)",
}


_PASS_K = re.compile(r"(.+)_pass_(hat|at)_(\d+)")  # `accuracy_pass_hat_2` (summarize.tries)


def is_pass_k(name: str) -> bool:
    """`<metric>_pass_hat_<k>` or `<metric>_pass_at_<k>`: a share, drawn in its own chart."""
    return _PASS_K.fullmatch(name) is not None


def is_share(name: str) -> bool:
    return name.endswith(_SHARE_SUFFIXES) or name in _SHARES or is_pass_k(name)


def _decimals(value: float) -> int:
    size = abs(value)
    return 0 if size >= 100 else 1 if size >= 10 else 2


def format_value(name: str, value: float | None, decimals: int | None = None) -> str:
    """A metric value: shares as percentages, other means with a precision fit to their size."""
    if value is None:
        return "n/a"
    if is_share(name):
        return format_share(value)
    return f"{value:.{_decimals(value) if decimals is None else decimals}f}"


def format_share(value: float, digits: int = 1) -> str:
    return f"{value * 100:.{digits}f}%"


TOO_FEW = "too few to say"  # as `chatjudge.stats.intervals.TOO_FEW`


def format_ci(name: str, ci: list[float] | None, value: float | None = None) -> str:
    """A 95% interval as `[lo, hi]` written as precisely as its value; "too few to say" for
    a value without one (no interval valid at its size), a dash when there is no value."""
    if not ci:
        return "—" if value is None else TOO_FEW
    decimals = None if value is None else _decimals(value)
    return f"[{format_value(name, ci[0], decimals)}, {format_value(name, ci[1], decimals)}]"


def format_count(n: Any) -> str:
    return f"{n:,}" if isinstance(n, int) else "—"


def metric_label(name: str) -> str:
    """A metric's display name: `candidate_win_rate` -> `Candidate win rate`, `itr` -> `ITR`."""
    if name in _LABELS:
        return _LABELS[name]
    tried = _PASS_K.fullmatch(name)
    if tried is not None:  # `accuracy_pass_hat_2` -> `Accuracy pass^2`
        mark = "^" if tried[2] == "hat" else "@"
        return f"{metric_label(tried[1])} pass{mark}{tried[3]}"
    if len(name) <= 3:
        return name.upper()
    return name.replace("_", " ").capitalize()
