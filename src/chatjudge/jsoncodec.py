"""JSON on the judge loop's hot path: orjson first, the standard library where orjson says no.

Every judge call decodes an input row and a reply and encodes a request body, a
results record and a report entry. orjson does each in about a tenth of the time
of `json` (a 2.4 KB results record: 2.4 µs against 20 µs on the benchmark machine);
with `json` these took about a tenth of the CPU chatjudge spent per call.

Reading accepts what `json` accepts: what orjson refuses (NaN and Infinity literals,
lone surrogate escapes) is read again by `json`. One difference is left: an integer
beyond 64 bits is read as a float, where `json` keeps every digit.
Writing gives compact UTF-8 JSON; NaN and Infinity become null (valid JSON, where
`json` writes `NaN`: no file chatjudge writes holds them), numpy values become numbers
and anything else that is not JSON its `str()`, so a date or a Decimal in a user's data
never stops a run. Text that is not valid Unicode (a lone surrogate, as a reply cut
inside an escaped emoji can hold) is written by `json` with `\\u` escapes instead of
failing.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import orjson

_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


def loads(data: str | bytes, *, parse_constant: Callable[[str], Any] | None = None) -> Any:
    """Parse one JSON document; `parse_constant` is used for NaN/Infinity, as in `json.loads`."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data, parse_constant=parse_constant)


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON (not ASCII-escaped)."""
    try:
        return orjson.dumps(value, default=str, option=_OPTIONS)
    except orjson.JSONEncodeError:
        text = json.dumps(finite(value), default=str, separators=(",", ":"), allow_nan=False)
        return text.encode()


def finite(value: Any) -> Any:
    """`value` with every NaN and infinite float, in lists and dicts too, as None (null):
    for the writers that go through `json`, whose `NaN` no JSON parser reads."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value
