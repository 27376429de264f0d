"""chatjudge.chat.toolcalls.definitions: a row's `tools` in one shape, checked against the
JSON Schema meta-schema, and definitions derived from calls."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from chatjudge.chat.toolcalls.definitions import derived_tools, read_tools

PARAMETERS = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
WEATHER = {
    "type": "function",
    "function": {"name": "weather", "description": "Today's weather", "parameters": PARAMETERS},
}


def test_openai_and_bare_definitions_read_into_one_shape() -> None:
    bare = WEATHER["function"]
    anthropic = {"name": "weather", "description": "Today's weather", "input_schema": PARAMETERS}
    for given in (WEATHER, bare, anthropic):
        assert read_tools([given]) == ([WEATHER], [])
    no_arguments = read_tools([{"name": "now"}])
    assert no_arguments == (
        [{"type": "function", "function": {"name": "now", "description": "",
                                           "parameters": {"type": "object"}}}],
        [],
    )  # fmt: skip


def test_definitions_derived_from_calls_take_an_open_object_schema() -> None:
    assert derived_tools(["weather", "time"]) == [
        {"type": "function", "function": {"name": n, "description": "",
                                          "parameters": {"type": "object"}}}
        for n in ("weather", "time")
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("tools", "problem"),
    [
        (
            [{"name": "f", "parameters": {"type": "object", "properties": {"x": {"type": "txt"}}}}],
            "tool 1 ('f'): parameters is not a JSON Schema: 'txt' is not valid under any of the "
            "given schemas (at properties/x/type)",
        ),
        (
            [WEATHER, {"name": "g", "parameters": {"required": "city"}}],
            "tool 2 ('g'): parameters is not a JSON Schema: 'city' is not of type 'array'",
        ),
        (
            [{"name": "f", "parameters": "object"}],
            "tool 1 ('f'): parameters is not a JSON Schema: expected an object, got str",
        ),
        ([{"type": "function", "function": {"description": "no name"}}], "tool 1: expected {"),
        ([WEATHER, WEATHER], "tool 2: a second definition of 'weather'"),
        ([{"name": "f", "description": 3}], "tool 1 ('f'): description must be a string"),
        ({"name": "f"}, "expected a list of tool definitions, got dict"),
    ],
)
def test_each_bad_definition_is_named(tools: object, problem: str) -> None:
    problems = read_tools(tools)[1]
    assert len(problems) == 1 and problems[0].startswith(problem), problems


def test_a_schema_checked_once_is_judged_the_same_for_every_row() -> None:
    """Rows repeat their definitions: the check is remembered by the schema's canonical JSON
    (key order aside), and a bad schema stays bad on every row that holds it."""
    bad = {"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": 3}}}}
    good = {"name": "f", "parameters": {"properties": {"a": {"type": "string"}}, "type": "object"}}
    for _ in range(2):
        assert "parameters is not a JSON Schema" in read_tools([bad])[1][0]
        assert read_tools([good])[1] == []
    reordered = {"name": "f", "parameters": {"properties": {"a": {"type": 3}}, "type": "object"}}
    assert "parameters is not a JSON Schema" in read_tools([reordered])[1][0]


@pytest.mark.parametrize(
    "schema",
    [
        PARAMETERS,
        {"type": ["string", "null"], "description": "d", "title": "t", "default": None},
        {
            "type": "object",
            "properties": {"a": True, "b": {"type": "array", "items": False}},
            "additionalProperties": {"enum": [1, "x", None, {"k": []}]},
            "required": [],
        },
        {"type": []},
        {"type": ["string", "string"]},
        {"type": "str"},
        {"type": None},
        {"required": ["a", "a"]},
        {"required": [1]},
        {"items": 3},
        {"items": [{"type": "string"}]},  # draft 2020-12: items is one schema
        {"additionalProperties": "no"},
        {"description": 3},
        {"title": None},
        {"enum": "a"},
        {"properties": {"a": 3}},
        {"properties": []},
        {"minimum": 1, "type": "integer"},  # keywords beyond the plain ones: jsonschema says
        {"minimum": "1"},
        {"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "string"}]},
    ],
)
def test_a_schema_is_judged_as_the_meta_schema_judges_it(schema: dict) -> None:
    """Plain schemas are passed without importing jsonschema: every verdict is still the
    one jsonschema's own meta-schema check gives."""
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import Draft202012Validator, validator_for

    try:
        validator_for(schema, default=Draft202012Validator).check_schema(schema)
        valid = True
    except SchemaError:
        valid = False
    problems = read_tools([{"name": "f", "parameters": schema}])[1]
    assert (problems == []) is valid, problems


def test_plain_schemas_are_checked_without_importing_jsonschema() -> None:
    """Its import costs a tenth of a second of CPU, as much as a few hundred model calls."""
    code = textwrap.dedent(f"""
        import sys
        from chatjudge.chat.toolcalls.definitions import read_tools
        assert read_tools([{{"name": "f", "parameters": {PARAMETERS!r}}}])[1] == []
        assert "jsonschema" not in sys.modules
        assert read_tools([{{"name": "g", "parameters": {{"minimum": "x"}}}}])[1]
        assert "jsonschema" in sys.modules
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
