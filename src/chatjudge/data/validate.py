"""Row validation against the fields a command needs: every problem, with row and field."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from chatjudge.chat.fields import (
    CHECKED_TOOLS,
    EXPECTED_TOOL_CALLS,
    TOOLS,
    TRAJECTORY,
    TRAJECTORY_COLUMNS,
    FieldSpec,
    column_of,
)
from chatjudge.data.tool_rows import read_row_tools, trajectory_texts
from chatjudge.errors import Problem


@dataclass(slots=True)
class RowCheck:
    """What checking one row found: its problems (none when it is valid), and what its
    summary counts."""

    problems: list[Problem]
    derived_tools: bool = False  # its messages call tools and it has no `tools`
    unparsed_arguments: int = 0  # tool calls whose arguments are not JSON
    has_tools: bool = False  # it has tool definitions, given or derived (`generate` offers them)
    reshaped: bool = False  # a message list of it reads into another shape than written


def check_row(
    number: int,
    data: dict[str, Any],
    fields: Sequence[FieldSpec],
    checked_tools: tuple[str, ...] | None = None,
    *,
    slot: bool | None = None,
) -> RowCheck:
    """Check one decoded row against `fields`, and its tool calls, trajectories and `tools`
    (`chatjudge.data.tool_rows`) where it has them; `checked_tools`: the run's
    (`--checked-tools`), to which a row without its own expects calls; `slot`: whether
    `fields` has the trajectory slot (None: found here; `validate` finds it once)."""
    problems: list[Problem] = []
    if slot is None:
        slot = has_slot(fields)
    texts = trajectory_texts(data, slot)
    if texts is not None:  # JSON text: checked as the list it holds
        data = {**data, **texts.read}
    conversations = (column_of(f.name, data) for f in fields if f.conversation)
    tools = read_row_tools(data, conversations, define=False)
    if texts is not None:
        tools.problems.update((name, [why]) for name, why in texts.problems.items())
    for spec in fields:
        if spec.name == TOOLS:  # read with the row's tool calls, or derived from them
            continue
        name = column_of(spec.name, data)
        value = data.get(name)
        if value is None:
            if spec.name == TRAJECTORY and spec.required:
                problems.append(Problem(number, spec.name, NO_TRAJECTORY))
            elif spec.required:  # one wording per case, whatever the file format
                why = "required field is empty" if name in data else "missing required field"
                problems.append(Problem(number, name, why))
            continue
        if spec.name == EXPECTED_TOOL_CALLS:
            problems.extend(_expected_problems(number, value, data, checked_tools))
            continue
        if spec.name == CHECKED_TOOLS:
            read_checked_tools = _expected_readers()[2]
            problem = read_checked_tools(value)[1]
            if problem is not None:
                problems.append(Problem(number, name, problem))
            continue
        if spec.required and not spec.empty_ok and _is_empty(value):
            problems.append(Problem(number, name, "required field is empty"))
            continue
        if isinstance(value, list):
            if not spec.conversation:
                problems.append(Problem(number, name, "expected a string, got a list"))
            else:
                found = tools.problems.pop(name, [])
                problems.extend(Problem(number, name, m) for m in found)
                if not spec.tool_calls and _calls_tools(tools.columns.get(name, value)):
                    problems.append(Problem(number, name, NO_TOOLS))
        elif not _scalar_ok(value, spec.conversation):
            expected = "a string or a list of messages" if spec.conversation else "a string"
            problems.append(
                Problem(number, name, f"expected {expected}, got {type(value).__name__}")
            )
    if data.get("status") == "failed":  # written by `generate` or `simulate`: it did not finish
        why = data.get("error") or "no cause recorded"
        problems.append(Problem(number, "status", f"this row failed when it was produced: {why}"))
    item_id = data.get("id")
    if item_id is not None and (isinstance(item_id, bool) or not isinstance(item_id, str | int)):
        problems.append(Problem(number, "id", f"expected a string or integer, got {item_id!r}"))
    for name, found in tools.problems.items():  # the trajectories' and `tools`'
        problems.extend(Problem(number, name, m) for m in found)
    has_tools = bool(tools.tools) or tools.derived
    reshaped = tools.reshaped or texts is not None
    return RowCheck(problems, tools.derived, tools.unparsed_arguments, has_tools, reshaped)


def has_slot(fields: Sequence[FieldSpec]) -> bool:
    """Whether `fields` has the trajectory slot (`chatjudge.chat.fields.TRAJECTORY`)."""
    return any(f.name == TRAJECTORY for f in fields)


NO_TRAJECTORY = (
    "missing: the trajectory is read from the first of the columns "
    + ", ".join(TRAJECTORY_COLUMNS)
    + " the row has (--map COLUMN=trajectory names another)"
)
NO_TOOLS = (
    "holds tool calls or tool results, which this command does not take here (simulate's "
    "earlier conversation is shown to its simulated user as what was said): remove them, "
    "or judge the recorded conversation with `chatjudge run`"
)


def _expected_problems(
    number: int, value: Any, data: dict[str, Any], checked_tools: tuple[str, ...] | None
) -> list[Problem]:
    """An `expected_tool_calls` cell's problems (a call to a tool not checked among them),
    and its row's `match`."""
    read_expected_calls, read_match, read_checked_tools = _expected_readers()
    own = data.get(CHECKED_TOOLS)
    checked = checked_tools if own is None else read_checked_tools(own)[0]
    problems = read_expected_calls(value, checked)[1]
    found = [Problem(number, EXPECTED_TOOL_CALLS, p) for p in problems]
    problem = read_match(data.get("match"))[1]
    if problem is not None:
        found.append(Problem(number, "match", problem))
    return found


@functools.cache
def _expected_readers() -> tuple[
    Callable[[Any, tuple[str, ...] | None], tuple[list[Any], list[str]]],
    Callable[[Any], tuple[Any, str | None]],
    Callable[[Any], tuple[Any, str | None]],
]:
    """tool-trajectory's readers, loaded with the first row that has expected calls (a
    judged run never loads them), once: not an import statement run on every row."""
    from chatjudge.chat.toolcalls.expected import (
        read_checked_tools,
        read_expected_calls,
        read_match,
    )

    return read_expected_calls, read_match, read_checked_tools


def _calls_tools(messages: list[Any]) -> bool:
    """Whether a (read) message list holds a tool call or a tool result."""
    return any(
        isinstance(m, dict) and (m.get("role") == "tool" or bool(m.get("tool_calls")))
        for m in messages
    )


def _is_empty(value: Any) -> bool:
    return (isinstance(value, str) and not value.strip()) or (isinstance(value, list) and not value)


def _scalar_ok(value: Any, conversation: bool) -> bool:
    """A conversation is text or messages; other fields also take a number (an answer of 60)."""
    if isinstance(value, str):
        return True
    return not conversation and isinstance(value, int | float) and not isinstance(value, bool)
