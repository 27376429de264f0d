"""OpenTelemetry's GenAI semantic conventions: where a chat span keeps its messages.

Three generations are read:
- current attributes: `gen_ai.input.messages`, `gen_ai.output.messages` (JSON, each message
  a role and typed `parts`), `gen_ai.system_instructions` (the system prompt, kept apart);
  the same attributes on a `gen_ai.client.inference.operation.details` event;
- the older events, on the span or as log records linked to it: `gen_ai.system.message`,
  `gen_ai.user.message`, `gen_ai.assistant.message`, `gen_ai.tool.message`, `gen_ai.choice`
  (and the first form, `gen_ai.content.prompt` / `gen_ai.content.completion`);
- OpenLLMetry's indexed attributes: `gen_ai.prompt.N.role`, `gen_ai.completion.N.content`.

The tools a call was offered: `gen_ai.tool.definitions` (a JSON list of `{"type":
"function", "name", "description", "parameters"}`), or OpenLLMetry's
`llm.request.functions` (indexed, `llm.request.functions.N.name`, or one JSON list).
"""

from __future__ import annotations

import json
from typing import Any

from chatjudge import jsoncodec
from chatjudge.chat.messages import (
    LayoutError,
    Msg,
    ToolCall,
    canonical_arguments,
    openai_message,
    role_of,
    text_of,
)
from chatjudge.traces.choices import choice_index, first_choice
from chatjudge.traces.offered_tools import json_value
from chatjudge.traces.openinference import indexed

CHAT_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})
DETAILS_EVENT = "gen_ai.client.inference.operation.details"
_MESSAGE_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
_OLDEST_EVENTS = frozenset({"gen_ai.content.prompt", "gen_ai.content.completion"})
EVENT_NAMES = frozenset({*_MESSAGE_EVENTS, "gen_ai.choice", DETAILS_EVENT, *_OLDEST_EVENTS})

Event = tuple[str, dict[str, Any]]


def is_chat_span(attrs: dict[str, Any], events: list[Event]) -> bool:
    """A chat call in GenAI terms: a chat operation, or (older spans name none) a span that
    carries GenAI messages. Embeddings, tool executions and agent spans are not calls."""
    operation = attrs.get("gen_ai.operation.name")
    if operation is not None:
        return operation in CHAT_OPERATIONS
    return (
        "gen_ai.input.messages" in attrs
        or "gen_ai.prompt.0.role" in attrs
        or any(name in EVENT_NAMES for name, _ in events)
    )


def _with_details(attrs: dict[str, Any], events: list[Event]) -> dict[str, Any]:
    """The span's attributes and those its details event holds (the current attributes,
    recorded as an event instead)."""
    for name, payload in events:
        if name == DETAILS_EVENT:
            attrs = {**payload, **attrs}
    return attrs


def genai_tools(attrs: dict[str, Any], events: list[Event]) -> Any:
    """The tool definitions the call was offered, as recorded; None where none are."""
    attrs = _with_details(attrs, events)
    for key in ("gen_ai.tool.definitions", "llm.request.functions"):
        if attrs.get(key) is not None:
            return json_value(attrs[key], key)
    functions = indexed(attrs, "llm.request.functions.")
    return [
        {
            "name": f.get("name"),
            "description": f.get("description"),
            "parameters": json_value(f.get("parameters"), "llm.request.functions.N.parameters"),
        }
        for f in functions
    ] or None


def genai_messages(attrs: dict[str, Any], events: list[Event]) -> tuple[list[Msg], Msg] | None:
    """The call's input messages and reply, or None when the span carries none."""
    attrs = _with_details(attrs, events)
    if "gen_ai.input.messages" in attrs or "gen_ai.output.messages" in attrs:
        return _current(attrs)
    if "gen_ai.prompt.0.role" in attrs or "gen_ai.prompt.0.content" in attrs:
        return _indexed(attrs)
    if any(name in EVENT_NAMES for name, _ in events):
        return _from_events(events)
    return None


def _decoded(value: Any, key: str) -> Any:
    if isinstance(value, str):
        try:
            return jsoncodec.loads(value)
        except ValueError:
            raise LayoutError(f"{key} is not JSON") from None
    return value


def _listed(value: Any, key: str) -> list[Any]:
    decoded = _decoded(value, key)
    if not isinstance(decoded, list):
        raise LayoutError(f"{key} must be a JSON list")
    return decoded


