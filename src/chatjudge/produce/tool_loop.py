"""One turn of a model under test that may call tools: call the model, answer its calls,
call it again with the answers, until it answers in text or has been called
`--max-tool-steps` times (a step: one model call).

Every step is a call of its own through the role (`Role.call`): in the store, keyed by the
messages so far, so a re-run sends nothing and a killed run resumes from the last step the
store holds (the answers are worked out again: replay gives the same ones; the user's
functions are called again). What the model wrote before a call (its text, without the
reasoning some models write first) goes back to it with the calls, as OpenAI's assistant
message with `tool_calls`, then one `tool` message per call, in the order of the calls.
Servers write ids as they please (the same one every step, none, one for two parallel
calls): a call whose id is missing, empty or an earlier call's of the conversation gets
`call_<n>` (`chatjudge.chat.toolcalls.call_ids`) before it is stored in the row or sent
back, the same on every run, so that the ids pair and a resumed run asks what it asked
before.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Literal

from chatjudge.calls import Usage
from chatjudge.calls.role import Role
from chatjudge.calls.unit import current
from chatjudge.chat.toolcalls.call_ids import CallIds
from chatjudge.chat.types import Message, ToolUse
from chatjudge.produce.replies import visible
from chatjudge.produce.tool_answers import Answers

Ended = Literal["final", "max_tool_steps"]


@dataclass
class ToolTurn:
    """What one turn left: the final text (at the cap: the text of the last step, "" where
    it wrote none), every message of the turn (the assistant's calls, the tools' results and
    its final message; cut at the cap, it ends on calls without results), why it ended, and
    its counts."""

    text: str = ""
    trajectory: list[Message] = field(default_factory=list)
    ended: Ended = "final"
    steps: int = 0
    unmatched: int = 0
    errors: int = 0
    usage: Usage = field(default_factory=Usage)


async def tool_turn(
    role: Role,
    messages: list[Message],
    *,
    tools: list[dict[str, Any]],
    answers: Answers,
    max_steps: int,
    usage: Usage | None = None,
) -> ToolTurn:
    """The model's turn after `messages`, offered `tools`, its calls answered by `answers`;
    raises `ModelError` as `Role.call` does. `usage`: where its steps are counted (a
    conversation's, which keeps those of a turn that fails). Before each step the unit of
    work learns how many more the turn may take (a dry run counts them, `unit.Unit`)."""
    turn = ToolTurn(usage=usage if usage is not None else Usage())
    ids = CallIds()
    ids.read(messages)
    unit = current()
    for step in range(1, max_steps + 1):
        unit.steps_left = max_steps - step
        reply = await role.call([*messages, *turn.trajectory], tools=tools)
        turn.steps = step
        turn.usage.add(reply)
        turn.text = visible(reply.text)
        if not reply.tool_calls:
            turn.trajectory.append({"role": "assistant", "content": turn.text})
            return turn
        calls = _paired(ids, reply.tool_calls)
        turn.trajectory.append(
            {
                "role": "assistant",
                "content": turn.text,
                "tool_calls": [c.as_openai() for c in calls],
            }  # fmt: skip
        )
        if step == max_steps:
            break
        if len(calls) == 1:  # the usual case: no task to gather on every step
            found = [await answers.answer(calls[0])]
        else:
            found = await asyncio.gather(*(answers.answer(call) for call in calls))
        for call, answer in zip(calls, found, strict=True):
            turn.trajectory.append(
                {"role": "tool", "tool_call_id": call.id, "content": answer.text}
            )
            turn.unmatched += answer.miss == "unmatched"
            turn.errors += answer.miss == "error"
    turn.ended = "max_tool_steps"
    return turn


def _paired(ids: CallIds, calls: tuple[ToolUse, ...]) -> tuple[ToolUse, ...]:
    """The reply's calls with the ids they are written with (module doc)."""
    written = [ids.call(c.id, c.name).written for c in calls]
    if all(w == c.id for w, c in zip(written, calls, strict=True)):  # the usual case
        return calls
    return tuple(ToolUse(w, c.name, c.arguments) for w, c in zip(written, calls, strict=True))
