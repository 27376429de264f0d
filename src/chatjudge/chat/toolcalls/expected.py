"""A row's `expected_tool_calls` and `match`: the calls an assistant should make, how each
argument is compared, and how the whole trajectory is matched (`run -p tool-trajectory`).

An expected call is `{"name", "arguments"?, "compare"?, "extra_arguments"?}`:
- `arguments`: the expected arguments, an object (or its JSON text); left out, none.
- `compare`: per argument, its comparator: `"exact"` (the default: equal as JSON values,
  key order and spacing aside, 1 equal to 1.0, true never equal to 1), `"subset"` (an
  object: only the expected keys, recursively; a list: the same length, item by item),
  `"ignore"` (any value, or none), `{"tolerance": X}` (numbers within X) or
  `{"regex": "..."}` (a full match on the text: a string as it is, anything else as its
  JSON). An argument that only `compare` names (a regex, ignore) needs no expected value.
- `extra_arguments`: whether the call may have arguments the expected call does not name
  (default false). `{"name": "f", "extra_arguments": true}` compares the name alone.

`match`: `exact`, `in-order`, `any-order`, `superset` or `subset`, as LangChain's agentevals
names them (`chatjudge.trajectories` says what each requires).

`checked_tools` (the row's, else `--checked-tools`): the tools the check is about, names or
glob patterns (`fnmatch.fnmatchcase`); calls to any other tool count nowhere, and an expected
call to one is a problem of the row.

Everything wrong with them is found here, each problem a sentence naming the call, so a bad
row stops a run before anything is done.
"""

from __future__ import annotations

import fnmatch
import functools
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, get_args

from chatjudge import jsoncodec
from chatjudge.chat.types import DEFAULT_MATCH, MatchMode

MATCH_MODES: tuple[str, ...] = get_args(MatchMode)
_KEYS = ("name", "arguments", "compare", "extra_arguments")
_KEYS_SET = frozenset(_KEYS)
_NAMED = ("exact", "subset", "ignore")
_MISSING = object()  # an argument the actual call does not have


@dataclass(slots=True)  # not frozen: made per row, where frozen slows every __init__
class Comparator:
    """How one expected argument is compared: `kind` is exact, subset, ignore, tolerance or
    regex; `tolerance` and `pattern` hold their parameter."""

    kind: str = "exact"
    tolerance: float = 0.0
    pattern: re.Pattern[str] | None = None

    def accepts(self, expected: Any, actual: Any) -> bool:
        """Whether `actual` (`_MISSING` when the call lacks the argument) is accepted."""
        if self.kind == "ignore":
            return True
        if actual is _MISSING:
            return False
        if self.kind == "exact":
            return json_equal(expected, actual)
        if self.kind == "subset":
            return json_subset(expected, actual)
        if self.kind == "tolerance":
            return _number(actual) and _within(actual, expected, self.tolerance)
        assert self.pattern is not None
        text = actual if isinstance(actual, str) else json.dumps(actual, sort_keys=True)
        return self.pattern.fullmatch(text) is not None

    def describe(self) -> Any:
        """The comparator as the row wrote it (for records and rationales)."""
        if self.kind == "tolerance":
            return {"tolerance": self.tolerance}
        if self.kind == "regex":
            assert self.pattern is not None
            return {"regex": self.pattern.pattern}
        return self.kind


@dataclass(slots=True)  # not frozen: made per row, where frozen slows every __init__
class ExpectedCall:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    compare: dict[str, Comparator] = field(default_factory=dict)
    extra_arguments: bool = False

    def accepts(self, name: str, arguments: Any) -> bool:
        """Whether a call of `name` with `arguments` (parsed JSON, or the text as recorded
        where it is not JSON) is this expected call."""
        if name != self.name:
            return False
        if arguments is None or arguments == "":
            arguments = {}
        if not isinstance(arguments, dict):
            return not self.arguments and not self.compare and self.extra_arguments
        if not self.compare and not self.extra_arguments:  # the usual case: all exact
            # Python's == is looser than JSON's (True == 1) but never stricter: a cheap no.
            return arguments == self.arguments and json_equal(self.arguments, arguments)
        if not self.extra_arguments and any(
            k not in self.arguments and k not in self.compare for k in arguments
        ):
            return False
        exact = Comparator()
        for key in self.arguments.keys() | self.compare.keys():
            comparator = self.compare.get(key, exact)
            if not comparator.accepts(self.arguments.get(key), arguments.get(key, _MISSING)):
                return False
        return True

    def to_dict(self) -> dict[str, Any]:
        """The call as records and the report show it."""
        out: dict[str, Any] = {"name": self.name, "arguments": self.arguments}
        if self.compare:
            out["compare"] = {k: c.describe() for k, c in self.compare.items()}
        if self.extra_arguments:
            out["extra_arguments"] = True
        return out


