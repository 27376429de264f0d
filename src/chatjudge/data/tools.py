"""A row's tool calls: its conversations, its trajectories and its `tools` column read into
one shape, once for validation and once for its item, so that both see the same."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from chatjudge.row_messages import Conversation, read_conversation
from chatjudge.tool_definitions import derived_tools, read_tools

TOOLS = "tools"  # the optional column of tool definitions
# Optional columns holding what the assistant did in the judged turn (its tool calls, their
# results, its final message), and the field holding that final message's text: the
# baseline's (imported, or generated) and the candidate's (generated).
TRAJECTORIES = {
    "baseline_trajectory": "baseline_model_response",
    "response_trajectory": "response",
}


@dataclass(slots=True)
class RowTools:
    """What a row's tool calls read into: `columns`, those read into another shape than the
    one given; `tools`, the row's definitions (given, or derived from its calls); the
    problems by column; and the counts its summary reports."""

    columns: dict[str, Any] = field(default_factory=dict)
    tools: list[dict[str, Any]] = field(default_factory=list)
    problems: dict[str, list[str]] = field(default_factory=dict)
    derived: bool = False
    unparsed_arguments: int = 0


def read_row_tools(data: dict[str, Any], conversations: Iterable[str]) -> RowTools:
    """Read the row's `conversations` fields that hold message lists, its trajectory columns
    and its `tools`. A plain conversation reads as it is written and is not in `columns`."""
    read = RowTools()
    called: dict[str, None] = {}
    done = set()
    for name in conversations:
        if type(data.get(name)) is list and name not in done:
            _read(read, called, name, data)
            done.add(name)
    for name in TRAJECTORIES:  # once: a protocol's conversation may be the trajectory
        if data.get(name) is not None and name not in done:
            _read(read, called, name, data)
    if data.get(TOOLS) is not None:
        read.tools, problems = read_tools(data[TOOLS])
        read.columns[TOOLS] = read.tools
        if problems:
            read.problems[TOOLS] = problems
    elif called:
        read.tools, read.derived = derived_tools(called), True
    return read


def _read(read: RowTools, called: dict[str, None], name: str, data: dict[str, Any]) -> None:
    value = data[name]
    if not isinstance(value, list):
        read.problems[name] = [f"expected a list of messages, got {type(value).__name__}"]
        return
    conversation = read_conversation(value)
    problems = conversation.problems
    if name in TRAJECTORIES and not problems:
        problems = _trajectory_problems(conversation, data, TRAJECTORIES[name])
    if problems:
        read.problems[name] = problems
    called.update(dict.fromkeys(conversation.called))
    read.unparsed_arguments += conversation.unparsed_arguments
    if conversation.messages is not value:
        read.columns[name] = conversation.messages


def _trajectory_problems(
    trajectory: Conversation, data: dict[str, Any], final_field: str
) -> list[str]:
    """A trajectory holds the assistant's messages and tool results only, and where it ends
    on the assistant's text, that text is the row's `final_field` (the text the judge
    compares)."""
    messages, final = trajectory.messages, data.get(final_field)
    origins = trajectory.origins or range(1, len(messages) + 1)
    problems = [
        f"message {number}: a trajectory holds the assistant's messages and tool results, "
        f"not {m['role']} messages"
        for m, number in zip(messages, origins, strict=True)
        if m["role"] not in ("assistant", "tool")
    ]
    last = messages[-1] if messages else None
    if (
        not problems
        and last is not None
        and last["role"] == "assistant"
        and not last.get("tool_calls")
        and isinstance(final, str)
        and last["content"] != final
    ):
        problems.append(
            f"message {origins[-1]}: the trajectory's final text is not its {final_field}"
        )
    return problems
