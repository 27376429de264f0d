"""Cache keys: a versioned SHA-256 over canonical JSON of what changes a model's reply.

Model identity (provider, model, base URLs), generation settings and the reply schema
are hashed once per (model, settings) into a prefix; each call adds its sample index
and its messages (roles and contents, canonical JSON; a message's tool calls or the call
a tool result answers, where it has them) and the tools offered, where there are any: a
call without tools has the key it always had. Timeouts, retries and
concurrency are never part of a key.

Version 1 (before models took message lists) hashed a judge's one prompt instead of
messages; stores written then are still read: `LegacyKeyMaker` computes the version-1
key of a judge call, which the ledger tries when the store holds version-1 keys.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import orjson

from chatjudge.chat.types import Message

KEY_VERSION = 2


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


class KeyMaker:
    """Computes call keys for one (model, settings, schema) combination."""

    __slots__ = ("_prefix",)

    def __init__(
        self, identity: dict[str, Any], settings: dict[str, Any], schema: dict[str, Any] | None
    ) -> None:
        static = {"v": KEY_VERSION, "model": identity, "settings": settings, "schema": schema}
        self._prefix = hashlib.sha256(_canonical(static))

    def key(
        self, messages: list[Message], sample: int, tools: list[dict[str, Any]] | None = None
    ) -> str:
        h = self._prefix.copy()
        h.update(b"\x00sample:%d\x00" % sample)
        h.update(orjson.dumps([_said(m) for m in messages]))
        if tools:
            h.update(b"\x00tools:" + orjson.dumps(tools, option=orjson.OPT_SORT_KEYS))
        return h.hexdigest()


def _said(message: Message) -> list[Any]:
    """What of a message goes into its call's key: role and content, and its tool calls or
    the id of the call it answers (the calls' ids included: the model reads them)."""
    if "tool_calls" not in message and "tool_call_id" not in message:
        return [message["role"], message["content"]]
    return [
        message["role"],
        message["content"],
        message.get("tool_calls"),
        message.get("tool_call_id"),
    ]


class LegacyKeyMaker:
    """Version-1 keys of judge calls, exactly as chatjudge 0.1 computed them."""

    __slots__ = ("_prefix",)

    def __init__(
        self, identity: dict[str, Any], settings: dict[str, Any], schema: dict[str, Any]
    ) -> None:
        static = {"v": 1, "judge": identity, "settings": settings, "schema": schema}
        self._prefix = hashlib.sha256(_canonical(static))

    def key(self, prompt: str, sample: int) -> str:
        h = self._prefix.copy()
        h.update(b"\x00sample:%d\x00" % sample)
        h.update(prompt.encode())
        return h.hexdigest()
