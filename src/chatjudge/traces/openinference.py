"""OpenInference's conventions (Arize Phoenix's instrumentations): messages flattened into
indexed attributes, `llm.input_messages.N.message.role` / `.content` /
`.tool_calls.M.tool_call.function.name`, the reply under `llm.output_messages.0`, the
conversation under `session.id`, the span marked `openinference.span.kind = LLM`; the tools
offered as `llm.tools.N.tool.json_schema` (each OpenAI's `{"type": "function", "function":
{...}}` as JSON text), or in the request JSON of `input.value`."""

from __future__ import annotations

import json
from typing import Any

from chatjudge.chat.messages import LayoutError, Msg, openai_message
from chatjudge.traces.choices import openai_call
from chatjudge.traces.offered_tools import json_value


def is_llm_span(attrs: dict[str, Any]) -> bool:
    return attrs.get("openinference.span.kind") == "LLM"


def indexed(attrs: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """Keys `PREFIX.N.rest` as a list (by N) of {rest: value}: the flattened list under
    `prefix` put back together one level deep."""
    found: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        if not key.startswith(prefix):
            continue
        index, _, rest = key[len(prefix) :].partition(".")
        if index.isdigit() and rest:
            found.setdefault(int(index), {})[rest] = value
    return [found[i] for i in sorted(found)]


def openinference_messages(attrs: dict[str, Any]) -> tuple[list[Msg], Msg] | None:
    """The call's input messages and reply, or None when the span carries none."""
    inputs = indexed(attrs, "llm.input_messages.")
    outputs = indexed(attrs, "llm.output_messages.")
    if not inputs and not outputs:
        return _from_input_value(attrs)
    if not outputs:
        raise LayoutError("llm.output_messages.0.* is missing: the span has no reply")
    return [_message(m) for m in inputs], _message(outputs[0])


def openinference_tools(attrs: dict[str, Any]) -> Any:
    """The tool definitions the call was offered, as recorded; None where none are."""
    recorded = indexed(attrs, "llm.tools.")
    if recorded:
        return [
            json_value(tool.get("tool.json_schema"), f"llm.tools.{n}.tool.json_schema")
            for n, tool in enumerate(recorded)
        ]
    try:
        request = json.loads(attrs.get("input.value") or "null")
    except (TypeError, ValueError):  # a text input, not a request's JSON
        return None
    return request.get("tools") if isinstance(request, dict) else None


def _message(fields: dict[str, Any]) -> Msg:
    if not any(k.startswith("message.") for k in fields):
        raise LayoutError(f"expected message.* keys, got {', '.join(sorted(fields))}")
    message = {k.removeprefix("message."): v for k, v in fields.items()}
    contents = indexed(message, "contents.")
    content: Any = message.get("content")
    if content is None and contents:
        content = [
            {
                "type": c.get("message_content.type", "text"),
                "text": c.get("message_content.text"),
            }
            for c in contents
        ]
    calls = [
        {
            "id": call.get("tool_call.id"),
            "function": {
                "name": call.get("tool_call.function.name"),
                "arguments": call.get("tool_call.function.arguments", ""),
            },
        }
        for call in indexed(message, "tool_calls.")
    ]
    return openai_message(
        {
            "role": message.get("role"),
            "content": content,
            "tool_calls": calls or None,
            "tool_call_id": message.get("tool_call_id"),
            "name": message.get("name"),
        }
    )


def _from_input_value(attrs: dict[str, Any]) -> tuple[list[Msg], Msg] | None:
    """Spans that kept only the raw request and response (`input.value`, `output.value`
    as chat-completions JSON), read as a chat-completions log record is."""
    try:
        request = json.loads(attrs.get("input.value") or "null")
        response = json.loads(attrs.get("output.value") or "null")
    except (TypeError, ValueError):
        return None
    if not (isinstance(request, dict) and isinstance(request.get("messages"), list)):
        return None
    choices = response.get("choices") if isinstance(response, dict) else None
    try:
        return openai_call(request["messages"], choices)
    except LayoutError as exc:
        raise LayoutError(f"input.value / output.value: {exc}") from None
