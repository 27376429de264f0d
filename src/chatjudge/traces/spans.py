"""A span, whatever file it came in, as a call: which convention holds its messages, its
conversation id, its model and the attributes kept with --keep."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chatjudge.chat.messages import LayoutError
from chatjudge.traces.genai import Event, genai_messages, genai_tools, is_chat_span
from chatjudge.traces.offered_tools import definitions_text
from chatjudge.traces.openinference import is_llm_span, openinference_messages, openinference_tools
from chatjudge.traces.traced_calls import Call, Interner, TraceProblem, Where, keep_from, replied

CONVERSATION_KEYS = ("gen_ai.conversation.id", "session.id")
MODEL_KEYS = ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name")
RESPONSE_ID = "gen_ai.response.id"
NO_MESSAGES = (
    "span without messages: a chat span that records no message content (message-content "
    "capture is off by default in the instrumentations: docs/traces.md says how to switch it "
    "on)"
)


@dataclass(frozen=True, slots=True)
class SpanInfo:
    """What a span says besides its attributes: where it is, when, in which trace."""

    where: Where
    start: int
    end: int
    trace_id: str | None
    resource: dict[str, Any]


def is_call(attrs: dict[str, Any], events: list[Event]) -> bool:
    """A model call of either convention (not an HTTP, tool, agent or embeddings span)."""
    return is_llm_span(attrs) or is_chat_span(attrs, events)


def call_of_span(
    attrs: dict[str, Any],
    events: list[Event],
    info: SpanInfo,
    *,
    keep: tuple[str, ...],
    intern: Interner,
) -> Call:
    """The call a model span records; TraceProblem when its messages or its tool definitions
    cannot be read."""
    where = info.where
    convention = "OpenInference" if is_llm_span(attrs) else "GenAI"
    try:
        if convention == "OpenInference":
            found, tools = openinference_messages(attrs), openinference_tools(attrs)
        else:
            found, tools = genai_messages(attrs, events), genai_tools(attrs, events)
    except LayoutError as exc:
        raise TraceProblem(where, f"unknown attribute layout ({convention}): {exc}") from None
    except RecursionError:  # JSON held in an attribute nests deeper than Python goes
        raise TraceProblem(
            where, f"unknown attribute layout ({convention}): messages nested too deeply to read"
        ) from None
    if found is None:
        raise TraceProblem(where, NO_MESSAGES)
    messages, reply = found
    try:
        offered = definitions_text(tools, "the tool definitions")
    except LayoutError as exc:
        raise TraceProblem(where, str(exc)) from None
    if not messages:
        raise TraceProblem(where, "span without input messages: only a reply is recorded")
    if reply.role != "assistant":
        raise TraceProblem(where, f"the span's reply has role {reply.role!r}, not assistant")
    conversation = next((str(attrs[k]) for k in CONVERSATION_KEYS if attrs.get(k)), None)
    model = next((str(attrs[k]) for k in MODEL_KEYS if attrs.get(k)), None)
    return Call(
        where,
        info.start,
        info.end,
        intern(messages),
        intern.one(replied(where, reply)),
        model,
        info.trace_id,
        conversation,
        keep_from([attrs, info.resource], keep),
        intern.text(offered),
        str(attrs[RESPONSE_ID]) if attrs.get(RESPONSE_ID) else None,
    )
