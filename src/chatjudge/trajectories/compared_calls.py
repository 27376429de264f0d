"""A trajectory's calls as `tool-trajectory` compares them: each call's name and arguments,
the step (assistant message) that made it, whether its result was recorded, and which of
them a check is about (`checked_tools`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from chatjudge import jsoncodec
from chatjudge.trajectories.steps import Call


@dataclass(slots=True)  # not frozen: made per row, where a frozen one's checks cost
class Calls:
    """A trajectory's calls in order (arguments parsed where JSON, else the text as
    recorded); `steps`: the step of each, where one step made several (None: one call a
    step); `unanswered`: the calls (indexes) whose result was not recorded."""

    calls: list[Call]
    steps: list[int] | None
    unanswered: list[int]

    def checked(self, checked: Callable[[str], bool]) -> Calls:
        """Only the calls to the tools `checked` accepts, numbered among themselves."""
        kept = [j for j, (name, _) in enumerate(self.calls) if checked(name)]
        if len(kept) == len(self.calls):
            return self
        at = {j: k for k, j in enumerate(kept)}
        steps = None if self.steps is None else [self.steps[j] for j in kept]
        unanswered = [at[j] for j in self.unanswered if j in at]
        return Calls([self.calls[j] for j in kept], steps, unanswered)

    def ignored(self, checked: Callable[[str], bool]) -> list[Call]:
        """The calls to the tools `checked` does not accept."""
        return [call for call in self.calls if not checked(call[0])]


def read_calls(messages: list[dict[str, Any]]) -> Calls:
    """The calls of messages as `read_conversation` gives them, their steps, and those
    without a result. There every call's id is its own and each result names the call it
    answers (`chatjudge.chat.toolcalls.call_ids` paired them by DESIGN §12's rule), so a
    result closes the call of its id."""
    calls: list[Call] = []
    steps: list[int] = []
    several = False
    waiting: dict[Any, int] = {}  # id -> index of the calls without a result yet
    for step, message in enumerate(messages):
        made = message.get("tool_calls")
        if not made:
            if waiting and message.get("role") == "tool":
                waiting.pop(message.get("tool_call_id"), None)
            continue
        several = several or len(made) > 1
        for call in made:
            function = call["function"]
            arguments = function.get("arguments")
            if isinstance(arguments, str) and arguments:
                try:  # noqa: SIM105 (`contextlib.suppress` costs more than the parse)
                    arguments = jsoncodec.loads(arguments, exact_ints=True)
                except ValueError:  # not JSON: kept as recorded
                    pass
            waiting[call.get("id")] = len(calls)
            calls.append((function["name"], arguments))
            steps.append(step)
    return Calls(calls, steps if several else None, list(waiting.values()))
