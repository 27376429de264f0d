"""Calls put together as conversations, in time order, and cut into turns.

Grouping: calls that record a conversation or session id are grouped by it. The others
(the common case: `opentelemetry-instrumentation-openai-v2` records none) are grouped by
shared history: a call continues a conversation when its input starts with everything that
conversation's last call saw plus the reply it got (the longest such conversation wins).

Conversations with an identical opening cannot be told apart by content, and need not be
for their rows (each row holds what its call saw); their later calls are matched to them as
follows: a conversation whose last call is in the same trace as the new call is preferred
(an app that wraps a conversation in one trace), else the one that has waited longest
for its next call, as a user who was answered first tends to write first. Once their
histories differ, each call matches one conversation only.

A turn is one user message and everything the assistant side did to answer it: a call
whose input ends with a tool result continues the turn of the call before it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field

from chatjudge.chat.messages import Msg
from chatjudge.traces.redact import Redactor
from chatjudge.traces.traced_calls import Call, TraceProblem


@dataclass(slots=True)
class Conversation:
    id: str
    calls: list[Call] = field(default_factory=list)
    tip: tuple[Msg, ...] = ()  # what the next call would see: the last input and its reply
    tip_hash: int = 0


def order(calls: Iterable[Call]) -> list[Call]:
    """Calls in time order; calls without a time keep their order in the files."""
    return sorted(calls, key=lambda c: (c.start, c.end))


def group(calls: list[Call]) -> list[Conversation]:
    """Conversations of time-ordered calls: by recorded id, else by shared history."""
    recorded: dict[str, Conversation] = {}
    by_prefix: list[Conversation] = []
    tips: dict[int, list[Conversation]] = {}
    used: set[str] = set()
    for call in calls:
        if call.conversation is not None:
            recorded.setdefault(call.conversation, Conversation(call.conversation)).calls.append(
                call
            )
            continue
        hashes = _prefix_hashes(call.messages)
        conversation = _continued(call, hashes, tips)
        if conversation is None:
            conversation = Conversation(_derived_id(call, used))
            by_prefix.append(conversation)
        conversation.calls.append(call)
        conversation.tip = (*call.messages, call.reply)
        conversation.tip_hash = hash((hashes[-1], call.reply))
        tips.setdefault(conversation.tip_hash, []).append(conversation)
    return [*recorded.values(), *by_prefix]


def _prefix_hashes(messages: tuple[Msg, ...]) -> list[int]:
    hashes, running = [], 0
    for message in messages:
        running = hash((running, message))
        hashes.append(running)
    return hashes


def _continued(
    call: Call, hashes: list[int], tips: dict[int, list[Conversation]]
) -> Conversation | None:
    """The conversation whose tip is the longest prefix of the call's input, taken off
    the tips (its tip is about to move)."""
    for length in range(len(hashes), 0, -1):
        waiting = tips.get(hashes[length - 1])
        if not waiting:
            continue
        matching = [c for c in waiting if c.tip == call.messages[:length]]
        if not matching:
            continue
        same_trace = [
            c for c in matching if call.trace_id and c.calls[-1].trace_id == call.trace_id
        ]
        chosen = (same_trace or matching)[0]  # else the one waiting longest
        waiting.remove(chosen)
        return chosen
    return None


def _derived_id(call: Call, used: set[str]) -> str:
    """A stable id for a conversation no trace named, from its first call's content and
    time: the same whatever the files' names and order (so is a --sample)."""
    seed = repr((call.messages, call.reply, call.start)).encode()
    base = "conv-" + hashlib.sha1(seed).hexdigest()[:12]
    found, n = base, 1
    while found in used:  # the same opening at the same instant
        n += 1
        found = f"{base}-{n}"
    used.add(found)
    return found


def turns(conversation: Conversation) -> list[list[Call]]:
    """The conversation's calls by turn; each turn's last call made its final reply."""
    found: list[list[Call]] = []
    for call in conversation.calls:
        if found and _continues(call, found[-1][-1]):
            found[-1].append(call)
        else:
            found.append([call])
    return found


def _continues(call: Call, before: Call) -> bool:
    """The call carries on the turn of `before`: it sends a tool result, answering the same
    user message (not a later one whose first step is missing from the export)."""
    if not call.messages or call.messages[-1].role != "tool":
        return False
    return last_user(call.messages) == last_user(before.messages)


def last_user(messages: tuple[Msg, ...]) -> Msg | None:
    return next((m for m in reversed(messages) if m.role == "user"), None)


def contradiction(
    conversation: Conversation, by_turn: list[list[Call]], redactor: Redactor
) -> TraceProblem | None:
    """A recorded conversation whose next turn says the assistant answered otherwise than
    the call that answered recorded: two conversations under one id, or a broken export.
    The message quotes both, redacted as the rows would be."""
    for before, after in zip(by_turn, by_turn[1:], strict=False):
        final, first = before[-1], after[0]
        if final.reply in first.messages:
            continue
        asked = last_user(final.messages)
        seen = first.messages
        at = next((i for i in range(len(seen) - 1, -1, -1) if seen[i] == asked), None)
        if at is None or at + 1 >= len(seen) or seen[at + 1].role != "assistant":
            continue  # production truncated or summarised the history: nothing to compare
        if seen[at + 1] != before[0].reply:
            said, recorded = _said(seen[at + 1]), _said(before[0].reply)
            quoted = [redactor.text(t) for t in (said, asked.content if asked else "", recorded)]
            return TraceProblem(
                first.where,
                f"conversation {redactor.text(conversation.id)!r} contradicts itself: this "
                f"call's history says the assistant answered {_short(quoted[0])} to "
                f"{_short(quoted[1])}, but {before[0].where} recorded {_short(quoted[2])}",
            )
    return None


def _said(message: Msg) -> str:
    """What an assistant message said, as a problem quotes it: its text, then its calls."""
    calls = (f"{c.name}({c.arguments})" for c in message.tool_calls)
    return "\n".join(t for t in (message.content, *calls) if t)


def _short(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")
