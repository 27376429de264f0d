"""A stand-in for the next version of the Parcelo support assistant of `otel-agent.jsonl`,
as a chat-completions server on loopback: `make demo-agent` lets it answer each imported
conversation's last user turn with `chatjudge generate --tool-replay`, since the embedded
local model cannot call tools.

It is scripted, as the recorded assistant was, but differently: it calls the tools it
needs (some calls as production made them, one production never made, whose result the
recording cannot give), and words its answer from the results the tools return, so what
it says rests on the replayed results.

    python examples/traces/candidate_agent.py URL_FILE    # writes its base URL there, serves
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from record import serve

MODEL = "parcelo-next"
Call = tuple[str, dict[str, Any]]


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _order(results: list[str]) -> str:
    order, parcel = (_json(r) or {} for r in results)
    if "location" not in parcel:
        return "I could not track that parcel just now; please try again in a moment."
    return (f"Your {', '.join(order.get('items', ['order']))} left with {parcel['carrier']} and "
            f"are at the {parcel['location']} now, due on {parcel['expected']}.")


def _policy(results: list[str]) -> str:
    return f"Here is our policy: {results[-1]}"


def _gift_cards(results: list[str]) -> str:
    if _json(results[0]) is None and "no recorded result" in results[0].lower():
        return "I could not check our gift-card offer just now: please see the shop's FAQ."
    return f"Our policy says: {results[0]}"


def _missing(results: list[str]) -> str:
    found = _json(results[0]) or {}
    if "error" in found:
        return "I can't find order 9999; please check the number in your confirmation e-mail."
    return f"Order 9999 is {found.get('status', 'unknown')}."


# The last user message -> the steps (each a list of calls) and how the answer is worded.
SCRIPT: dict[str, tuple[list[list[Call]], Callable[[list[str]], str]]] = {
    "Hi, where is my order 4417?": (
        [[("lookup_order", {"order_id": "4417"})],
         [("track_parcel", {"carrier": "DHL", "tracking_number": "JD014600004417"})]],
        _order,
    ),
    "Will the money go back to my card?": ([[("shop_policy", {"topic": "refunds"})]], _policy),
    "How long will delivery take once it ships?": (
        [[("lookup_order", {"order_id": "3308"}), ("shop_policy", {"topic": "delivery"})]],
        _policy,
    ),
    "Hello! Do you sell gift cards?": ([[("shop_policy", {"topic": "gift cards"})]], _gift_cards),
    "What is your return policy for opened electronics?": (
        [[("shop_policy", {"topic": "returns"})]],
        _policy,
    ),
    "Where is order 9999?": ([[("lookup_order", {"order_id": "9999"})]], _missing),
}


def answer(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The next step for the last user message: the calls not made yet, then the answer."""
    at = max(i for i, m in enumerate(messages) if m["role"] == "user")
    steps, word = SCRIPT.get(messages[at]["content"], ([], lambda _: "How can I help?"))
    after = messages[at + 1 :]
    done = sum(1 for m in after if m["role"] == "assistant")
    if done < len(steps):
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{done}_{k}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(arguments)}}
            for k, (name, arguments) in enumerate(steps[done])
        ]}  # fmt: skip
    results = [str(m.get("content") or "") for m in after if m["role"] == "tool"]
    return {"role": "assistant", "content": word(results)}


def main() -> None:
    url_file = Path(sys.argv[1])
    url_file.write_text(serve(answer, MODEL))
    threading.Event().wait()  # until killed


if __name__ == "__main__":
    main()
