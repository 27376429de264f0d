"""The real conversations `chatjudge realism` measures the simulated user against.

Two shapes are read: `chatjudge import`'s rows, which share a `conversation_id` (each
conversation is its last turn: its `history`, then `prompt` as the user's message, then the
production reply, `baseline_trajectory` where the turn called tools, else
`baseline_model_response`), and any rows with `chat` (a message list). Tool messages are
kept: the conversation is data; what the simulated user and the discriminator see of it
is decided where they are shown it (`user_side`). Rows that already hold a goal
(`question`, optional `facts`, `user_context`, `answer`) keep it, and the goal step skips
them. Every problem is told at once, by row and field, before anything is sent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from chatjudge.chat.messages import text_of
from chatjudge.chat.row_messages import read_conversation
from chatjudge.chat.types import Message
from chatjudge.data import Source
from chatjudge.errors import DataValidationError, Problem

_SHAPE = "a row needs chat (a message list), or import's conversation_id, prompt and "
_SHAPE += "baseline_model_response"


@dataclass(frozen=True, slots=True)
class RealConversation:
    """One real conversation and what its row already says of its goal."""

    id: str
    row: int  # the row it was read from (import: its last turn's), counted from 1
    messages: list[Message]  # tool calls and results kept
    question: str | None = None
    facts: tuple[str, ...] | None = None
    user_context: str | None = None
    answer: str | None = None

    @property
    def user_messages(self) -> tuple[str, ...]:
        """What the user said, message by message."""
        return tuple(text_of(m.get("content")) for m in self.messages if m["role"] == "user")


def shown(messages: Sequence[Message]) -> list[Message]:
    """A conversation as the goal writer and the discriminator read it, real or simulated
    alike: what the user and the assistant said, without system messages, tool calls and
    tool results (an assistant's text beside its calls is kept)."""
    return [
        {"role": m["role"], "content": text_of(m["content"])}
        for m in messages
        if m["role"] in ("user", "assistant") and text_of(m.get("content"))
    ]


def read_real(data: Any, column_map: Mapping[str, str] | None = None) -> list[RealConversation]:
    """The real conversations of `data` in input order (import's: in the order of their
    first row); raises `DataValidationError` listing every problem by row and field."""
    problems: list[Problem] = []
    chats: list[RealConversation] = []
    last_turns: dict[str, tuple[float, RealConversation]] = {}
    rows = 0
    for raw in Source(data, column_map):
        rows += 1
        if raw.data is None:
            problems.append(Problem(raw.number, "(row)", raw.error or "unreadable"))
            continue
        found = _read_row(raw.number, raw.data, problems)
        if found is None:
            continue
        conversation, turn = found
        if turn is None:
            chats.append(conversation)
            continue
        held = last_turns.get(conversation.id)
        if held is None or turn >= held[0]:
            last_turns[conversation.id] = (turn, conversation)
    if not problems and rows == 0:
        problems.append(Problem(1, "(row)", "no rows: nothing to measure"))
    if problems:
        raise DataValidationError(problems[:50], len(problems))
    return chats + [c for _, c in last_turns.values()]


def _read_row(
    number: int, row: dict[str, Any], problems: list[Problem]
) -> tuple[RealConversation, float | None] | None:
    """The row's conversation, and its turn for import's rows (None for `chat` rows)."""
    before = len(problems)
    goal = _goal(number, row, problems)
    if "chat" in row and row["chat"] is not None:
        messages = _messages(number, "chat", row["chat"], problems)
        turn: float | None = None
        ident = str(row.get("id", number))
    elif "prompt" in row and "conversation_id" in row:
        messages, turn = _import_turn(number, row, problems)
        ident = str(row["conversation_id"])
    else:
        problems.append(Problem(number, "chat", f"missing: {_SHAPE}"))
        return None
    if len(problems) == before and not any(m["role"] == "user" for m in messages):
        problems.append(Problem(number, "chat", "no user message: nothing the user said"))
    if len(problems) > before:
        return None
    return RealConversation(ident, number, messages, **goal), turn


def _import_turn(
    number: int, row: dict[str, Any], problems: list[Problem]
) -> tuple[list[Message], float]:
    history = _messages(number, "history", row.get("history") or [], problems)
    prompt = row["prompt"]
    if isinstance(prompt, list):
        said = _messages(number, "prompt", prompt, problems)
    elif isinstance(prompt, str) and prompt.strip():
        said = [{"role": "user", "content": prompt}]
    else:
        problems.append(Problem(number, "prompt", "expected the user's message as text"))
        said = []
    trajectory = row.get("baseline_trajectory")
    if trajectory:
        reply = _messages(number, "baseline_trajectory", trajectory, problems)
    elif isinstance(row.get("baseline_model_response"), str):
        reply = [{"role": "assistant", "content": row["baseline_model_response"]}]
    else:
        problems.append(Problem(number, "baseline_model_response", "expected the reply as text"))
        reply = []
    turn = row.get("turn", 0)
    if isinstance(turn, bool) or not isinstance(turn, int | float):
        problems.append(Problem(number, "turn", f"expected a number, got {turn!r}"))
        turn = 0
    return [*history, *said, *reply], float(turn)


def _messages(number: int, field: str, value: Any, problems: list[Problem]) -> list[Message]:
    if not isinstance(value, list):
        problems.append(Problem(number, field, f"expected a message list, got {_kind(value)}"))
        return []
    read = read_conversation(value)
    for problem in read.problems:
        problems.append(Problem(number, field, problem))
    return cast(list[Message], read.messages)  # read into OpenAI's chat messages


def _goal(number: int, row: dict[str, Any], problems: list[Problem]) -> dict[str, Any]:
    """The goal the row already holds: `question` (then `facts`, `user_context`, `answer`
    are read too), checked; none without `question`."""
    question = row.get("question")
    if question is None:
        return {}
    if not isinstance(question, str) or not question.strip():
        problems.append(Problem(number, "question", "expected the user's goal as text"))
        return {}
    goal: dict[str, Any] = {"question": question}
    facts = row.get("facts")
    if facts is not None:
        if not isinstance(facts, list) or not all(isinstance(f, str) for f in facts):
            problems.append(Problem(number, "facts", "expected a list of texts"))
        else:
            goal["facts"] = tuple(facts)
    for name in ("user_context", "answer"):
        value = row.get(name)
        if value is not None and not isinstance(value, str):
            problems.append(Problem(number, name, f"expected text, got {_kind(value)}"))
        elif value is not None:
            goal[name] = value
    return goal


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__
