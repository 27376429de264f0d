"""What a dataset column must hold: plain data that data loading and protocols share."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator


class FieldSpec(BaseModel):
    """One data field (for a protocol: one template placeholder)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    required: bool = True
    conversation: bool = False  # may be a list of chat messages, rendered as `**role**: content`
    # Present but empty is data: a model can answer nothing, and the judge should see it.
    empty_ok: bool = False
    description: str = ""
    # A response field: the column holding the messages that led to it (its tool calls,
    # their results, the final message), which the judge sees with `--judge-sees trajectory`.
    trajectory: str = ""
    # Whether its messages may call tools: `simulate` refuses a `chat_history` with tool
    # calls before anything is sent (`generate` offers a row's tools to the model).
    tool_calls: bool = True

    @model_validator(mode="before")
    @classmethod
    def _slot(cls, data: Any) -> Any:
        """The `trajectory` slot holds messages, whatever the declaration says."""
        if isinstance(data, dict) and data.get("name") == TRAJECTORY:
            return {**data, "conversation": True}
        return data


# Template slots that a protocol's field fills by a rule of its own rather than from the
# column of its name (`docs/formats.md`, "Template slots"):
# - `trajectory`: the assistant's messages (tool calls, results, final text) from the first
#   of TRAJECTORY_COLUMNS the row has (`--map COLUMN=trajectory` names another);
# - `tools`: the row's tool definitions (its `tools` column, else those its calls imply);
# - `expected_tool_calls`: the calls the assistant should make
#   (`chatjudge.chat.toolcalls.expected`).
TRAJECTORY, TOOLS, EXPECTED_TOOL_CALLS = "trajectory", "tools", "expected_tool_calls"
CHECKED_TOOLS = "checked_tools"  # the tools `expected_tool_calls` is about (else every one)
TRAJECTORY_COLUMNS = (TRAJECTORY, "response_trajectory", "chat")


def column_of(name: str, row: Mapping[str, Any]) -> str:
    """The column a field `name` reads in `row`: the trajectory slot's first present column,
    any other field's own."""
    if name == TRAJECTORY:  # a loop, not next(...): read for every row, twice
        for column in TRAJECTORY_COLUMNS:
            if row.get(column) is not None:
                return column
        return TRAJECTORY
    return name
