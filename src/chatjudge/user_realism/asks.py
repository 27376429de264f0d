"""A question to a model whose answer is one JSON object (the goal writer's, the judge's
marks), asked through a `Role` (the store first, then the call path), and asked once more
with another seed when the reply holds no usable answer: an unparseable reply is
unmarked, never a guess."""

from __future__ import annotations

from collections.abc import Callable
from importlib.resources import files
from typing import Any, TypeVar

from chatjudge import jsoncodec
from chatjudge.calls.role import Role
from chatjudge.chat.types import Message, OutputSchema
from chatjudge.protocols.template import Template

T = TypeVar("T")


def prompt_text(package: str, name: str) -> Template:
    """A fixed prompt shipped with the package (`<package>/prompts/<name>.txt`)."""
    return Template(files(package).joinpath("prompts", f"{name}.txt").read_text("utf-8"))


def schema(name: str, properties: dict[str, Any], instruction: str) -> OutputSchema:
    """A reply schema of one object with every property required."""
    shape = {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }
    return OutputSchema(name, shape, instruction)


async def ask(
    role: Role, messages: list[Message], read: Callable[[dict[str, Any]], T | None]
) -> tuple[T | None, str]:
    """`read`'s answer from the reply's JSON object, asked twice at most; None when neither
    reply held one. Also the last reply's text, kept with what it marked. Raises
    `ModelError` when a call fails."""
    text = ""
    for attempt in (0, 1):
        reply = await role.call(messages, attempt)
        text = reply.text
        found = json_object(text)
        answer = read(found) if found is not None else None
        if answer is not None:
            return answer, text
    return None, text


def json_object(text: str) -> dict[str, Any] | None:
    """The JSON object a reply holds (repaired where a model wrote it loosely), else None."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0:
        return None
    try:
        data = jsoncodec.loads(text[start : end + 1])
    except ValueError:
        from json_repair import repair_json

        data = repair_json(text[start:], return_objects=True)
    return data if isinstance(data, dict) else None
