"""What every provider does alike with tools (`chatjudge.models.tool_wire`); each provider's own
format is checked against its stand-in in test_contract.py and the provider's tests."""

from __future__ import annotations

import pytest

from chatjudge.models.tool_wire import EMPTY_PARAMETERS, arguments_object, functions


@pytest.mark.parametrize(
    ("arguments", "sent"),
    [
        ('{"city": "Oslo"}', {"city": "Oslo"}),
        ("{}", {}),
        ("{city: Oslo", {"unparsed_arguments": "{city: Oslo"}),  # not JSON
        ('["Oslo"]', {"unparsed_arguments": '["Oslo"]'}),  # JSON, not an object
        ('"Oslo"', {"unparsed_arguments": '"Oslo"'}),
        ("", {"unparsed_arguments": ""}),
    ],
)
def test_arguments_go_as_an_object_or_as_recorded(arguments: str, sent: dict) -> None:
    assert arguments_object(arguments) == sent


def test_a_function_without_parameters_takes_an_empty_object() -> None:
    (bare,) = functions([{"type": "function", "function": {"name": "now"}}])
    assert (bare.name, bare.description, bare.parameters) == ("now", None, EMPTY_PARAMETERS)
    assert EMPTY_PARAMETERS == {"type": "object", "properties": {}}
