"""Logs of chat-completions calls: one JSON object per line holding the request's
`messages` and the response's `choices`, either side by side or as `request` and
`response` objects (what a logging proxy or a middleware writes); the request's `tools`
are the tools the call was offered.

The time of a call is its `timestamp` (ISO 8601, or a number since the epoch in seconds,
milliseconds, microseconds or nanoseconds), else the response's `created`; a recorded
`conversation_id` or `session_id` (top level or in `metadata`) groups calls as a
conversation id on a span does.
"""

from __future__ import annotations

from typing import Any

from chatjudge.chat.messages import LayoutError
from chatjudge.traces.choices import openai_call
from chatjudge.traces.offered_tools import definitions_text
from chatjudge.traces.times import nanoseconds
from chatjudge.traces.traced_calls import Call, Interner, TraceProblem, Where, keep_from, replied

_TIME_KEYS = ("timestamp", "time", "start_time", "created_at")
_CONVERSATION_KEYS = ("conversation_id", "session_id", "thread_id")


def is_completions_log(record: Any) -> bool:
    if not isinstance(record, dict):
        return False
    request, response = _sides(record)
    return "messages" in request and "choices" in response


def _sides(record: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The request and the response of a record, nested or side by side."""
    request = record["request"] if isinstance(record.get("request"), dict) else record
    response = record["response"] if isinstance(record.get("response"), dict) else record
    return request, response


def call_of_record(record: Any, where: Where, *, keep: tuple[str, ...], intern: Interner) -> Call:
    """The call one log line records; TraceProblem when it lacks what a call needs."""
    if not is_completions_log(record):
        raise TraceProblem(
            where,
            "not a chat-completions record: expected the request's `messages` and the "
            "response's `choices` (side by side, or under `request` and `response`)",
        )
    request, response = _sides(record)
    try:
        sent, reply = openai_call(request["messages"], response["choices"])
        offered = definitions_text(request.get("tools"), "the request's tools")
    except LayoutError as exc:
        raise TraceProblem(where, str(exc)) from None
    metadata = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
    fields = [record, metadata, request.get("metadata") or {}, request]
    conversation = next(
        (str(f[k]) for k in _CONVERSATION_KEYS for f in fields if isinstance(f, dict) and f.get(k)),
        None,
    )
    time = next((record[k] for k in _TIME_KEYS if record.get(k) is not None), None)
    if time is None:
        time = response.get("created")
    try:
        start = nanoseconds(time)  # 0 (file order decides) when the record has no time
    except ValueError:
        raise TraceProblem(where, f"unreadable timestamp {time!r} (use ISO 8601)") from None
    model = response.get("model") or request.get("model")
    return Call(
        where,
        start,
        start,
        intern(sent),
        intern.one(replied(where, reply)),
        str(model) if model else None,
        None,
        conversation,
        keep_from([f for f in fields if isinstance(f, dict)], keep),
        intern.text(offered),
        str(response["id"]) if response.get("id") else None,
    )
