"""One row of `run -p tool-trajectory` scored: its trajectory's calls against its expected
calls, by its match mode, into per-item scores, a rationale and the comparison the report
shows side by side.

Per item: `trajectory_match` (0/1); `tool_call_precision` (matched calls / calls made),
`tool_call_recall` (matched / expected) and `tool_call_f1` (2 matched / (made + expected)),
each null where its denominator is 0 (an item that made no call has no precision: it
counts in the macro means of the others only); and the counts `matched_calls`,
`actual_calls`, `expected_calls`, from which the summary's micro figures are summed, and
`calls_without_result`: calls made whose result the trajectory does not record (cut at a
cap, or a recording that kept only the calls), which count as calls made all the same.

Calls to tools that the row's `checked_tools` (else the run's) does not name count
nowhere: they are left out before pairing, and the rationale lists them apart; the calls
that count are numbered among themselves.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import orjson

from chatjudge import jsoncodec
from chatjudge.chat.fields import EXPECTED_TOOL_CALLS, TRAJECTORY, column_of
from chatjudge.chat.row_messages import read_conversation
from chatjudge.chat.toolcalls.expected import (
    MatchMode,
    checks,
    read_checked_tools,
    read_expected_calls,
    read_match,
)
from chatjudge.trajectories.compared_calls import read_calls
from chatjudge.trajectories.pairing import Pairing, pair_calls
from chatjudge.trajectories.steps import Call

SCORES = (
    "trajectory_match",
    "tool_call_precision",
    "tool_call_recall",
    "tool_call_f1",
    "matched_calls",
    "actual_calls",
    "expected_calls",
    "calls_without_result",
)


@dataclass(slots=True)  # not frozen: made per row, where frozen slows every __init__
class Scored:
    scores: dict[str, Any]
    rationale: dict[str, str]
    # What the report shows: `match` (the mode), `matched` (bool), `expected` and `actual`
    # calls ({"name", "arguments"}), `pairs` ([expected index, actual index]), `left_at`.
    comparison: dict[str, Any]
    # the trajectory's column read into OpenAI's format, where it was written otherwise:
    # the record keeps it so, as a judged run's does
    columns: dict[str, Any] = field(default_factory=dict)


def score_row(
    row: dict[str, Any],
    default_match: MatchMode,
    *,
    as_written: bool = False,
    checked_tools: tuple[str, ...] | None = None,
) -> Scored:
    """Score a validated row (`chatjudge.data.validate` found nothing wrong with it);
    `as_written`: validation found every row's message lists in OpenAI's shape as written
    (`Validation.read_as_written`), so the trajectory is not read into it again;
    `checked_tools`: the run's (`--checked-tools`), for a row without its own."""
    expected, _ = read_expected_calls(row.get(EXPECTED_TOOL_CALLS))
    mode, _ = read_match(row.get("match"), default_match)
    own = row.get("checked_tools")
    checked = checked_tools if own is None else read_checked_tools(own)[0]
    column = column_of(TRAJECTORY, row)
    given = row.get(column)
    messages = _messages(given)
    read = messages
    if messages and not (as_written and given is messages):
        read = read_conversation(messages, count_unparsed=False).messages
    calls = read_calls(read)
    ignored: list[Call] = []
    if checked is not None:
        ignored = calls.ignored(checks(checked))
        calls = calls.checked(checks(checked))
    pairing = pair_calls(expected, calls.calls, mode, calls.steps)
    matched, made, wanted = len(pairing.pairs), len(calls.calls), len(expected)
    scores = {
        "trajectory_match": int(pairing.match),
        "tool_call_precision": _ratio(matched, made),
        "tool_call_recall": _ratio(matched, wanted),
        "tool_call_f1": _ratio(2 * matched, made + wanted),
        "matched_calls": matched,
        "actual_calls": made,
        "expected_calls": wanted,
        "calls_without_result": len(calls.unanswered),
    }
    shown_expected = [e.to_dict() for e in expected]
    shown_actual = [{"name": name, "arguments": arguments} for name, arguments in calls.calls]
    comparison = {
        "match": mode,
        "matched": pairing.match,
        "expected": shown_expected,
        "actual": shown_actual,
        "pairs": [list(p) for p in pairing.pairs],
        "left_at": pairing.left_at,
    }
    text = rationale(mode, pairing, shown_expected, shown_actual)
    if calls.unanswered:
        unanswered = [f"call {j + 1} {_call(shown_actual[j])}" for j in calls.unanswered]
        text += "\nno result recorded: " + "; ".join(unanswered)
    if ignored:
        listed = "; ".join([_call({"name": name, "arguments": a}) for name, a in ignored])
        text += f"\nnot checked, ignored (checked: {', '.join(checked or ())}): {listed}"
    # the trajectory as read, where it was written otherwise (another format, JSON text)
    columns = {column: read} if read and read is not given else {}
    return Scored(scores, {"trajectory": text}, comparison, columns)


