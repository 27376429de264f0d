"""What every provider does alike with tools: reading OpenAI's definitions and calls into the
parts its own format needs, and refusing tools a model cannot call.

Rows and `ModelRequest.tools` hold OpenAI's format; Anthropic and Gemini take a call's
arguments as a JSON object, where OpenAI takes (and production models emit) any text.
Arguments that are not a JSON object are sent as `{"unparsed_arguments": TEXT}`: the model
reads the call as it was recorded, neither dropped nor made into an empty call it never made.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from chatjudge.errors import UsageError

if TYPE_CHECKING:
    from chatjudge.chat.types import Message, ModelRequest
    from chatjudge.models.base import Model

UNPARSED = "unparsed_arguments"
EMPTY_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}


@dataclass(frozen=True, slots=True)
class Function:
    """One tool definition's parts: name, description, JSON Schema of its arguments."""

    name: str
    description: str | None
    parameters: dict[str, Any]


def functions(tools: list[dict[str, Any]]) -> list[Function]:
    """The functions of OpenAI's `{"type": "function", "function": {...}}` definitions; a
    function without `parameters` takes none (an empty object)."""
    return [
        Function(f["name"], f.get("description"), f.get("parameters") or EMPTY_PARAMETERS)
        for f in (tool["function"] for tool in tools)
    ]


def arguments_object(arguments: str) -> dict[str, Any]:
    """A call's arguments as the JSON object Anthropic and Gemini require (module doc)."""
    try:
        value = orjson.loads(arguments)
    except orjson.JSONDecodeError:
        value = None
    return value if isinstance(value, dict) else {UNPARSED: arguments}


def call_names(messages: list[Message]) -> dict[str, str]:
    """Each call's id to its tool's name: Gemini names the function a result answers."""
    return {
        call["id"]: call["function"]["name"]
        for message in messages
        for call in message.get("tool_calls", ())
    }


def refuse_tools(model: Model, request: ModelRequest) -> None:
    """A request that offers tools to a model that cannot call them is an error, never a
    reply made without them (set-up refuses such a model first; this is the safety net)."""
    if request.tools and not model.supports_tools:
        raise UsageError(
            f"{model.name} cannot call tools, and this request offers "
            f"{len(request.tools)}: use a model that can (openai/, anthropic/, google/ or a Python "
            "function that takes `tools`)"
        )
