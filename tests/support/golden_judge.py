"""A deterministic judge function, used to write and re-read run directories across versions.

Its name (`tests.support.golden_judge.verdict`) is part of the cache key, so it must not move:
tests/fixtures/chatjudge-0.1/ holds run directories chatjudge 0.1 wrote with it.
"""

from __future__ import annotations

import json
import zlib


def verdict(prompt: str) -> str:
    """A valid verdict for either built-in protocol, chosen by a checksum of the prompt."""
    n = zlib.crc32(prompt.encode())
    if "pairwise_choice" in prompt or "Response A" in prompt:
        choice = ("A", "B", "SAME")[n % 3]
        return json.dumps({"explanation": f"e{n % 7}", "pairwise_choice": choice})
    return json.dumps(
        {
            "interactivity": {"thought": f"t{n % 5}", "score": 1 + n % 3},
            "accuracy": {"thought": f"a{n % 5}", "score": n % 2},
        }
    )
