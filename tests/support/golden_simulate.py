"""A deterministic assistant and simulated user, used to write `simulate` outputs of older
formats and read them back.

Their names (`tests.support.golden_simulate.assistant`, `...user`) are part of the cache
key, so they must not move: tests/fixtures/formats-1/ holds outputs written with them.
"""

from __future__ import annotations

import json
from typing import Any


def assistant(messages: list[dict[str, Any]]) -> str:
    return "answer to " + str(messages[-1]["content"])


def user(messages: list[dict[str, Any]]) -> str:
    """Asks once, then ends after the assistant's first reply."""
    done = "answer to" in str(messages[-1]["content"])
    return json.dumps({"thought": "t", "response": "thanks" if done else "help me", "done": done})
