"""Goals written from real conversations: what each user wanted (`question`, the hidden
goal the simulated user is given) and knew (`facts`, joined into `user_context`, the text
`simulate` reads), by `--goal-model` with a fixed prompt (`produce/prompts/realism_goal.txt`,
shown by `chatjudge prompt --realism goal`). The goal writer reads the real conversation;
the simulated user later reads only the goal row, never the conversation."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from chatjudge.calls.role import Role
from chatjudge.calls.session import Session, Stopped
from chatjudge.calls.unit import Unit, within
from chatjudge.chat.render import render_messages
from chatjudge.chat.types import Message
from chatjudge.errors import BudgetReached, FatalModelError, ModelError
from chatjudge.produce.replies import failure_cause
from chatjudge.user_realism.asks import ask, prompt_text, schema
from chatjudge.user_realism.real import RealConversation, shown

GOAL_SCHEMA = schema(
    "realism_goal",
    {"question": {"type": "string"}, "facts": {"type": "array", "items": {"type": "string"}}},
    '\n\nReply with one JSON object only: {"question": "...", "facts": ["..."]}',
)


def goal_template() -> Any:
    return prompt_text("chatjudge.produce", "realism_goal")


def goal_messages(real: RealConversation) -> list[Message]:
    """What the goal writer reads: the conversation as the user and assistant said it."""
    text = render_messages(shown(real.messages))
    return [{"role": "user", "content": goal_template().render({"conversation": text})}]


def read_goal(data: dict[str, Any]) -> tuple[str, tuple[str, ...]] | None:
    question, facts = data.get("question"), data.get("facts", [])
    if not isinstance(question, str) or not question.strip() or not isinstance(facts, list):
        return None
    return question.strip(), tuple(str(f).strip() for f in facts if str(f).strip())


def goal_row(real: RealConversation, question: str, facts: Sequence[str]) -> dict[str, Any]:
    """A row of `goals.jsonl`, as `simulate` reads it: the goal and what the user knows,
    nothing of the conversation; `answer` where the real row had one."""
    context = real.user_context
    if context is None and facts:
        context = "\n".join(f"- {f}" for f in facts)
    row: dict[str, Any] = {"id": real.id, "question": question, "facts": list(facts)}
    if context is not None:
        row["user_context"] = context
    if real.answer is not None:
        row["answer"] = real.answer
    return row


@dataclass
class Goals:
    """The goal step's outcome: the goal rows in input order, and the conversations whose
    goal could not be written (id, why)."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    stopped: BudgetReached | None = None  # the budget stopped the step


async def write_goals(session: Session, reals: Sequence[RealConversation]) -> Goals:
    """Every real conversation's goal: its row's own where it holds `question`, else the
    goal writer's, in the session's pool (the store first: a rerun sends nothing again)."""
    (seat,) = session.seats
    role = Role(session.caller(seat), session.ledger(seat),
                session.config.generation.settings(), GOAL_SCHEMA)  # fmt: skip
    found: dict[int, dict[str, Any] | str] = {}

    async def one(job: tuple[int, RealConversation]) -> None:
        n, real = job
        with within(Unit(order=n)):  # the budget serves earlier goals first
            try:
                goal, text = await ask(role, goal_messages(real), read_goal)
            except ModelError as exc:
                if exc.fatal:
                    raise
                found[n] = failure_cause(exc)[1]
            else:
                found[n] = (
                    goal_row(real, *goal) if goal else f"no goal in the reply: {text[:200]!r}"
                )
            session.progress.advance(failed=isinstance(found[n], str), tokens=0)

    todo = ((n, r) for n, r in enumerate(reals) if r.question is None)
    stopped = await session.run(todo, one)
    goals = Goals()
    for n, real in enumerate(reals):
        if real.question is not None:
            goals.rows.append(goal_row(real, real.question, real.facts or ()))
            continue
        made = found.get(n)
        if isinstance(made, dict):
            goals.rows.append(made)
        elif made is not None:
            goals.failed.append((real.id, made))
    goals.stopped = stopped_by_budget(stopped, len(goals.rows))
    return goals


def stopped_by_budget(stopped: Stopped, finished: int) -> BudgetReached | None:
    """What stopped a step's pool: the budget (returned), or a fatal fault (raised, as
    `generate` and `simulate` raise it)."""
    if stopped is None or isinstance(stopped, BudgetReached):
        return stopped
    raise FatalModelError(f"stopped: {stopped}", finished=finished) from stopped
