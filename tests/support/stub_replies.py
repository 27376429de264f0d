"""What the stand-in servers answer: a pure function of the prompt (the last user message),
so a test knows the verdict it should get. A judge's verdict (a valid instance of the
request's schema, or the built-in protocols' verdict shapes), a simulated user's turn
(ending with chatjudge's end marker once the transcript is long enough), or a line of text.
Shared by the OpenAI, Anthropic and Google stand-ins."""

from __future__ import annotations

import hashlib
import json
import math
import zlib
from typing import Any

END_MARKER = "[[TERMINATE CHAT]]"  # chatjudge's simulated user ends a conversation with it
_MASK = (1 << 64) - 1


def prompt_hash(prompt: str) -> int:
    """The 64-bit key the server counts a prompt under (hex in `/_stats?prompts=1`)."""
    return int.from_bytes(hashlib.blake2b(prompt.encode(), digest_size=8).digest(), "big")


def prompt_of(messages: list[Any]) -> str:
    """The text replies and faults depend on: the last user message's content."""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            return text_of(message.get("content"))
    return "\n".join(text_of(m.get("content")) for m in messages if isinstance(m, dict))


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}, ...]
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def mix(*parts: int) -> int:
    """splitmix64 over the parts: cheap, well spread, stable across processes."""
    x = 0
    for part in parts:
        x = ((x ^ part) + 0x9E3779B97F4A7C15) & _MASK
        x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
        x ^= x >> 31
    return x


INTERACTIVITY_ACCURACY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "interactivity": {
            "type": "object",
            "properties": {
                "thought": {"type": "string"},
                "score": {"type": "integer", "enum": [1, 2, 3]},
            },
            "required": ["thought", "score"],
        },
        "accuracy": {
            "type": "object",
            "properties": {
                "thought": {"type": "string"},
                "score": {"type": "integer", "enum": [0, 1]},
            },
            "required": ["thought", "score"],
        },
    },
    "required": ["interactivity", "accuracy"],
}

PAIRWISE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "explanation": {"type": "string"},
        "pairwise_choice": {"type": "string", "enum": ["A", "SAME", "B"]},
    },
    "required": ["explanation", "pairwise_choice"],
}

_PHRASES = (
    "The assistant asks a clarifying question before answering",
    "The final answer matches the reference",
    "The response stays on the user's request and is easy to follow",
    "The assistant answers directly without checking what the user needs",
    "Both turns are coherent and grounded in the conversation",
)


def schema_of(body: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON schema a request asks the reply to follow, if any (OpenAI, llama-cpp-python's
    `json_object` with a `schema`, or vLLM style)."""
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        spec = fmt.get("json_schema") or {}
        schema = spec.get("schema")
        if isinstance(schema, dict):
            return schema
    if isinstance(fmt, dict) and fmt.get("type") == "json_object":
        schema = fmt.get("schema")
        if isinstance(schema, dict):
            return schema
    guided = body.get("guided_json")
    return guided if isinstance(guided, dict) else None


def expected_reply(
    prompt: str, schema: dict[str, Any] | None = None, *, key: int | None = None
) -> str:
    """The content the server answers `prompt` with, given the request's schema (or none).

    With a schema: a deterministic valid instance of it. Without: the pairwise or
    interactivity-accuracy verdict when the prompt reads like one, else a line of text.
    `key` is `prompt_hash(prompt)` when the caller has it already.
    """
    seed = prompt_hash(prompt) if key is None else key
    if schema is None:
        if "Response B" in prompt:
            schema = PAIRWISE_SCHEMA
        elif "Interactivity" in prompt:
            schema = INTERACTIVITY_ACCURACY_SCHEMA
        else:
            return f"Stub reply {seed:016x}."
    return json.dumps(instance_of(schema, seed))


def with_goal(content: str, messages: list[Any]) -> str:
    """A simulated user's response tagged with its instructions (which hold its goal): two
    users with different goals never say the same words, as real ones would not, so their
    assistants' calls never share a cache key by chance."""
    system = "".join(text_of(m.get("content")) for m in messages
                     if isinstance(m, dict) and m.get("role") == "system")  # fmt: skip
    turn = json.loads(content)
    turn["response"] = f"{turn['response']} (goal {prompt_hash(system) % 10_000:04d})"
    return json.dumps(turn)


def simulated_user_reply(content: str, prompt: str, ends_after: int, appends: str) -> str:
    """A simulated user's turn that says `appends` (by default the end marker) once the
    transcript (chatjudge's `**role**: content` lines) holds `ends_after` assistant replies."""
    if prompt.count("**assistant**:") < ends_after:
        return content
    turn = json.loads(content)
    turn["response"] = f"{turn['response']} Thanks, that settles it. {appends}"
    return json.dumps(turn)


def instance_of(schema: dict[str, Any], seed: int, name: str = "", root: Any = None) -> Any:
    """A small valid instance of a JSON schema, chosen by `seed` (enums, ranges, strings)."""
    root = schema if root is None else root
    key = mix(seed, zlib.crc32(name.encode()))
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target = root
        for part in ref[2:].split("/"):
            target = target[part]
        return instance_of(target, seed, name, root)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][key % len(schema["enum"])]
    for combinator in ("anyOf", "oneOf", "allOf"):
        if schema.get(combinator):
            return instance_of(schema[combinator][0], seed, name, root)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        return {k: instance_of(v, seed, f"{name}.{k}", root) for k, v in props.items()}
    if kind == "array":
        count = max(int(schema.get("minItems", 1)), 1)
        if "maxItems" in schema:
            count = min(count, int(schema["maxItems"]))
        return [
            instance_of(schema.get("items", {}), seed, f"{name}[{i}]", root) for i in range(count)
        ]
    if kind in ("integer", "number"):
        lo = schema.get("minimum", schema.get("exclusiveMinimum", -1) + 1)
        hi = schema.get("maximum", schema.get("exclusiveMaximum", lo + 11) - 1)
        lo, hi = math.ceil(lo), math.floor(hi)
        return lo + key % (hi - lo + 1) if hi >= lo else lo
    if kind == "boolean":
        return bool(key & 1)
    if kind == "null":
        return None
    text = f"{_PHRASES[key % len(_PHRASES)]} (stub {key & 0xFFFF:04x})."
    if "maxLength" in schema:
        text = text[: int(schema["maxLength"])]
    return text.ljust(int(schema.get("minLength", 0)), "x")


def tool_turn(messages: list[Any], steps: int, tool: str) -> tuple[str, dict[str, Any]] | str:
    """A tool-calling assistant's next move, in OpenAI's terms, once a request offers tools:
    a call of `tool` (its name, its arguments) while the messages after the last user
    message hold fewer than `steps` tool results, then a text quoting the results.

    The arguments depend only on the last user message and the step, so a recorded
    conversation's results can be replayed for them; every stand-in answers alike."""
    after: list[Any] = []
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            break
        after.append(message)
    results = [text_of(m.get("content")) for m in reversed(after)
               if isinstance(m, dict) and m.get("role") == "tool"]  # fmt: skip
    if len(results) < steps:
        return tool, {"query": prompt_of(messages)[:200], "step": len(results) + 1}
    return "From the tool: " + " | ".join(r[:200] for r in results)
