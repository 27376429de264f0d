"""Record examples/traces/otel-agent.jsonl: the support assistant of an online shop, which
looks orders up, tracks parcels and reads the shop's policies through tools, written with
the official `openai` client and instrumented by `openinference-instrumentation-openai`
(which records the tools offered, `llm.tools`, beside the messages, and the session id of
`using_session`), holds six conversations with a stand-in chat server on loopback (a
scripted model that calls the tools: one at a time, two in sequence, two at once); the
tools are plain functions over the app's data; the OpenTelemetry SDK's OTLP JSON file
exporter writes the spans. A span processor copies the user's tier onto every span, as in
record.py, for `gate --by user.tier`.

    pip install -e '.[test]'      # the instrumentation and the exporter
    python examples/traces/record_agent.py
"""

from __future__ import annotations

import contextvars
import json
from pathlib import Path
from typing import Any

from record import serve

HERE = Path(__file__).resolve().parent
MODEL = "parcelo-2025-10"
SYSTEM = (
    "You are the support assistant of Parcelo, an online shop. Use the tools to look orders "
    "and parcels up; never guess an order's state. Answer in two sentences at most."
)
TOOLS = [
    {"type": "function", "function": {
        "name": "lookup_order",
        "description": "An order's status, items, carrier and tracking number.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                       "required": ["order_id"]}}},
    {"type": "function", "function": {
        "name": "track_parcel",
        "description": "Where a parcel is now and when it should arrive.",
        "parameters": {"type": "object", "properties": {
            "carrier": {"type": "string"}, "tracking_number": {"type": "string"}},
            "required": ["carrier", "tracking_number"]}}},
    {"type": "function", "function": {
        "name": "shop_policy",
        "description": "The text of one of the shop's policies.",
        "parameters": {"type": "object", "properties": {
            "topic": {"type": "string", "enum": ["returns", "refunds", "delivery"]}},
            "required": ["topic"]}}},
]
ORDERS = {
    "4417": {"status": "shipped", "items": ["trail running shoes"], "carrier": "DHL",
             "tracking_number": "JD014600004417"},
    "5120": {"status": "delivered", "items": ["wireless headphones"], "delivered_on": "2025-10-02"},
    "3308": {"status": "processing", "items": ["espresso machine"]},
}
PARCELS = {"JD014600004417": {"location": "Leipzig hub", "expected": "2025-10-11"}}
POLICIES = {
    "returns": "Items can be returned within 30 days of delivery, unused or opened; "
               "electronics must come back with all accessories.",
    "refunds": "Refunds go to the original payment method within 5 business days of the "
               "return reaching the warehouse.",
    "delivery": "Standard delivery takes 2-4 business days once an order has shipped.",
}


def lookup_order(order_id: str) -> dict[str, Any]:
    return ORDERS.get(order_id, {"error": f"no order {order_id}"})


def track_parcel(carrier: str, tracking_number: str) -> dict[str, Any]:
    return {"carrier": carrier, **PARCELS.get(tracking_number, {"error": "unknown parcel"})}


def shop_policy(topic: str) -> str:
    return POLICIES[topic]


FUNCTIONS = {"lookup_order": lookup_order, "track_parcel": track_parcel, "shop_policy": shop_policy}


# (user tier, session id, turns): each turn a user message and what the scripted model does
# with it, step by step: tool calls (name, arguments), then its final text.
CONVERSATIONS: list[tuple[str, str, list[tuple[str, list[Any]]]]] = [
    ("pro", "s-81f2", [
        ("Hi, where is my order 4417?", [
            [("lookup_order", {"order_id": "4417"})],
            [("track_parcel", {"carrier": "DHL", "tracking_number": "JD014600004417"})],
            "Order 4417 shipped with DHL and is at the Leipzig hub; it should arrive on "
            "11 October.",
        ]),
    ]),
    ("free", "s-90c4", [
        ("I'd like to return the headphones from order 5120.", [
            [("lookup_order", {"order_id": "5120"}), ("shop_policy", {"topic": "returns"})],
            "Your headphones were delivered on 2 October, so you can return them until "
            "1 November; include all the accessories.",
        ]),
        ("Will the money go back to my card?", [
            [("shop_policy", {"topic": "refunds"})],
            "Yes: the refund goes to the card you paid with, within 5 business days of the "
            "return reaching our warehouse.",
        ]),
    ]),
    ("pro", "s-12aa", [
        ("Has order 3308 shipped yet?", [
            [("lookup_order", {"order_id": "3308"})],
            "Not yet: order 3308 (an espresso machine) is still being prepared.",
        ]),
        ("How long will delivery take once it ships?", [
            [("shop_policy", {"topic": "delivery"})],
            "Standard delivery takes 2-4 business days once it has shipped.",
        ]),
    ]),
    ("free", "s-3c07", [
        ("Hello! Do you sell gift cards?", [
            "Yes, we sell digital gift cards from 10 to 200 euros, sent by e-mail.",
        ]),
    ]),
    ("pro", "s-77d1", [
        ("What is your return policy for opened electronics?", [
            [("shop_policy", {"topic": "returns"})],
            "Opened electronics can be returned within 30 days of delivery, with all their "
            "accessories.",
        ]),
    ]),
    ("free", "s-4b19", [
        ("Thanks for the help yesterday!", ["You're welcome, happy to help!"]),
        ("Where is order 9999?", [
            [("lookup_order", {"order_id": "9999"})],
            "I can't find an order 9999: could you check the number in your confirmation "
            "e-mail?",
        ]),
    ]),
]
SCRIPT = {text: steps for _, _, turns in CONVERSATIONS for text, steps in turns}
TIER: contextvars.ContextVar[str] = contextvars.ContextVar("tier", default="unknown")


def answer(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The scripted model: the step of the last user message's script that comes after the
    tool results already sent."""
    at = max(i for i, m in enumerate(messages) if m["role"] == "user")
    done = sum(1 for m in messages[at + 1 :] if m["role"] == "assistant")
    step = SCRIPT[messages[at]["content"]][done]
    if isinstance(step, str):
        return {"role": "assistant", "content": step}
    base = len(messages)
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": f"call_{at}_{base}_{k}", "type": "function",
         "function": {"name": name, "arguments": json.dumps(arguments)}}
        for k, (name, arguments) in enumerate(step)
    ]}


def main() -> None:
    import openai
    from openinference.instrumentation import using_session
    from openinference.instrumentation.openai import OpenAIInstrumentor
    from opentelemetry.exporter.otlp.json.file import FileSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    class TierProcessor(SpanProcessor):
        def on_start(self, span: Any, parent_context: Any = None) -> None:
            span.set_attribute("user.tier", TIER.get())

    out = HERE / "otel-agent.jsonl"
    out.unlink(missing_ok=True)
    resource = Resource.create({"service.name": "parcelo-support"})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(TierProcessor())
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(out)))
    OpenAIInstrumentor().instrument(tracer_provider=provider)

    client = openai.OpenAI(base_url=serve(answer, MODEL), api_key="not-a-key", max_retries=0)
    histories: list[list[dict[str, Any]]] = [
        [{"role": "system", "content": SYSTEM}] for _ in CONVERSATIONS
    ]
    longest = max(len(turns) for _, _, turns in CONVERSATIONS)
    for turn in range(longest):  # the conversations' turns interleave, as real users' do
        for c, (tier, session, turns) in enumerate(CONVERSATIONS):
            if turn >= len(turns):
                continue
            TIER.set(tier)
            history = histories[c]
            history.append({"role": "user", "content": turns[turn][0]})
            with using_session(session):
                while True:
                    response = client.chat.completions.create(
                        model=MODEL, messages=history, tools=TOOLS  # type: ignore[arg-type]
                    )
                    reply = response.choices[0].message.model_dump(exclude_none=True)
                    history.append(reply)
                    if not reply.get("tool_calls"):
                        break
                    for call in reply["tool_calls"]:
                        function = FUNCTIONS[call["function"]["name"]]
                        result = function(**json.loads(call["function"]["arguments"]))
                        content = result if isinstance(result, str) else json.dumps(result)
                        history.append(
                            {"role": "tool", "tool_call_id": call["id"], "content": content}
                        )
    provider.shutdown()
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
