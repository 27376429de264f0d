"""The tool definitions a call was offered, as a trace records them (GenAI
`gen_ai.tool.definitions`, OpenLLMetry `llm.request.functions`, OpenInference `llm.tools`, a
request's `tools`), in the shape a row's `tools` column holds (`tool_definitions`)."""

from __future__ import annotations

import functools
import json
from typing import Any

from chatjudge import jsoncodec
from chatjudge.chat.messages import LayoutError
from chatjudge.chat.toolcalls.definitions import read_tools


def json_value(value: Any, key: str) -> Any:
    """An attribute that holds a JSON document: decoded where it is JSON text (spans can only
    hold text), as it is where it arrived structured (log records, tables)."""
    if not isinstance(value, str):
        return value
    try:
        return jsoncodec.loads(value, max_depth=jsoncodec.INPUT_DEPTH)
    except ValueError:
        raise LayoutError(f"{key} is not JSON") from None


def definitions_text(recorded: Any, key: str) -> str | None:
    """The recorded definitions (None: none recorded) normalised as rows hold them, as JSON
    text (one string, shared by every call offered the same tools); LayoutError naming `key`
    for a definition a row could not hold (no name, a `parameters` that is no JSON Schema)."""
    if recorded is None:
        return None
    return _normalised(json.dumps(recorded, ensure_ascii=False), key)


@functools.lru_cache(maxsize=64)
def _normalised(recorded: str, key: str) -> str | None:
    """Once per distinct set of definitions: every call of an app is offered the same few,
    and checking a JSON Schema costs more than reading a call."""
    tools, problems = read_tools(json.loads(recorded))
    if problems:
        raise LayoutError(f"{key}: {problems[0]}")
    return json.dumps(tools, ensure_ascii=False) if tools else None
