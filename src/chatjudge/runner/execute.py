"""Executing, the second part of the engine: a planned call through its judge's caller.

A transient fault (429, 5xx, a timeout, a lost connection) is retried by the caller's
policy, with back-off. A reply that holds no valid verdict is another matter: the model
did answer, so it is asked again at once, up to `parse_retries` times, and when no
reply parses the last one is kept with its raw text, a recorded failure, never a score.
A fatal fault (rejected credentials, a crashed local model) is raised: it stops the run.
"""

from __future__ import annotations

from dataclasses import dataclass

from chatjudge.chat.types import Reply
from chatjudge.errors import ModelError
from chatjudge.protocols.spec import Protocol
from chatjudge.runner.plan import Call, parse
from chatjudge.verdicts import Verdict


@dataclass(slots=True)
class Executed:
    reply: Reply | None  # None: no reply came (the error says why)
    latency: float | None
    verdict: Verdict | None
    error: str | None


async def execute(call: Call, protocol: Protocol, parse_retries: int) -> Executed:
    """Send `call` until a reply holds a verdict or the parse retries are spent."""
    flipped = call.outcome.flipped
    for _ in range(parse_retries + 1):
        try:
            reply, latency = await call.lane.role.caller.send(call.request)
        except ModelError as exc:
            if exc.fatal:
                raise
            return Executed(None, None, None, f"{type(exc).__name__}: {exc}")
        verdict, error = parse(reply, protocol, flipped)
        if verdict is not None:
            return Executed(reply, latency, verdict, None)
    return Executed(reply, latency, None, error)
