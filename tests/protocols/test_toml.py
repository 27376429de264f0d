"""Custom protocols from TOML: the shipped example, template sources, defaults and every error."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatjudge.data import Source, iter_items
from chatjudge.errors import UsageError
from chatjudge.protocols import BASELINE, CANDIDATE, TIE, get_protocol
from chatjudge.protocols.toml import load_toml_protocol

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "chat_quality_1to5.toml"

POINTWISE = '''
name = "helpfulness"
kind = "pointwise"
template = """Rate this reply to {prompt}:
{response}"""

[[fields]]
name = "prompt"

[[fields]]
name = "response"

[[scores]]
name = "helpfulness"
path = "rating"
min = 1
max = 5
rationale = "reason"
'''

PAIRWISE = """
name = "which-is-kinder"
kind = "pairwise"
template = "Prompt: {prompt}\\nA: {first}\\nB: {second}"
swap = ["first", "second"]

[[fields]]
name = "prompt"

[[fields]]
name = "first"

[[fields]]
name = "second"

[choice]
name = "winner"
path = "winner"
rationale = "why"

[choice.options]
A = "BASELINE"
TIE = "TIE"
B = "CANDIDATE"
"""


def write(tmp_path: Path, text: str, name: str = "p.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def load_error(tmp_path: Path, text: str) -> str:
    path = write(tmp_path, text)
    with pytest.raises(UsageError) as info:
        load_toml_protocol(path)
    message = str(info.value)
    assert str(path) in message
    return message


def test_shipped_example_loads_and_renders() -> None:
    p = load_toml_protocol(EXAMPLE)
    assert (p.name, p.kind) == ("chat-quality-1to5", "pointwise")
    assert [(f.name, f.required, f.conversation) for f in p.fields] == [
        ("history", False, True),
        ("prompt", True, True),
        ("response", True, False),
    ]
    assert p.verdict_schema == {
        "type": "object",
        "properties": {
            "explanation": {"type": "string"},
            "score": {"type": "integer", "enum": [1, 2, 3, 4, 5]},
        },
        "required": ["explanation", "score"],
        "additionalProperties": False,
    }
    assert [(m.name, m.source, m.equals) for m in p.metrics] == [("quality", "quality", None)]
    assert p.output_instruction.endswith('{"explanation": "...", "score": 1 or 2 or 3 or 4 or 5}')
    rendered = p.parsed_template.render(
        {"history": "**user**: hi {answer}", "prompt": "a lone {", "response": "}} done"}
    )
    assert "## Conversation history\n**user**: hi {answer}\n" in rendered
    assert "## Current user prompt\na lone {\n" in rendered
    assert rendered.endswith("# Response to rate\n}} done\n")


def test_get_protocol_accepts_a_toml_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert get_protocol(str(EXAMPLE)).name == "chat-quality-1to5"
    assert get_protocol(EXAMPLE).name == "chat-quality-1to5"
    write(tmp_path, POINTWISE, "mine.toml")
    monkeypatch.chdir(tmp_path)
    assert get_protocol("mine.toml").name == "helpfulness"
    with pytest.raises(UsageError, match="cannot read protocol file missing.toml"):
        get_protocol("missing.toml")


def test_inline_template_with_defaults(tmp_path: Path) -> None:
    p = load_toml_protocol(write(tmp_path, POINTWISE))
    assert p.template == "Rate this reply to {prompt}:\n{response}"
    assert [(m.name, m.source, m.equals) for m in p.metrics] == [
        ("helpfulness", "helpfulness", None)
    ]
    assert p.output_instruction == (
        "\n\nReply with one JSON object only, in this shape and with no other text:\n"
        '{"reason": "...", "rating": 1 or 2 or 3 or 4 or 5}'
    )


def test_template_file_is_read_relative_to_the_toml_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "protocols"
    (folder / "prompts").mkdir(parents=True)
    (folder / "prompts" / "rate.txt").write_text("{{json}} {prompt} => {response}\n", "utf-8")
    text = POINTWISE.replace(
        'template = """Rate this reply to {prompt}:\n{response}"""',
        'template_file = "prompts/rate.txt"',
    )
    path = write(folder, text)
    monkeypatch.chdir(tmp_path)  # not the TOML file's folder
    p = load_toml_protocol(path)
    assert p.template == "{{json}} {prompt} => {response}\n"
    assert p.parsed_template.render({"prompt": "p", "response": "r"}) == "{json} p => r\n"


def test_pairwise_defaults_to_the_three_win_rates(tmp_path: Path) -> None:
    p = load_toml_protocol(write(tmp_path, PAIRWISE))
    assert p.swap == ("first", "second")
    assert p.choice is not None and p.choice.options == {"A": BASELINE, "TIE": TIE, "B": CANDIDATE}
    assert [(m.name, m.source, m.equals) for m in p.metrics] == [
        ("candidate_win_rate", "winner", CANDIDATE),
        ("baseline_win_rate", "winner", BASELINE),
        ("tie_rate", "winner", TIE),
    ]
    assert p.output_instruction.endswith('{"why": "...", "winner": "A" or "TIE" or "B"}')


def test_explicit_metrics_and_instruction_are_kept(tmp_path: Path) -> None:
    text = POINTWISE.replace(
        'name = "helpfulness"\n',
        'name = "helpfulness"\noutput_instruction = "Answer in JSON: rating and reason."\n',
        1,
    )
    text += '\n[[metrics]]\nname = "helpful_pct"\nsource = "helpfulness"\nscale = 20.0\n'
    p = load_toml_protocol(write(tmp_path, text))
    assert p.output_instruction == "\n\nAnswer in JSON: rating and reason."
    assert [(m.name, m.scale) for m in p.metrics] == [("helpful_pct", 20.0)]


def test_wide_integer_range_is_described_by_its_bounds(tmp_path: Path) -> None:
    p = load_toml_protocol(write(tmp_path, POINTWISE.replace("max = 5", "max = 100")))
    assert p.verdict_schema["properties"]["rating"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 100,
    }
    assert p.output_instruction.endswith('"rating": <integer from 1 to 100>}')


def test_unknown_keys_are_named_with_the_allowed_ones(tmp_path: Path) -> None:
    text = POINTWISE.replace('name = "prompt"', 'name = "prompt"\nrequird = false')
    message = load_error(tmp_path, 'rubric = "x"\n' + text)
    assert "rubric: unknown key (allowed: choice, description, fields," in message
    assert "template_file" in message
    assert "fields[1].requird: unknown key (allowed: name, required, conversation," in message


def test_template_and_template_file_are_exclusive(tmp_path: Path) -> None:
    both = POINTWISE.replace('kind = "pointwise"', 'kind = "pointwise"\ntemplate_file = "t.txt"')
    assert "exactly one of 'template'" in load_error(tmp_path, both)
    neither = POINTWISE.replace('template = """Rate this reply to {prompt}:\n{response}"""', "")
    assert "exactly one of 'template'" in load_error(tmp_path, neither)


def test_missing_template_file(tmp_path: Path) -> None:
    text = POINTWISE.replace(
        'template = """Rate this reply to {prompt}:\n{response}"""', 'template_file = "gone.txt"'
    )
    assert "template_file 'gone.txt' cannot be read" in load_error(tmp_path, text)


def test_malformed_template(tmp_path: Path) -> None:
    text = POINTWISE.replace("Rate this reply to {prompt}:", "Rate {this reply to {prompt}:")
    assert "'template': template" in load_error(tmp_path, text)


def test_placeholders_must_match_fields(tmp_path: Path) -> None:
    text = POINTWISE.replace("Rate this reply to {prompt}", "Rate this reply to {question}")
    message = load_error(tmp_path, text)
    assert "template placeholders ['question', 'response']" in message
    assert "declared fields ['prompt', 'response']" in message


def test_score_min_above_max(tmp_path: Path) -> None:
    text = POINTWISE.replace("min = 1", "min = 7")
    assert "scores[1]: score 'helpfulness': min 7.0 > max 5.0" in load_error(tmp_path, text)


def test_pairwise_without_a_choice(tmp_path: Path) -> None:
    text = PAIRWISE[: PAIRWISE.index("[choice]")]
    assert "pairwise protocol 'which-is-kinder' needs a choice" in load_error(tmp_path, text)


def test_choice_options_must_map_to_a_side(tmp_path: Path) -> None:
    text = PAIRWISE.replace('TIE = "TIE"', 'TIE = "DRAW"')
    assert "choice: choice options must map to CANDIDATE, BASELINE or TIE" in load_error(
        tmp_path, text
    )


def test_missing_and_mistyped_keys(tmp_path: Path) -> None:
    text = POINTWISE.replace('name = "helpfulness"\n', "", 1).replace(
        'kind = "pointwise"', 'kind = "listwise"'
    )
    message = load_error(tmp_path, text)
    assert "name: required key missing" in message
    assert "kind: Input should be 'pointwise' or 'pairwise'" in message


def test_metric_reading_an_unknown_score(tmp_path: Path) -> None:
    text = POINTWISE + '\n[[metrics]]\nname = "m"\nsource = "helpfulnes"\n'
    assert "metric 'm' reads unknown score 'helpfulnes'" in load_error(tmp_path, text)


def test_invalid_toml_syntax(tmp_path: Path) -> None:
    assert "not valid TOML" in load_error(tmp_path, 'name = "x\nkind = "pointwise"\n')


def test_template_and_instruction_must_be_strings(tmp_path: Path) -> None:
    text = POINTWISE.replace(
        'template = """Rate this reply to {prompt}:\n{response}"""', "template = 3"
    )
    assert "'template' must be a string" in load_error(tmp_path, text)
    text = 'output_instruction = ["json"]\n' + POINTWISE
    assert "output_instruction must be a string" in load_error(tmp_path, text)


def test_a_field_may_name_its_trajectory_column(tmp_path: Path) -> None:
    text = POINTWISE.replace('name = "response"', 'name = "response"\ntrajectory = "steps"')
    p = load_toml_protocol(write(tmp_path, text))
    steps = [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "1", "function": {"name": "now"}}],
        },
        {"role": "tool", "tool_call_id": "1", "content": "9:00"},
        {"role": "assistant", "content": "It is nine."},
    ]
    (item,) = iter_items(
        Source([{"prompt": "Time?", "response": "It is nine.", "steps": steps}]), p.fields
    )
    assert p.render(item.text) == (
        "Rate this reply to Time?:\n"
        "**assistant** called now()\n**tool** (now) returned: 9:00\n**assistant**: It is nine."
    )


SLOTS = '''
name = "tool-slots"
kind = "pointwise"
template = """Tools:
{tools}
Did:
{trajectory}
Expected:
{expected_tool_calls}"""

[[fields]]
name = "tools"

[[fields]]
name = "trajectory"

[[fields]]
name = "expected_tool_calls"

[[scores]]
name = "ok"
path = "ok"
min = 0
max = 1
'''


def test_template_slots_hold_the_trajectory_tools_and_expected_calls(tmp_path: Path) -> None:
    path = tmp_path / "slots.toml"
    path.write_text(SLOTS)
    protocol = load_toml_protocol(path)
    call = {"id": "c1", "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}  # fmt: skip
    chat = [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "18 C"},
        {"role": "assistant", "content": "It is 18 C."},
    ]
    expected = [{"name": "get_weather", "arguments": {"city": "Paris"}}]
    rows = [
        {"chat": chat, "expected_tool_calls": expected},  # tools derived from the calls
        {"calls_made": chat[1:], "chat": chat[:1], "expected_tool_calls": expected,
         "tools": [{"name": "get_weather", "description": "Weather now.",
                    "parameters": {"type": "object"}}]},
    ]  # fmt: skip
    source = Source(rows, {"calls_made": "trajectory"})
    first, second = (protocol.render(i.text) for i in iter_items(source, protocol.fields))
    assert first == (
        "Tools:\nget_weather: (no description)\n"
        '  parameters: {"type": "object"}\n'
        "Did:\n**user**: Weather in Paris?\n"
        '**assistant** called get_weather({"city": "Paris"})\n'
        "**tool** (get_weather) returned: 18 C\n**assistant**: It is 18 C.\n"
        'Expected:\nget_weather({"city": "Paris"})'
    )
    assert second.startswith(
        'Tools:\nget_weather: Weather now.\n  parameters: {"type": "object"}\n'
        'Did:\n**assistant** called get_weather({"city": "Paris"})\n'  # the mapped column
    )
