"""What a dataset column must hold: plain data that data loading and protocols share."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


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
