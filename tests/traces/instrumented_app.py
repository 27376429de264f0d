"""A production assistant in miniature, run in its own process (instrumentations set global
tracer and logger providers): the official `openai` client, instrumented by one of the real
instrumentations, holds scripted conversations with a chat-completions server, offering it a
tool (two turns call it: one in the middle of a conversation, one that is its last turn),
and the OpenTelemetry SDK exports the spans to an OTLP JSON file with its file exporter.
What the app sent and received is written to a JSON file, for the test to compare the
import with, message for message.

    python -m tests.traces.instrumented_app openai-v2|openai-v2-events|openinference|log \
        --base-url URL --out FILE --sent FILE [--logs FILE]

`openai-v2-events` has openai-v2 write the messages as log records (EVENT_ONLY) to --logs;
`log` is the same app with no instrumentation, writing its own log of chat-completions
calls (request and response, one JSON object per line) to --out.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

SYSTEM = "You are a travel assistant. Be brief."
# Conversations 1 and 2 open identically; their turns interleave in time.
CONVERSATIONS: list[tuple[str | None, list[str]]] = [
    (SYSTEM, ["Hi, I'm planning a trip.", "What's the weather in Paris?", "Thanks!"]),
    (SYSTEM, ["Hi, I'm planning a trip.", "Which museums should I see?"]),
    (None, ["Translate 'hello' into French.", "And into German?"]),
    (SYSTEM, ["Should I take an umbrella? Check the weather."]),
]
SCHEDULE = [(0, 0), (1, 0), (2, 0), (3, 0), (0, 1), (1, 1), (2, 1), (0, 2)]
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather of a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


def configure(instrumentation: str, out: str, logs: str | None) -> list[Any]:
    """Install the SDK's providers with the OTLP JSON file exporters, then the
    instrumentation, with message-content capture switched on (it is off by default);
    returns the providers, to shut down (flushing the files)."""
    from opentelemetry.exporter.otlp.json.file import FileSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    resource = Resource.create({"service.name": "travel-assistant", "deployment.tier": "pro"})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(out)))
    if instrumentation == "openinference":
        from openinference.instrumentation.openai import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(tracer_provider=provider)  # captures content by default
        return [provider]
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor as V2

    os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
    if instrumentation == "openai-v2":  # messages as span attributes
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"
        V2().instrument(tracer_provider=provider)
        return [provider]
    # openai-v2-events: messages in log records linked to the spans, in a file of their own
    from opentelemetry.exporter.otlp.json.file._log_exporter import FileLogExporter
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor

    assert logs is not None, "--logs is needed for openai-v2-events"
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "EVENT_ONLY"
    loggers = LoggerProvider(resource=resource)
    loggers.add_log_record_processor(SimpleLogRecordProcessor(FileLogExporter(logs)))
    V2().instrument(tracer_provider=provider, logger_provider=loggers)
    return [provider, loggers]


def weather(arguments: str) -> str:
    return json.dumps({"city": json.loads(arguments)["city"], "temp_c": 12, "sky": "cloudy"})


def converse(base_url: str, log: Any = None) -> list[list[dict[str, Any]]]:
    """Hold the conversations turn by turn in SCHEDULE order; each conversation's calls as
    {"messages": what was sent, "reply": the assistant message that came back}. `log`: a
    file to write each call's request and response to, as a logging middleware would."""
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="sk-test-not-a-real-key", max_retries=0)
    histories: list[list[dict[str, Any]]] = [
        [{"role": "system", "content": system}] if system else [] for system, _ in CONVERSATIONS
    ]
    calls: list[list[dict[str, Any]]] = [[] for _ in CONVERSATIONS]
    for c, turn in SCHEDULE:
        history = histories[c]
        history.append({"role": "user", "content": CONVERSATIONS[c][1][turn]})
        while True:
            sent = [dict(m) for m in history]
            response = client.chat.completions.create(
                model="assistant-v1",
                messages=sent,
                tools=[WEATHER_TOOL],  # type: ignore[arg-type]
            )
            reply = response.choices[0].message.model_dump(exclude_none=True)
            if log is not None:
                request = {"model": "assistant-v1", "messages": sent, "tools": [WEATHER_TOOL]}
                record = {"request": request, "response": response.model_dump()}
                log.write(json.dumps(record) + "\n")
            calls[c].append({"messages": sent, "reply": reply})
            history.append(reply)
            if not reply.get("tool_calls"):
                break
            for call in reply["tool_calls"]:
                result = weather(call["function"]["arguments"])
                history.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    return calls


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "instrumentation", choices=["openai-v2", "openai-v2-events", "openinference", "log"]
    )
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--sent", required=True)
    parser.add_argument("--logs")
    args = parser.parse_args()
    if args.instrumentation == "log":
        with open(args.out, "w", encoding="utf-8") as log:
            calls = converse(args.base_url, log)
    else:
        providers = configure(args.instrumentation, args.out, args.logs)
        calls = converse(args.base_url)
        for provider in providers:
            provider.shutdown()
    with open(args.sent, "w", encoding="utf-8") as fh:
        json.dump(calls, fh, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
