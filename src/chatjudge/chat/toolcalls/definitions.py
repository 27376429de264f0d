"""A row's `tools` column: the definitions of the tools its conversation could call.

Rows hold them in OpenAI's form (`{"type": "function", "function": {...}}`) or as the bare
inner object (`{"name", "description", "parameters"}`, which is also Gemini's function
declaration; Anthropic's `input_schema` is read as `parameters`). `read_tools` gives one
shape, OpenAI's, with all three keys. A conversation that calls tools but has no
definitions gets them from its calls (`derived_tools`): providers such as Anthropic refuse
tool history without them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

OPEN_SCHEMA: dict[str, Any] = {"type": "object"}  # any arguments: what a call alone tells


def tool(
    name: str, description: str = "", parameters: dict[str, Any] | None = None
) -> dict[str, Any]:
    """One definition in the shape rows are normalised to."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": dict(OPEN_SCHEMA) if parameters is None else parameters,
        },
    }


def derived_tools(names: Iterable[str]) -> list[dict[str, Any]]:
    """Definitions of the tools `names`, known only from their calls: no description and
    an open object schema."""
    return [tool(name) for name in names]


def read_tools(value: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """A `tools` column as normalised definitions, and its problems, each naming its entry
    (a `parameters` that is not a JSON Schema is checked against the schema's meta-schema,
    the one its `$schema` names, by default draft 2020-12)."""
    if not isinstance(value, list):
        return [], [f"expected a list of tool definitions, got {type(value).__name__}"]
    tools: list[dict[str, Any]] = []
    problems: list[str] = []
    names: set[str] = set()
    for number, entry in enumerate(value, 1):
        inner = entry.get("function") if isinstance(entry, dict) else None
        if not isinstance(inner, dict):
            inner = entry if isinstance(entry, dict) and "function" not in entry else None
        name = inner.get("name") if inner is not None else None
        if inner is None or not isinstance(name, str) or not name:
            problems.append(
                f'tool {number}: expected {{"type": "function", "function": {{"name", '
                f'"description", "parameters"}}}} or the inner object, with a name'
            )
            continue
        if name in names:
            problems.append(f"tool {number}: a second definition of {name!r}")
            continue
        names.add(name)
        description = inner.get("description") or ""
        parameters = inner.get("parameters", inner.get("input_schema"))
        why = _schema_problem(parameters) if parameters is not None else None
        if why is not None:
            problems.append(f"tool {number} ({name!r}): parameters is not a JSON Schema: {why}")
            continue
        if not isinstance(description, str):
            problems.append(f"tool {number} ({name!r}): description must be a string")
            continue
        tools.append(tool(name, description, parameters))
    return tools, problems


_CHECKED: dict[bytes, str | None] = {}  # a schema's canonical JSON -> its problem
_MAX_CHECKED = 1024


def _schema_problem(schema: Any) -> str | None:
    """Why `schema` is not a JSON Schema for a tool's arguments, or None. The rows of one
    dataset mostly repeat the same few definitions: each distinct schema is checked once
    (a meta-schema check costs more than the rest of a row's work)."""
    if not isinstance(schema, dict):
        return f"expected an object, got {type(schema).__name__}"
    try:
        key = orjson.dumps(schema, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # not plain JSON: checked, not remembered
        return _checked_problem(schema)
    if key not in _CHECKED:
        if len(_CHECKED) >= _MAX_CHECKED:
            _CHECKED.clear()
        _CHECKED[key] = None if _plainly_valid(schema) else _checked_problem(schema)
    return _CHECKED[key]


_SIMPLE_TYPES = frozenset(("array", "boolean", "integer", "null", "number", "object", "string"))
_TEXTS = frozenset(("description", "title"))
_SUBSCHEMAS = frozenset(("items", "additionalProperties"))


def _plainly_valid(schema: Any) -> bool:
    """Whether `schema` (an object, or a boolean below the top) is made only of the keywords
    most tool definitions are written with, each with a value draft 2020-12's meta-schema
    accepts: such a schema is valid without asking `jsonschema`, whose import weighs on a
    small run (bench/README.md, "What each shortcut buys"). Anything else (another keyword,
    a `$schema`, a value of another kind) is for `jsonschema` to judge: this answers True
    only where it would."""
    if type(schema) is bool:
        return True
    if type(schema) is not dict:
        return False
    for key, value in schema.items():
        if key == "type":
            names = [value] if type(value) is str else value
            ok = (
                type(names) is list
                and bool(names)
                and all(type(n) is str and n in _SIMPLE_TYPES for n in names)
                and len(set(names)) == len(names)
            )
        elif key == "properties":
            ok = type(value) is dict and all(_plainly_valid(v) for v in value.values())
        elif key == "required":
            ok = (
                type(value) is list
                and all(type(n) is str for n in value)
                and len(set(value)) == len(value)
            )
        elif key in _SUBSCHEMAS:
            ok = _plainly_valid(value)
        elif key in _TEXTS:
            ok = type(value) is str
        elif key == "enum":
            ok = type(value) is list
        else:
            ok = key == "default"  # any value
        if not ok:
            return False
    return True


def _checked_problem(schema: dict[str, Any]) -> str | None:
    from jsonschema.exceptions import SchemaError  # only rows with such schemas pay the import
    from jsonschema.validators import Draft202012Validator, validator_for

    try:
        validator_for(schema, default=Draft202012Validator).check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.path)
        return f"{exc.message} (at {where})" if where else exc.message
    return None