def actual_calls(messages: list[Any]) -> list[tuple[str, Any]]:
    """The trajectory's tool calls in order: name and arguments (parsed JSON, else the text
    as recorded). Messages in OpenAI's format are read as they are; others (Anthropic's
    content blocks, Gemini's parts) are read into it first (`read_conversation`)."""
    if not all(type(m) is dict and type(m.get("content")) is not list and "parts" not in m
               for m in messages):  # fmt: skip
        messages = read_conversation(messages).messages
    return read_calls(messages).calls


def rationale(
    mode: str, pairing: Pairing, expected: list[dict[str, Any]], actual: list[dict[str, Any]]
) -> str:
    """The item's rationale: the verdict, then the matched, missed and extra calls, and the
    step where the trajectory left the expected one."""
    pairs = pairing.pairs
    missed: list[dict[str, Any]] = []  # none where every expected call was made (the usual)
    if len(pairs) < len(expected):
        paired_expected = {i for i, _ in pairs}
        missed = [e for i, e in enumerate(expected) if i not in paired_expected]
    extra: list[tuple[int, dict[str, Any]]] = []
    if len(pairs) < len(actual):
        paired_actual = {j for _, j in pairs}
        extra = [(j, a) for j, a in enumerate(actual) if j not in paired_actual]
    verdict = "matches" if pairing.match else "does not match"
    lines = [
        f"match {mode}: the trajectory {verdict} ({len(pairs)} of {len(expected)} "
        f"expected call(s) made, {len(missed)} missed, {len(extra)} extra, "
        f"{len(actual)} call(s) in all)."
    ]
    if pairs:  # lists, not generators, joined: a join makes a list of a generator first
        matched = [f"{_call(expected[i])} at call {j + 1}" for i, j in pairs]
        lines.append("matched: " + "; ".join(matched))
    if missed:
        lines.append("missed: " + "; ".join([_call(e) for e in missed]))
    if extra:
        lines.append("extra: " + "; ".join([f"call {j + 1} {_call(a)}" for j, a in extra]))
    if pairing.left_at is not None:
        lines.append(_left(pairing.left_at, actual))
    return "\n".join(lines)


def _left(step: int, actual: list[dict[str, Any]]) -> str:
    if step <= len(actual):
        return f"left the expected trajectory at call {step}: {_call(actual[step - 1])}"
    if not actual:
        return "left the expected trajectory at call 1: it made no call"
    return f"left the expected trajectory at call {step}: it stopped after call {step - 1}"


def _call(call: dict[str, Any]) -> str:
    """`name(arguments)`, the arguments compact JSON with sorted keys (as recorded where
    they are not JSON). Arguments longer than `_SHOWN` characters are cut there, with
    their length: the record holds them whole in the row's trajectory and in
    `tool_calls.actual`, and a 5 MB argument would be written twice more here."""
    arguments = call["arguments"]
    if not isinstance(arguments, str):
        try:
            arguments = orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS).decode()
        except orjson.JSONEncodeError:  # an integer beyond 64 bits, which `json` writes
            arguments = json.dumps(
                arguments, ensure_ascii=False, sort_keys=True, separators=(",", ":")
            )
    if len(arguments) > _SHOWN:
        arguments = f"{arguments[:_SHOWN]}… ({len(arguments):,} characters)"
    return f"{call['name']}({arguments})"


_SHOWN = 200


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _messages(value: Any) -> list[Any]:
    """A trajectory cell's messages: a list, or its JSON text (CSV and Parquet cells)."""
    if isinstance(value, str) and value.lstrip().startswith("["):
        try:
            value = jsoncodec.loads(value, max_depth=jsoncodec.INPUT_DEPTH, exact_ints=True)
        except ValueError:  # refused by validation (`chatjudge.data.tool_rows`)
            return []
    return value if isinstance(value, list) else []
