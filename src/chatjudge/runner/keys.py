"""Cache keys: a versioned SHA-256 over canonical JSON of what changes a judge's reply.

Judge identity (provider, model, base URLs), generation settings and the verdict
schema are hashed once per judge into a prefix; each call adds only its prompt
and sample index. Timeouts, retries and concurrency are never part of a key.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

KEY_VERSION = 1


class KeyMaker:
    """Computes call keys for one (judge, settings, schema) combination."""

    __slots__ = ("_prefix",)

    def __init__(self, identity: dict[str, Any], settings: dict[str, Any], schema: dict[str, Any]):
        static = {"v": KEY_VERSION, "judge": identity, "settings": settings, "schema": schema}
        canonical = json.dumps(static, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        self._prefix = hashlib.sha256(canonical.encode())

    def key(self, prompt: str, sample: int) -> str:
        h = self._prefix.copy()
        h.update(b"\x00sample:%d\x00" % sample)
        h.update(prompt.encode())
        return h.hexdigest()
