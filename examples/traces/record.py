"""Record examples/traces/otel-genai.jsonl: a small travel assistant, written with the
official `openai` client and instrumented by `opentelemetry-instrumentation-openai-v2`,
holds six conversations with a stand-in chat server on loopback (scripted replies; one
conversation ends on a turn with a tool call, so that its last turn's row holds production's
trajectory and no history with tools); the OpenTelemetry SDK's OTLP JSON file exporter
writes the spans. examples/traces/record_agent.py records an assistant that calls tools
throughout.

A span processor copies the user's tier onto every span the app starts, as production
apps do with baggage, so that `chatjudge import --keep user.tier` can slice by it.

    pip install -e '.[test]'      # the instrumentation and the exporter
    python examples/traces/record.py
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import web

HERE = Path(__file__).resolve().parent
SYSTEM = "You are Wayfarer, the assistant of a travel agency. Answer in two sentences at most."
# (user tier, the user's messages), each conversation started in this order; their turns
# then interleave, as real users' do.
CONVERSATIONS = [
    ("free", ["Hi! I'm thinking of a long weekend in Lisbon in March.",
              "Great, and which neighbourhood should I stay in?",
              "What will the weather be like there right now?"]),
    ("pro", ["Hi! I'm thinking of a long weekend in Lisbon in March.",
             "Can you book me a table for two at a seafood restaurant?"]),
    ("pro", ["My flight to Oslo got cancelled. What are my rights?",
             "It was Norwegian, and they offered me a voucher.",
             "Can I still ask for the money instead?"]),
    ("free", ["What do I need to travel from Canada to Japan as a tourist?",
              "I'll stay 20 days."]),
    ("pro", ["Suggest a 3-day itinerary for Rome with kids aged 6 and 9.",
             "They love animals, is there something for that?"]),
    ("free", ["Is it safe to drink tap water in Mexico City?",
              "And in restaurants, the ice in drinks?"]),
]
REPLIES = {
    "Hi! I'm thinking of a long weekend in Lisbon in March.":
        "Lovely choice: March in Lisbon is mild, around 17 °C, with fewer crowds. "
        "Would you like tips on where to stay or what to see?",
    "Great, and which neighbourhood should I stay in?":
        "Stay in Chiado or Baixa for walkable sights and trams; Alfama is charming but hilly. "
        "Príncipe Real is quieter, with good restaurants.",
    "Can you book me a table for two at a seafood restaurant?":
        "I can't make bookings, but Cervejaria Ramiro and Marisqueira Azul are popular; "
        "reserve online a few days ahead.",
    "My flight to Oslo got cancelled. What are my rights?":
        "Under EU rule 261/2004 you can choose a refund or rebooking, and get compensation of "
        "250-600 euros unless the cancellation was due to extraordinary circumstances. "
        "Which airline was it?",
    "It was Norwegian, and they offered me a voucher.":
        "You don't have to accept a voucher: Norwegian must offer a cash refund within 7 days "
        "if you ask for it.",
    "Can I still ask for the money instead?":
        "Yes, as long as you haven't used the voucher; send a written refund request citing "
        "rule 261/2004 and keep a copy.",
    "What do I need to travel from Canada to Japan as a tourist?":
        "Canadians need only a valid passport for tourist stays of up to 90 days. "
        "How long are you staying?",
    "I'll stay 20 days.":
        "Then no visa is needed; make sure your passport is valid for your whole stay "
        "and fill in Visit Japan Web before you fly.",
    "Suggest a 3-day itinerary for Rome with kids aged 6 and 9.":
        "Day 1: Colosseum and Forum with a kids' guide; day 2: Villa Borghese and gelato; "
        "day 3: Vatican Museums early, then the Trevi Fountain.",
    "They love animals, is there something for that?":
        "The Bioparco zoo sits inside Villa Borghese, so it fits day 2 perfectly.",
    "Is it safe to drink tap water in Mexico City?":
        "No, drink bottled or filtered water; most hotels provide it.",
    "And in restaurants, the ice in drinks?":
        "Ice in restaurants is usually made from purified water, so it is generally safe.",
}
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather of a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
TIER: contextvars.ContextVar[str] = contextvars.ContextVar("tier", default="unknown")


def answer(messages: list[dict[str, Any]]) -> dict[str, Any]:
    last = messages[-1]
    if last["role"] == "tool":
        weather = json.loads(last["content"])
        text = (f"It's {weather['temp_c']} °C and {weather['sky']} in Lisbon right now; "
                "pack a light jacket for the evenings.")
        return {"role": "assistant", "content": text}
    if "weather" in last["content"]:
        call = {"id": "call_weather_1", "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Lisbon"}'}}
        return {"role": "assistant", "content": None, "tool_calls": [call]}
    return {"role": "assistant", "content": REPLIES[last["content"]]}


def serve(answer: Callable[[list[dict[str, Any]]], dict[str, Any]], model: str) -> str:
    """A stand-in chat-completions server on loopback, in a background thread, answering
    each request's messages with `answer`; its base URL."""
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()

    async def chat(request: web.Request) -> web.Response:
        body = await request.json()
        message = answer(body["messages"])
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        return web.json_response({
            "id": "chatcmpl-example", "object": "chat.completion", "created": 1_760_000_000,
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 40, "total_tokens": 160},
        })

    async def start() -> int:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", chat)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        return runner.addresses[0][1]

    port = asyncio.run_coroutine_threadsafe(start(), loop).result()
    return f"http://127.0.0.1:{port}/v1"


def main() -> None:
    os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"
    import openai
    from opentelemetry.exporter.otlp.json.file import FileSpanExporter
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    class TierProcessor(SpanProcessor):
        def on_start(self, span: Any, parent_context: Any = None) -> None:
            span.set_attribute("user.tier", TIER.get())

    out = HERE / "otel-genai.jsonl"
    out.unlink(missing_ok=True)
    resource = Resource.create({"service.name": "wayfarer", "service.instance.id": "wayfarer-1"})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(TierProcessor())
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(out)))
    OpenAIInstrumentor().instrument(tracer_provider=provider)

    base_url = serve(answer, "wayfarer-2025-09")
    client = openai.OpenAI(base_url=base_url, api_key="not-a-key", max_retries=0)
    histories: list[list[dict[str, Any]]] = [
        [{"role": "system", "content": SYSTEM}] for _ in CONVERSATIONS
    ]
    longest = max(len(messages) for _, messages in CONVERSATIONS)
    for turn in range(longest):
        for c, (tier, messages) in enumerate(CONVERSATIONS):
            if turn >= len(messages):
                continue
            TIER.set(tier)
            history = histories[c]
            history.append({"role": "user", "content": messages[turn]})
            while True:
                response = client.chat.completions.create(
                    model="wayfarer-2025-09", messages=history, tools=[WEATHER_TOOL]
                )
                reply = response.choices[0].message.model_dump(exclude_none=True)
                history.append(reply)
                if not reply.get("tool_calls"):
                    break
                result = {"city": "Lisbon", "temp_c": 18, "sky": "sunny"}
                history.append({"role": "tool", "tool_call_id": reply["tool_calls"][0]["id"],
                                "content": json.dumps(result)})
    provider.shutdown()
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
