"""Reading rate-limit headers the way providers send them."""

from __future__ import annotations

import email.utils
import time
from typing import Any


def retry_after(headers: Any) -> float | None:
    """Seconds to wait from `Retry-After` (seconds or HTTP date) or `retry-after-ms`."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, when.timestamp() - time.time())
