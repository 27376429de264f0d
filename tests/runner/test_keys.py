"""Cache keys change with everything that changes a reply, and only with that."""

from __future__ import annotations

from chatjudge.runner.keys import KeyMaker

IDENTITY = {"provider": "openai", "model": "m", "base_urls": ["http://a/v1"]}
SETTINGS = {"temperature": 0.0, "max_tokens": 100, "seed": None}
SCHEMA = {"type": "object"}


def key(identity=IDENTITY, settings=SETTINGS, schema=SCHEMA, prompt="p", sample=0) -> str:
    return KeyMaker(identity, settings, schema).key(prompt, sample)


def test_same_inputs_same_key_regardless_of_dict_order() -> None:
    reordered = dict(reversed(list(IDENTITY.items())))
    assert key() == key(identity=reordered)
    assert len(key()) == 64


def test_every_output_changing_input_changes_the_key() -> None:
    base = key()
    assert key(prompt="q") != base
    assert key(sample=1) != base
    assert key(identity={**IDENTITY, "model": "n"}) != base
    assert key(identity={**IDENTITY, "base_urls": ["http://b/v1"]}) != base
    assert key(settings={**SETTINGS, "temperature": 0.5}) != base
    assert key(settings={**SETTINGS, "seed": 1}) != base
    assert key(schema={"type": "object", "required": ["x"]}) != base


def test_prompt_and_sample_cannot_collide() -> None:
    assert key(prompt="1", sample=0) != key(prompt="", sample=10)