def json_equal(a: Any, b: Any) -> bool:
    """Equal as JSON values: objects by key (order aside), lists item by item, numbers by
    value (1 equals 1.0), and true / false only equal to themselves."""
    if type(a) is str:  # the usual argument, first
        return type(b) is str and a == b
    if type(a) in _PLAIN_NUMBERS and type(b) in _PLAIN_NUMBERS:  # the next usual: no bool
        return a == b
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, dict):
        if not isinstance(b, dict) or a.keys() != b.keys():
            return False
        for k, v in a.items():  # a loop, not all(...): the usual arguments are a few texts
            w = b[k]
            if type(v) is str and type(w) is str:
                if v != w:
                    return False
            elif not json_equal(v, w):
                return False
        return True
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(json_equal, a, b))
    if _number(a):
        return _number(b) and a == b
    return type(a) is type(b) and a == b


def json_subset(expected: Any, actual: Any) -> bool:
    """`actual` holds `expected`: every key of an expected object (recursively), a list item
    by item, any other value equal (`json_equal`)."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            k in actual and json_subset(v, actual[k]) for k, v in expected.items()
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(expected) == len(actual)
            and all(map(json_subset, expected, actual))
        )
    return json_equal(expected, actual)


_NUMBERS = (int, float)  # a tuple: `int | float` is built again at every call
_PLAIN_NUMBERS = frozenset(_NUMBERS)  # the types themselves, not subclasses (bool is one)


def _within(actual: float, expected: float, tolerance: float) -> bool:
    """|actual - expected| <= tolerance, exactly where an integer is beyond a float's range
    (which the difference with a float cannot be turned into)."""
    try:
        return abs(actual - expected) <= tolerance
    except OverflowError:
        try:
            return abs(Fraction(actual) - Fraction(expected)) <= tolerance
        except (OverflowError, ValueError):  # an infinity or NaN: never within
            return False


def _tolerance(parameter: float) -> float:
    """A tolerance as a float, or the integer it was where no float holds it."""
    try:
        return float(parameter)
    except OverflowError:
        return parameter


def _number(value: Any) -> bool:
    return isinstance(value, _NUMBERS) and not isinstance(value, bool)


def read_expected_calls(
    value: Any, checked: tuple[str, ...] | None = None
) -> tuple[list[ExpectedCall], list[str]]:
    """A row's `expected_tool_calls` (a list, or its JSON text) read, and its problems, each
    naming the call (1-based) and its key; `checked`: the row's checked tools, to which
    every expected call must be (None: every tool is checked)."""
    if isinstance(value, str):
        try:
            value = jsoncodec.loads(value, max_depth=jsoncodec.INPUT_DEPTH, exact_ints=True)
        except ValueError:
            return [], ["is text that is not JSON (expected a list of calls)"]
    if not isinstance(value, list):
        return [], [f"expected a list of calls, got {type(value).__name__}"]
    calls: list[ExpectedCall] = []
    problems: list[str] = []
    for number, entry in enumerate(value, 1):
        call, found = _read_call(entry)
        if found:
            problems.extend(f"call {number}: {p}" for p in found)
        if call is not None:
            calls.append(call)
            if checked is not None and not checks(checked)(call.name):
                problems.append(
                    f"call {number}: {call.name!r} is not a checked tool "
                    f"({', '.join(checked)}): an expected call must be to one"
                )
    return calls, problems


def read_checked_tools(value: Any) -> tuple[tuple[str, ...] | None, str | None]:
    """A row's `checked_tools` (or `--checked-tools`): a list of names or glob patterns, or
    their text, separated by commas (a JSON list's text too); null or absent: None, every
    tool checked. And why it is none of these."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None, None
    if isinstance(value, str):
        if value.lstrip().startswith("["):
            try:
                value = jsoncodec.loads(value, max_depth=jsoncodec.INPUT_DEPTH)
            except ValueError:
                return None, "is text that is not JSON (expected a list of tool names)"
        else:
            value = [p.strip() for p in value.split(",") if p.strip()]
    if not isinstance(value, list | tuple):
        return None, f"expected a list of tool names or patterns, got {type(value).__name__}"
    bad = [p for p in value if not isinstance(p, str) or not p.strip()]
    if bad:
        return None, f"a tool name or pattern must be a non-empty string, got {bad[0]!r}"
    if not value:
        return None, "names no tool (leave it out to check every tool)"
    return tuple(p.strip() for p in value), None


@functools.lru_cache(maxsize=256)
def checks(patterns: tuple[str, ...]) -> Callable[[str], bool]:
    """Whether a tool is checked by `patterns` (`fnmatch.fnmatchcase`, any of them): one
    regular expression for them all, made once per set of patterns."""
    match = re.compile("|".join(fnmatch.translate(p) for p in patterns)).match
    return lambda name: match(name) is not None


def read_match(value: Any, default: MatchMode = DEFAULT_MATCH) -> tuple[MatchMode, str | None]:
    """A row's `match` (null or absent: `default`), and why it is not a mode."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return default, None
    if value in MATCH_MODES:
        return value, None
    return default, f"unknown match mode {value!r} (use {', '.join(MATCH_MODES)})"


def _read_call(entry: Any) -> tuple[ExpectedCall | None, list[str]]:
    if type(entry) is dict and _KEYS_SET.issuperset(entry):  # the usual call, read at once
        name, arguments = entry.get("name"), entry.get("arguments")
        plain = "compare" not in entry and entry.get("extra_arguments", False) is False
        if plain and type(name) is str and name and (arguments is None or type(arguments) is dict):
            return ExpectedCall(name, arguments or {}), []
    if not isinstance(entry, dict):
        return None, [f'expected an object {{"name", "arguments"}}, got {type(entry).__name__}']
    problems = [f"unknown key {k!r} (allowed: {', '.join(_KEYS)})" for k in entry if k not in _KEYS]
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        problems.append(f"name must be a non-empty string, got {name!r}")
    arguments = entry.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = jsoncodec.loads(arguments, max_depth=jsoncodec.INPUT_DEPTH, exact_ints=True)
        except ValueError:
            problems.append("arguments is text that is not JSON (expected an object)")
    if arguments is None:
        arguments = {}
    elif not isinstance(arguments, dict):
        problems.append(f"arguments must be an object, got {type(arguments).__name__}")
        arguments = {}
    compare, found = _read_compare(entry.get("compare"), arguments)
    problems.extend(found)
    extra = entry.get("extra_arguments", False)
    if not isinstance(extra, bool):
        problems.append(f"extra_arguments must be true or false, got {extra!r}")
    if problems or not isinstance(name, str):
        return None, problems
    return ExpectedCall(name, arguments, compare, extra), []


def _read_compare(
    value: Any, arguments: Mapping[str, Any]
) -> tuple[dict[str, Comparator], list[str]]:
    if value is None:
        return {}, []
    if not isinstance(value, dict):
        return {}, [
            f"compare must be an object of argument -> comparator, got {type(value).__name__}"
        ]
    compare: dict[str, Comparator] = {}
    problems: list[str] = []
    for key, spec in value.items():
        comparator, problem = _comparator(spec)
        if problem is None and comparator.kind not in ("ignore", "regex") and key not in arguments:
            problem = f"compares {key!r} with {spec!r}, but arguments holds no value for it"
        elif comparator.kind == "tolerance" and not _number(arguments[key]):
            problem = f"a tolerance compares numbers, but the expected value is {arguments[key]!r}"
        if problem is not None:
            problems.append(f"compare[{key!r}]: {problem}")
        else:
            compare[key] = comparator
    return compare, problems


def _comparator(spec: Any) -> tuple[Comparator, str | None]:
    usage = 'use "exact", "subset", "ignore", {"tolerance": X} or {"regex": "..."}'
    if isinstance(spec, str):
        if spec in _NAMED:
            return _BY_NAME[spec], None
        return Comparator(), f"unknown comparator {spec!r} ({usage})"
    if isinstance(spec, dict) and len(spec) == 1:
        [(kind, parameter)] = spec.items()
        if kind == "tolerance":
            if not _number(parameter) or not parameter >= 0:
                return Comparator(), f"tolerance must be a number >= 0, got {parameter!r}"
            return Comparator("tolerance", tolerance=_tolerance(parameter)), None
        if kind == "regex":
            if not isinstance(parameter, str):
                return Comparator(), f"regex must be a string, got {parameter!r}"
            try:
                return Comparator("regex", pattern=re.compile(parameter)), None
            except re.error as exc:
                return Comparator(), f"regex {parameter!r} does not compile: {exc}"
    return Comparator(), f"unknown comparator {spec!r} ({usage})"


_BY_NAME = {name: Comparator(name) for name in _NAMED}  # shared: a comparator is never changed


def render_expected_calls(value: Any) -> str:
    """Expected calls as a judge's prompt shows them: one `name(arguments)` line each, the
    arguments canonical JSON, a comparator other than exact after them."""
    calls, _ = read_expected_calls(value)
    lines = []
    for call in calls:
        text = f"{call.name}({json.dumps(call.arguments, ensure_ascii=False, sort_keys=True)})"
        if call.compare:
            text += f" compared {json.dumps(call.to_dict()['compare'], sort_keys=True)}"
        lines.append(text)
    return "\n".join(lines)
