"""What one call could cost at most, as `--max-cost-usd` counts it, from the requests a
stand-in server recorded (`record=True`): the bound a budget's spend must end within."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any


def largest_worst_case(
    requests: Iterable[dict[str, Any]], price_in: float, price_out: float
) -> float:
    """The largest worst case (USD) among recorded chat requests: every byte of their
    messages and of their `response_format` as an input token, 8 tokens a message and 8
    more for framing, and `max_tokens` output tokens; prices in USD per million tokens.
    Never below the budget's own bound (`chatjudge.calls.budget`), which counts the
    schema alone."""
    worst = 0.0
    for request in requests:
        body = request["body"]
        messages = body["messages"]
        tokens = sum(len(str(m["content"]).encode()) + 8 for m in messages) + 8
        if body.get("response_format") is not None:
            tokens += len(json.dumps(body["response_format"]).encode())
        worst = max(worst, (tokens * price_in + body["max_tokens"] * price_out) / 1e6)
    return worst
