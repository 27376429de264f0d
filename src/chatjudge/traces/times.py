"""Times as trace files write them: a datetime, ISO 8601 text, or a number since the epoch
in seconds, milliseconds, microseconds or nanoseconds. No file says which unit its numbers
are in, so the size tells: a time of these decades is about 1.7e9 seconds, 1.7e12
milliseconds, 1.7e15 microseconds or 1.7e18 nanoseconds."""

from __future__ import annotations

import datetime as dt
from typing import Any

# (below this size, nanoseconds per unit): seconds, milliseconds, microseconds
_UNITS = ((1e11, 10**9), (1e14, 10**6), (1e17, 10**3))


def nanoseconds(value: Any) -> int:
    """Nanoseconds since the epoch; 0 for no time; ValueError for what is not a time."""
    if value is None:
        return 0
    if isinstance(value, dt.datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        return int(moment.timestamp() * 1e9)
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a time")
    if isinstance(value, int | float):
        scale = next((per for below, per in _UNITS if abs(value) < below), 1)
        return value * scale if isinstance(value, int) else int(value * scale)
    text = str(value)
    if text.isdigit():
        return nanoseconds(int(text))
    return nanoseconds(dt.datetime.fromisoformat(text.replace("Z", "+00:00")))
