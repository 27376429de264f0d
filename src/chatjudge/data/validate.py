"""Row validation against the fields a command needs: every problem, with row and field."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from chatjudge.errors import Problem
from chatjudge.fields import FieldSpec
from chatjudge.messages import read_conversation
from chatjudge.tool_definitions import read_tools

TOOLS = "tools"  # the optional column of tool definitions


@dataclass(slots=True)
class RowCheck:
    """What checking one row found: its problems (none when it is valid), and what its
    summary counts."""

    problems: list[Problem]
    derived_tools: bool = False  # its conversations call tools and it has no `tools`
    unparsed_arguments: int = 0  # tool calls whose arguments are not JSON


def check_row(number: int, data: dict[str, Any], fields: Sequence[FieldSpec]) -> RowCheck:
    """Check one decoded row against `fields`, and its `tools` column where it has one."""
    problems: list[Problem] = []
    called = False
    unparsed = 0
    for spec in fields:
        value = data.get(spec.name)
        if value is None:
            if spec.required:  # one wording per case, whatever the file format
                why = "required field is empty" if spec.name in data else "missing required field"
                problems.append(Problem(number, spec.name, why))
            continue
        if spec.required and not spec.empty_ok and _is_empty(value):
            problems.append(Problem(number, spec.name, "required field is empty"))
            continue
        if isinstance(value, list):
            if not spec.conversation:
                problems.append(Problem(number, spec.name, "expected a string, got a list"))
            else:
                conversation = read_conversation(value)
                problems.extend(Problem(number, spec.name, m) for m in conversation.problems)
                called = called or bool(conversation.called)
                unparsed += conversation.unparsed_arguments
        elif not _scalar_ok(value, spec.conversation):
            expected = "a string or a list of messages" if spec.conversation else "a string"
            problems.append(
                Problem(number, spec.name, f"expected {expected}, got {type(value).__name__}")
            )
    if data.get("status") == "failed":  # written by `generate` or `simulate`: it did not finish
        why = data.get("error") or "no cause recorded"
        problems.append(Problem(number, "status", f"this row failed when it was produced: {why}"))
    item_id = data.get("id")
    if item_id is not None and (isinstance(item_id, bool) or not isinstance(item_id, str | int)):
        problems.append(Problem(number, "id", f"expected a string or integer, got {item_id!r}"))
    if data.get(TOOLS) is not None:
        problems.extend(Problem(number, TOOLS, m) for m in read_tools(data[TOOLS])[1])
    return RowCheck(problems, called and data.get(TOOLS) is None, unparsed)


def _is_empty(value: Any) -> bool:
    return (isinstance(value, str) and not value.strip()) or (isinstance(value, list) and not value)


def _scalar_ok(value: Any, conversation: bool) -> bool:
    """A conversation is text or messages; other fields also take a number (an answer of 60)."""
    if isinstance(value, str):
        return True
    return not conversation and isinstance(value, int | float) and not isinstance(value, bool)
