"""A row's tool calls: its conversations, its trajectories and its `tools` column read into
one shape, once for validation and once for its item, so that both see the same. Where
validation found that every row's message lists read as they are written (OpenAI's format,
as `import` and `generate` write them), the item's reading takes them as they are."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from chatjudge import jsoncodec
from chatjudge.chat.fields import TRAJECTORY, TRAJECTORY_COLUMNS, column_of
from chatjudge.chat.row_messages import Conversation, read_conversation
from chatjudge.chat.toolcalls.definitions import derived_tools, read_tools

TOOLS = "tools"  # the optional column of tool definitions
_TRAJECTORY_ROLES = ("assistant", "tool")
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
    one given (`reshaped`: a message list among them); `tools`, the row's definitions
    (given, or derived from its calls); the problems by column; and the counts its summary
    reports."""

    columns: dict[str, Any] = field(default_factory=dict)
    tools: list[dict[str, Any]] = field(default_factory=list)
    problems: dict[str, list[str]] = field(default_factory=dict)
    derived: bool = False
    unparsed_arguments: int = 0
    reshaped: bool = False


@dataclass(slots=True)
class TrajectoryTexts:
    """A row's trajectories given as JSON text: `read`, the lists they hold, by column;
    `problems`, why a column's text is not one."""

    read: dict[str, list[Any]] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)


def trajectory_texts(data: dict[str, Any], slot: bool) -> TrajectoryTexts | None:
    """The row's trajectory columns that hold JSON text (a JSONL string, a CSV cell that
    did not parse) read into the lists they hold, checked and judged as lists are; a text
    that starts as a list but does not parse is a problem, never a trajectory that made
    no call. `slot`: the trajectory slot's column (`chatjudge.chat.fields.TRAJECTORY`) is one.
    None: the row has none (the usual row)."""
    texts = None
    for name in _TEXT_COLUMNS:
        value = data.get(name)
        if type(value) is not str or not value.lstrip().startswith("["):
            continue
        if name not in TRAJECTORIES and not (slot and column_of(TRAJECTORY, data) == name):
            continue
        texts = texts or TrajectoryTexts()
        try:
            texts.read[name] = jsoncodec.loads(
                value, max_depth=jsoncodec.INPUT_DEPTH, exact_ints=True
            )
        except ValueError as exc:
            texts.problems[name] = f"is text that is not JSON (expected a list of messages): {exc}"
    return texts


_TEXT_COLUMNS = tuple(dict.fromkeys((*TRAJECTORIES, *TRAJECTORY_COLUMNS)))


def read_row_tools(
    data: dict[str, Any],
    conversations: Iterable[str],
    *,
    as_written: bool = False,
    define: bool = True,
) -> RowTools:
    """Read the row's `conversations` fields that hold message lists, its trajectory columns
    and its `tools`. A conversation that reads as it is written is not in `columns`.
    `as_written`: the row is valid and its message lists read as they are written (known
    from validation): they are taken as they are, only its `tools` are read (or derived
    from the calls they hold). `define=False`: definitions derived from the calls are
    not built, only counted (`derived`): validation needs no more."""
    read = RowTools()
    called: dict[str, None] = {}
    names = [name for name in conversations if type(data.get(name)) is list]
    names += [name for name in TRAJECTORIES if data.get(name) is not None]
    names = list(dict.fromkeys(names))  # once: a protocol's conversation may be the trajectory
    if not as_written:
        for name in names:
            _read(read, called, name, data)
    if data.get(TOOLS) is not None:
        read.tools, problems = read_tools(data[TOOLS])
        read.columns[TOOLS] = read.tools
        if problems:
            read.problems[TOOLS] = problems
        return read
    if as_written:
        called = _called(data, names)
    if called:
        read.tools, read.derived = (derived_tools(called) if define else []), True
    return read


def _called(data: dict[str, Any], names: list[str]) -> dict[str, None]:
    """The tools the message lists `names` call, in the order of their first call, as
    reading them finds them (they are in OpenAI's format, every call with its name)."""
    called: dict[str, None] = {}
    for name in names:
        for message in data[name]:
            for call in message.get("tool_calls") or ():
                called.setdefault(call["function"]["name"])
    return called


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
    if conversation.messages is not value and conversation.messages != value:
        read.columns[name] = conversation.messages
        read.reshaped = True


def _trajectory_problems(
    trajectory: Conversation, data: dict[str, Any], final_field: str
) -> list[str]:
    """A trajectory holds the assistant's messages and tool results only, and where it ends
    on the assistant's text, that text is the row's `final_field` (the text the judge
    compares)."""
    messages, final = trajectory.messages, data.get(final_field)
    origins = trajectory.origins or range(1, len(messages) + 1)
    problems: list[str] = []
    if not all(m["role"] in _TRAJECTORY_ROLES for m in messages):  # the usual case: all are
        problems = [
            f"message {number}: a trajectory holds the assistant's messages and tool results, "
            f"not {m['role']} messages"
            for m, number in zip(messages, origins, strict=True)
            if m["role"] not in _TRAJECTORY_ROLES
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
