"""Safe substitution: data is never a placeholder; malformed templates are usage errors."""

from __future__ import annotations

import pytest

from chatjudge.errors import UsageError
from chatjudge.protocols import Template, get_protocol

TRICKY = [
    "print(f'{answer}')",
    "a lone { brace",
    "closing braces }} and }",
    "positional {0} and {}",
    "{{escaped}} stays doubled",
    "{question}{answer}{chat}",
]


@pytest.mark.parametrize("value", TRICKY)
def test_values_are_substituted_literally(value: str) -> None:
    t = Template("Q: {question}\nA: {answer}\n")
    assert t.render({"question": value, "answer": "42"}) == f"Q: {value}\nA: 42\n"
    assert t.render({"question": "why?", "answer": value}) == f"Q: why?\nA: {value}\n"


def test_a_value_is_not_substituted_again_by_later_fields() -> None:
    t = Template("{history}|{prompt}|{response}")
    rendered = t.render({"history": "{prompt}", "prompt": "{response}", "response": "{history}"})
    assert rendered == "{prompt}|{response}|{history}"


def test_escaped_braces_render_single() -> None:
    t = Template('{{\n  "score": {{"value": <score>}}\n}}\n{answer}')
    assert t.fields == ("answer",)
    assert t.render({"answer": "x"}) == '{\n  "score": {"value": <score>}\n}\nx'


def test_fields_in_order_without_repeats() -> None:
    assert Template("{b} {a} {b} {{c}}").fields == ("b", "a")
    assert Template("no placeholders").fields == ()


@pytest.mark.parametrize(
    "text",
    [
        "Hello {name",  # unclosed
        "a } b",  # lone closing brace
        "{0}",  # positional
        "{}",  # anonymous
        "{name!r}",  # conversion
        "{name:>10}",  # format spec
        "{item.attr}",  # attribute access
        "{item[0]}",  # indexing
    ],
)
def test_malformed_template_is_a_usage_error(text: str) -> None:
    with pytest.raises(UsageError, match="template"):
        Template(text)


def test_builtin_template_renders_conversation_text_literally() -> None:
    p = get_protocol("interactivity-accuracy")
    chat = (
        "**user**: what does {answer} mean in an f-string? and a lone {\n**assistant**: }} is '}'"
    )
    rendered = p.parsed_template.render(
        {"chat_history": "", "chat": chat, "question": "{question}", "answer": "{0}"}
    )
    assert f"<|The Start of The Follow-up Conversation to be Evaluated|>  \n{chat}  \n" in rendered
    assert "Target Question: {question}  \nGround Truth Answer: {0}  \n" in rendered
    # The template's own escaped braces came out single.
    assert '{\n  "interactivity": {"thought": ' in rendered