def _current(attrs: dict[str, Any]) -> tuple[list[Msg], Msg]:
    inputs = _decoded(attrs.get("gen_ai.input.messages", "[]"), "gen_ai.input.messages")
    outputs = _decoded(attrs.get("gen_ai.output.messages", "[]"), "gen_ai.output.messages")
    if not isinstance(inputs, list) or not isinstance(outputs, list):
        raise LayoutError("gen_ai.input.messages and gen_ai.output.messages must be JSON lists")
    messages = [m for item in inputs for m in _parts_message(item)]
    system = attrs.get("gen_ai.system_instructions")
    if system is not None:
        parts = _decoded(system, "gen_ai.system_instructions")
        text = text_of(parts if isinstance(parts, list) else [parts])
        if not (messages and messages[0].role == "system" and messages[0].content == text):
            messages.insert(0, Msg("system", text))
    if not outputs:
        raise LayoutError("gen_ai.output.messages is empty: the span has no reply")
    reply = _parts_message(first_choice(outputs))
    if len(reply) != 1 or reply[0].role != "assistant":
        raise LayoutError("gen_ai.output.messages[0] is not one assistant message")
    return messages, reply[0]


def _parts_message(item: Any) -> list[Msg]:
    """One GenAI message (`{"role", "parts": [...]}`) as messages: tool responses each
    their own `tool` message, whatever role carried them."""
    if not isinstance(item, dict) or "role" not in item:
        raise LayoutError("a GenAI message must be an object with a role")
    parts = item.get("parts")
    if parts is None:  # some writers put OpenAI-style content in the same place
        return [openai_message(item)]
    if not isinstance(parts, list):
        raise LayoutError("a GenAI message's parts must be a list")
    role = role_of(item["role"])
    texts: list[str] = []
    calls: list[ToolCall] = []
    results: list[Msg] = []
    for part in parts:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "tool_call":
            calls.append(
                ToolCall(
                    str(part.get("name")),
                    canonical_arguments(part.get("arguments")),
                    part.get("id"),
                )
            )
        elif kind == "tool_call_response":
            response = part.get("response", part.get("result"))
            text = (
                response if isinstance(response, str) else json.dumps(response, ensure_ascii=False)
            )
            results.append(Msg("tool", text, (), part.get("id")))
        elif kind == "reasoning":  # the model's private reasoning: not what it said
            continue
        else:
            texts.append(text_of([part]))
    if results and not texts and not calls:
        return results
    return [Msg(role, "\n".join(t for t in texts if t), tuple(calls)), *results]


def _indexed(attrs: dict[str, Any]) -> tuple[list[Msg], Msg]:
    prompts = indexed(attrs, "gen_ai.prompt.")
    completions = indexed(attrs, "gen_ai.completion.")
    if not completions:
        raise LayoutError("gen_ai.completion.0.* is missing: the span has no reply")
    return [_flat_message(p) for p in prompts], _flat_message(completions[0])


def _flat_message(fields: dict[str, Any]) -> Msg:
    calls = indexed(fields, "tool_calls.")
    message = {
        "role": fields.get("role", "assistant"),
        "content": fields.get("content"),
        "tool_calls": calls or None,
        "tool_call_id": fields.get("tool_call_id"),
    }
    return openai_message(message)


def _objects(payload: dict[str, Any]) -> dict[str, Any]:
    """Span-event attributes cannot nest: a message or tool calls arrive as JSON text."""
    decoded = dict(payload)
    for key in ("message", "tool_calls"):
        if isinstance(decoded.get(key), str):
            decoded[key] = _decoded(decoded[key], key)
    return decoded


def _from_events(events: list[Event]) -> tuple[list[Msg], Msg]:
    messages: list[Msg] = []
    replies: list[tuple[int, Msg]] = []
    for name, payload in events:
        payload = _objects(payload)
        if name in _MESSAGE_EVENTS:
            body = {"role": payload.get("role") or _MESSAGE_EVENTS[name], **payload}
            body.setdefault("tool_call_id", payload.get("id"))
            messages.append(openai_message(body))
        elif name == "gen_ai.choice":
            message = payload.get("message")
            if not isinstance(message, dict):
                raise LayoutError("a gen_ai.choice event has no message")
            replies.append((choice_index(payload.get("index"), 0), openai_message(message)))
        elif name == "gen_ai.content.prompt":
            prompt = _listed(payload.get("gen_ai.prompt", "[]"), "gen_ai.prompt")
            messages.extend(openai_message(m) for m in prompt)
        elif name == "gen_ai.content.completion":
            completion = _listed(payload.get("gen_ai.completion", "[]"), "gen_ai.completion")
            for i, choice in enumerate(completion):
                message = choice.get("message", choice) if isinstance(choice, dict) else choice
                replies.append((i, openai_message(message)))
    if not replies:
        raise LayoutError("the span's GenAI events hold no gen_ai.choice: it has no reply")
    return messages, min(replies, key=lambda r: r[0])[1]
