"""Tool calls paired with their results by one rule, and the ids they are written with.

Every reader of a conversation with tools pairs by this rule, here and nowhere else: a
row's messages (`row_messages`), `import`'s traces, the tool loops of `generate` and
`simulate`, `--tool-replay`'s recording, the judge's rendering and the providers' requests.
Recordings and servers write ids as they please: one id reused in every step, none at all,
one id for two parallel calls. So:

- a result with an id answers the earliest earlier call recorded with that id that has no
  result yet (an id may be reused in a later step);
- a result without an id answers the earliest call that has no result yet; where it names
  its tool (Gemini's responses, LangChain's tool messages), the earliest such call to that
  tool, and none of another. A result whose id no open call has answers, in the same way,
  a call recorded without an id;
- a result that answers no call is the only error; a call whose result was not recorded is
  data.

Written ids pair unambiguously: a call keeps its recorded id where it is a non-empty text
that no earlier call of the conversation was written with, else it gets `call_<n>` (n: its
place among the conversation's calls, 1-based; `call_<n>_<k>` should that be taken), and a
result gets the written id of the call it answers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(slots=True)
class Call:
    """One call of a conversation: its place among the calls (1-based), the id it was
    recorded with (None: none, or not a text), its tool and the id it is written with."""

    number: int
    recorded: str | None
    name: str
    written: str


class CallIds:
    """One conversation's calls and results, read in order and paired (module doc)."""

    __slots__ = ("_by_id", "_n", "_open", "_used")

    def __init__(self) -> None:
        self._n = 0
        self._used: set[str] = set()
        self._open: dict[int, Call] = {}  # the calls without a result, by number (in order)
        self._by_id: dict[str, list[Call]] = {}  # recorded id -> its open calls, in order

    def call(self, recorded: Any, name: str) -> Call:
        """The conversation's next call, to `name`, recorded with the id `recorded`."""
        self._n += 1
        given = recorded if type(recorded) is str and recorded else None
        written = given if given is not None and given not in self._used else self._fresh()
        self._used.add(written)
        call = self._open[self._n] = Call(self._n, given, name, written)
        if given is not None:
            self._by_id.setdefault(given, []).append(call)
        return call

    def result(self, recorded: Any, name: Any = None) -> Call | None:
        """The call a result recorded with the id `recorded` (and naming the tool `name`,
        where it does) answers, now answered; None when it answers none."""
        if type(recorded) is str and recorded:
            waiting = self._by_id.get(recorded)
            if waiting:
                return self._answered(waiting[0])
            pool = [c for c in self._open.values() if c.recorded is None]
        else:
            pool = list(self._open.values())
        if name:  # a result naming its tool answers a call to that tool, or none
            pool = [c for c in pool if c.name == name]
        if not pool:
            return None
        return self._answered(pool[0])

    def unanswered(self) -> list[Call]:
        """The calls no result has answered so far, in order."""
        return list(self._open.values())

    def _answered(self, call: Call) -> Call:
        del self._open[call.number]
        if call.recorded is not None:
            waiting = self._by_id[call.recorded]
            waiting.remove(call)
            if not waiting:
                del self._by_id[call.recorded]
        return call

    def _fresh(self) -> str:
        found, k = f"call_{self._n}", 1
        while found in self._used:
            k += 1
            found = f"call_{self._n}_{k}"
        return found

    def read(self, messages: Iterable[Mapping[str, Any]]) -> None:
        """Read the calls and results of messages in OpenAI's format (a conversation so
        far, which later calls follow)."""
        for message in messages:
            if message.get("role") == "tool":
                self.result(message.get("tool_call_id"), message.get("name"))
                continue
            for call in message.get("tool_calls") or ():
                self.call(call.get("id"), _name(call))


def paired(messages: list[Any]) -> list[Any]:
    """Messages in OpenAI's format with ids that pair unambiguously (the module's rule, as
    a provider is sent them): the very list where every call's id is a text of its own and
    every result names an open call by it, else a copy with the ids written anew."""
    ids: set[str] = set()
    open_calls: set[str] = set()
    for message in messages:
        if message.get("role") == "tool":
            answered = message.get("tool_call_id")
            if type(answered) is not str or answered not in open_calls:
                return _rewritten(messages)
            open_calls.discard(answered)
            continue
        for call in message.get("tool_calls") or ():
            given = call.get("id")
            if type(given) is not str or not given or given in ids:
                return _rewritten(messages)
            ids.add(given)
            open_calls.add(given)
    return messages


def _rewritten(messages: list[Any]) -> list[Any]:
    ids = CallIds()
    out: list[Any] = []
    for message in messages:
        if message.get("role") == "tool":
            answered = ids.result(message.get("tool_call_id"), message.get("name"))
            if answered is not None:
                message = {**message, "tool_call_id": answered.written}
        elif message.get("tool_calls"):
            calls = [
                {**c, "id": ids.call(c.get("id"), _name(c)).written} for c in message["tool_calls"]
            ]
            message = {**message, "tool_calls": calls}
        out.append(message)
    return out


def _name(call: Mapping[str, Any]) -> str:
    function = call.get("function")
    return str(function.get("name") or "") if isinstance(function, Mapping) else ""
