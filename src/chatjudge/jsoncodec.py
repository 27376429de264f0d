"""JSON on the judge loop's hot path: orjson first, the standard library where orjson says no.

Every judge call decodes an input row and a reply and encodes a request body, a
results record and a report entry. orjson does each many times faster than `json`,
with which these were a good share of the CPU chatjudge spent per call.

Reading accepts what `json` accepts: what orjson refuses (NaN and Infinity literals,
lone surrogate escapes) is read again by `json`. One difference is left: an integer
beyond 64 bits is read as a float, where `json` keeps every digit; `exact_ints=True` reads
a document that may hold one (a run of 19 digits) again by `json`, for the readers whose
values are compared (`tool-trajectory`'s arguments). A document too deep
for `json` (orjson stops at 1,024 levels) is a ValueError, never a RecursionError; the
lines and cells of input files (data rows, traces, labels) are read with
`max_depth=INPUT_DEPTH`, so that every value read from a user's file can be written back
by orjson inside a record.

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
import re
from collections.abc import Callable
from typing import Any

import orjson

# Keys that are not text (an int column name) take OPT_NON_STR_KEYS, which slows every
# write: a write tries without it first.
_OPTIONS = orjson.OPT_SERIALIZE_NUMPY
_ANY_KEYS = _OPTIONS | orjson.OPT_NON_STR_KEYS
# The deepest nesting read from input files: orjson writes up to 254 levels, which leaves
# room for the records (results, rows) that carry an input value a few levels down.
INPUT_DEPTH = 200
_COUNTED = 1 << 16  # shorter texts have their brackets counted before they are walked


def loads(
    data: str | bytes,
    *,
    parse_constant: Callable[[str], Any] | None = None,
    max_depth: int | None = None,
    exact_ints: bool = False,
) -> Any:
    """Parse one JSON document; `parse_constant` is used for NaN/Infinity, as in `json.loads`.
    A document nested more than `max_depth` levels (or too deep for `json`) is a ValueError.
    `exact_ints`: an integer beyond 64 bits keeps every digit, as `json` reads it."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        value = _by_json(data, parse_constant, max_depth)
    else:
        if exact_ints and _inexact(data, value):
            value = _by_json(data, parse_constant, max_depth)
    if max_depth is not None and _deeper(data, value, max_depth):
        raise ValueError(_too_deep(max_depth))
    return value


def _by_json(
    data: str | bytes, parse_constant: Callable[[str], Any] | None, max_depth: int | None
) -> Any:
    try:
        return json.loads(data, parse_constant=parse_constant)
    except RecursionError:
        raise ValueError(_too_deep(max_depth)) from None


# A run of 19 digits: a number orjson may have read as a float (an integer beyond 64 bits
# has 19 at least). A short text is searched for it; in a line, every digit becomes 0 and
# anything else a space, and 19 zeros are looked for: a regular expression tries a match
# at every byte of it, far slower.
_LONG_RUN = re.compile("[0-9]{19}")
_DIGITS = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))
_LONG = b"0" * 19


def _inexact(data: str | bytes, value: Any) -> bool:
    """Whether orjson may have read an integer beyond 64 bits of `data` as a float: never
    where `value` is an object whose values are plain and none a float (the usual tool
    call's arguments, told at once); else where the text holds a run of 19 digits."""
    if type(value) is dict and _MAY_HOLD.isdisjoint(map(type, value.values())):
        return False
    return _long_digits(data)


_MAY_HOLD = frozenset((float, dict, list))  # the values that may be or hold such a float


def _long_digits(data: str | bytes) -> bool:
    """Whether the text holds a run of 19 digits (in a string too: then `json` reads it
    again for nothing, which changes no value)."""
    if isinstance(data, str):
        if len(data) < 512:
            return _LONG_RUN.search(data) is not None
        data = data.encode("utf-8", "surrogatepass")
    return _LONG in data.translate(_DIGITS)


def _too_deep(limit: int | None) -> str:
    return f"nested more than {limit} levels deep" if limit else "nested too deeply to read"


def _deeper(data: str | bytes, value: Any, limit: int) -> bool:
    """Whether `value` nests more than `limit` lists and objects. A text with no more
    brackets than `limit` cannot: counting them settles a short text faster than a walk;
    a long one (a batch of OTLP spans, whose brackets are countless) is walked a level at
    a time straight away, in less time than orjson took to parse it."""
    if len(data) <= 2 * limit or not isinstance(value, dict | list):
        return False
    if len(data) < _COUNTED and _brackets(data) <= limit:
        return False
    level, depth = [value], 0
    while level:
        depth += 1
        if depth > limit:
            return True
        inner: list[Any] = []
        for container in level:
            items = container.values() if type(container) is dict else container
            inner += [item for item in items if type(item) is dict or type(item) is list]
        level = inner
    return False


def _brackets(data: str | bytes) -> int:
    if isinstance(data, bytes):
        return data.count(b"[") + data.count(b"{")
    return data.count("[") + data.count("{")


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON (not ASCII-escaped)."""
    try:
        return orjson.dumps(value, default=str, option=_OPTIONS)
    except orjson.JSONEncodeError:
        pass
    try:
        return orjson.dumps(value, default=str, option=_ANY_KEYS)
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
