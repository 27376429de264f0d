"""Cache keys change with everything that changes a reply, and only with that."""

from __future__ import annotations

import hashlib
import json

from chatjudge.calls.keys import KEY_VERSION, KeyMaker, LegacyKeyMaker

IDENTITY = {"provider": "openai", "model": "m", "base_urls": ["http://a/v1"]}
SETTINGS = {"temperature": 0.0, "max_tokens": 100, "seed": None}
SCHEMA = {"type": "object"}


def user(text: str) -> list:
    return [{"role": "user", "content": text}]


def key(identity=IDENTITY, settings=SETTINGS, schema=SCHEMA, messages=None, sample=0) -> str:
    return KeyMaker(identity, settings, schema).key(messages or user("p"), sample)


def test_same_inputs_same_key_regardless_of_dict_order() -> None:
    reordered = dict(reversed(list(IDENTITY.items())))
    assert key() == key(identity=reordered)
    assert key(messages=[{"content": "p", "role": "user"}]) == key()
    assert len(key()) == 64


def test_every_output_changing_input_changes_the_key() -> None:
    base = key()
    assert key(messages=user("q")) != base
    assert key(sample=1) != base
    assert key(identity={**IDENTITY, "model": "n"}) != base
    assert key(identity={**IDENTITY, "base_urls": ["http://b/v1"]}) != base
    assert key(settings={**SETTINGS, "temperature": 0.5}) != base
    assert key(settings={**SETTINGS, "seed": 1}) != base
    assert key(schema={"type": "object", "required": ["x"]}) != base
    assert key(schema=None) != base  # a model under test: no reply schema


def test_the_whole_message_list_counts_roles_included() -> None:
    turns = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    assert key(messages=turns) != key(messages=turns[:1])
    assert key(messages=turns) != key(messages=[{**turns[0], "role": "system"}, turns[1]])
    # Two messages never hash like one whose text holds both.
    assert key(messages=user("a") + user("b")) != key(messages=user("ab"))


def test_prompt_and_sample_cannot_collide() -> None:
    assert key(messages=user("1"), sample=0) != key(messages=user(""), sample=10)


def test_keys_are_versioned_and_version_1_keys_are_computed_as_chatjudge_0_1_did() -> None:
    """A store written by chatjudge 0.1 holds version-1 keys: a re-run must find them."""
    assert KEY_VERSION == 2
    static = {"v": 1, "judge": IDENTITY, "settings": SETTINGS, "schema": SCHEMA}
    canonical = json.dumps(static, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    expected = hashlib.sha256(canonical.encode() + b"\x00sample:3\x00" + "prompt é".encode())
    legacy = LegacyKeyMaker(IDENTITY, SETTINGS, SCHEMA).key("prompt é", 3)
    assert legacy == expected.hexdigest()
    assert legacy != KeyMaker(IDENTITY, SETTINGS, SCHEMA).key(user("prompt é"), 3)


def test_a_plain_conversation_keeps_the_key_it_had_before_tools() -> None:
    """Stores written before tool calls existed are still found: same bytes hashed."""
    static = {"v": 2, "model": IDENTITY, "settings": SETTINGS, "schema": SCHEMA}
    canonical = json.dumps(static, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    said = b'[["user","p"],["assistant","a"]]'
    expected = hashlib.sha256(canonical.encode() + b"\x00sample:0\x00" + said).hexdigest()
    turns = [{"role": "user", "content": "p"}, {"role": "assistant", "content": "a", "n": 1}]
    assert key(messages=turns) == expected
    assert KeyMaker(IDENTITY, SETTINGS, SCHEMA).key(turns, 0, tools=None) == expected
    assert KeyMaker(IDENTITY, SETTINGS, SCHEMA).key(turns, 0, tools=[]) == expected


def test_tool_calls_their_results_and_the_tools_offered_change_the_key() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    asked = [
        {"role": "user", "content": "p"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
    ]
    answered = [*asked, {"role": "tool", "tool_call_id": "c1", "content": "42"}]
    other_answer = [*asked, {"role": "tool", "tool_call_id": "c1", "content": "43"}]
    other_call = [
        asked[0],
        {**asked[1], "tool_calls": [{**call, "function": {"name": "g", "arguments": "{}"}}]},
    ]
    keys = {key(messages=m) for m in (asked, answered, other_answer, other_call)}
    assert len(keys) == 4
    assert key(messages=asked) != key(messages=[asked[0], {"role": "assistant", "content": ""}])
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    maker = KeyMaker(IDENTITY, SETTINGS, None)
    with_tools = maker.key(asked[:1], 0, [tool])
    assert with_tools != maker.key(asked[:1], 0)
    assert with_tools == maker.key(asked[:1], 0, [dict(reversed(list(tool.items())))])
    assert with_tools != maker.key(asked[:1], 0, [{**tool, "function": {"name": "g"}}])
