"""The Google model over real HTTP: `google-genai` against a stand-in Gemini / Vertex AI.

What every provider does alike (verdicts, error statuses, keys, a missing SDK) is checked
in test_contract.py; here is what only Google does: its request shape, its credentials
(Gemini API keys, Vertex AI express mode, application default credentials), RetryInfo,
blocked prompts and its base URL.

Vertex AI with a project runs on application default credentials: a service-account key
file generated here, whose `token_uri` is the stand-in's OAuth endpoint, so the SDK signs
and exchanges a real JWT offline.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from chatjudge.chat.types import GenerationSettings, Message, ModelRequest, OutputSchema
from chatjudge.errors import (
    AuthError,
    BadRequestError,
    ModelError,
    ModelTimeoutError,
    RateLimitError,
    ServerError,
    UsageError,
)
from chatjudge.models import check_options, get_model
from chatjudge.models.google import NO_SIGNATURE, GoogleModel
from chatjudge.options import ClientOptions, RunConfig
from chatjudge.protocols import get_protocol
from chatjudge.verdicts.parse import parse_verdict
from tests.models.conftest import REUSED_IDS, SENT_IDS, TWO_CALLS, WEATHER, Closing
from tests.support.stub_google import ACCESS_TOKEN, GoogleStub

PROTOCOL = get_protocol("pairwise-chat-quality")
SCHEMA = OutputSchema("pairwise_chat_quality", PROTOCOL.verdict_schema, PROTOCOL.output_instruction)
PROMPT = "Compare Response A and Response B. {not a placeholder}"
REQUEST = ModelRequest(
    [{"role": "user", "content": PROMPT}],
    GenerationSettings(temperature=0.0, max_tokens=512, seed=7),
    SCHEMA,
)
RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo"


def model_at(stub: GoogleStub, **options: object) -> GoogleModel:
    return GoogleModel("gemini-x", ClientOptions(base_url=stub.base_url, **options))


@pytest.fixture
def service_account(
    google_stub: GoogleStub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Vertex AI mode with a project, location and a service-account ADC file."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    path = tmp_path / "adc.json"
    path.write_text(
        json.dumps(
            {
                "type": "service_account",
                "project_id": "proj-1",
                "private_key_id": "k1",
                "private_key": pem,
                "client_email": "judge@proj-1.iam.gserviceaccount.com",
                "client_id": "1",
                "token_uri": f"{google_stub.base_url}/token",
            }
        )
    )
    monkeypatch.delenv("GEMINI_API_KEY")
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "proj-1")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
    return path


async def test_gemini_api_request_carries_prompt_schema_and_settings(
    closing: Closing, google_stub: GoogleStub
) -> None:
    model = closing(model_at(google_stub))
    reply = await model.generate(REQUEST)

    [sent] = google_stub.requests
    assert sent.model == "gemini-x" and sent.project is None
    assert sent.path == f"/{sent.version}/models/gemini-x:generateContent"
    # one user message goes as plain text, as it was given (no instruction appended)
    assert sent.body["contents"] == [{"role": "user", "parts": [{"text": PROMPT}]}]
    assert "systemInstruction" not in sent.body
    config = sent.body["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"] == PROTOCOL.verdict_schema  # additionalProperties kept
    assert (config["temperature"], config["maxOutputTokens"], config["seed"]) == (0.0, 512, 7)

    assert reply.input_tokens == len(json.dumps(sent.body["contents"])) // 4
    assert reply.output_tokens == len(reply.text) // 4 + 5  # candidates + thoughts


async def test_system_text_is_the_system_instruction_and_turns_are_user_and_model(
    closing: Closing, google_stub: GoogleStub
) -> None:
    messages: list[Message] = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello."},
        {"role": "system", "content": "Answer in French."},
        {"role": "user", "content": "Capital of Italy?"},
    ]
    google_stub.reply_text = "Rome."
    model = closing(model_at(google_stub))
    reply = await model.generate(ModelRequest(messages))  # a model under test: no schema

    [sent] = google_stub.requests
    system = sent.body["systemInstruction"]
    assert [p["text"] for p in system["parts"]] == ["You are terse.\n\nAnswer in French."]
    assert sent.body["contents"] == [
        {"role": "user", "parts": [{"text": "Hi"}]},
        {"role": "model", "parts": [{"text": "Hello."}]},
        {"role": "user", "parts": [{"text": "Capital of Italy?"}]},
    ]
    config = sent.body["generationConfig"]
    assert "responseJsonSchema" not in config and "responseMimeType" not in config
    assert "seed" not in config  # none was set
    assert reply.text == "Rome."


async def test_google_api_key_and_identity(
    closing: Closing, google_stub: GoogleStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GEMINI_API_KEY")
    monkeypatch.setenv("GOOGLE_API_KEY", google_stub.api_key)
    model = closing(get_model("google/gemini-x", ClientOptions(base_url=google_stub.base_url)))
    assert isinstance(model, GoogleModel)
    assert model.name == "google/gemini-x"
    assert model.identity() == {
        "provider": "google",
        "model": "gemini-x",
        "backend": "gemini-api",
        "base_url": google_stub.base_url,
    }
    assert (model.supports_schema, model.needs_key) == (True, True)
    await model.generate(REQUEST)
    assert google_stub.requests[-1].headers["x-goog-api-key"] == google_stub.api_key


async def test_vertex_express_mode_uses_the_api_key(
    closing: Closing, google_stub: GoogleStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    model = closing(model_at(google_stub))
    assert model.identity()["backend"] == "vertex-ai"
    reply = await model.generate(REQUEST)
    [sent] = google_stub.requests
    assert sent.path == "/v1beta1/publishers/google/models/gemini-x:generateContent"
    assert sent.headers["x-goog-api-key"] == google_stub.api_key
    assert sent.body["generationConfig"]["responseJsonSchema"] == PROTOCOL.verdict_schema
    parse_verdict(reply.text, PROTOCOL)


async def test_vertex_with_project_uses_its_path_and_default_credentials(
    closing: Closing, google_stub: GoogleStub, service_account: Path
) -> None:
    model = closing(get_model("google/gemini-x", ClientOptions(base_url=google_stub.base_url)))
    assert model.credentials_found()  # no key, but Vertex AI settings: get_model lets it through
    reply = await model.generate(REQUEST)
    await model.generate(REQUEST)

    first, second = google_stub.requests
    assert first.path == (
        "/v1beta1/projects/proj-1/locations/us-central1/publishers/google/"
        "models/gemini-x:generateContent"
    )
    assert first.headers["Authorization"] == f"Bearer {ACCESS_TOKEN}"
    assert "x-goog-api-key" not in first.headers
    assert second.headers["Authorization"] == f"Bearer {ACCESS_TOKEN}"
    [token_request] = google_stub.token_requests  # one JWT exchange, the token reused
    assert token_request["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    parse_verdict(reply.text, PROTOCOL)


async def test_vertex_without_default_credentials_is_fatal(
    closing: Closing,
    google_stub: GoogleStub,
    service_account: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NO_GCE_CHECK", "true")
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS")
    model = closing(model_at(google_stub))
    with pytest.raises(AuthError, match="credentials") as info:
        await model.generate(REQUEST)
    assert info.value.fatal
    assert google_stub.requests == []


async def test_a_rejected_api_key_is_fatal(
    closing: Closing, google_stub: GoogleStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-wrong")
    model = closing(model_at(google_stub))
    with pytest.raises(AuthError, match="API key not valid") as info:  # a 400, by its reason
        await model.generate(REQUEST)
    assert info.value.fatal and info.value.status == 400


@pytest.mark.parametrize(
    ("code", "status", "expected", "retryable"),
    [
        (504, "DEADLINE_EXCEEDED", ServerError, True),
        (404, "NOT_FOUND", BadRequestError, False),
        (400, "RESOURCE_EXHAUSTED", RateLimitError, True),  # by its status name
        (400, "UNAUTHENTICATED", AuthError, False),
    ],
)
async def test_other_errors_map_by_code_and_status_name(
    closing: Closing,
    google_stub: GoogleStub,
    code: int,
    status: str,
    expected: type[ModelError],
    retryable: bool,
) -> None:
    google_stub.fail_next(code, f"stub says {status}", status=status, times=5)
    model = closing(model_at(google_stub))
    with pytest.raises(expected) as info:
        await model.generate(REQUEST)
    assert type(info.value) is expected
    assert info.value.retryable is retryable
    assert info.value.status == code
    assert f"{code} {status}: stub says {status}" in str(info.value)
    assert len(google_stub.requests) == 1  # one attempt: the run engine owns retries


async def test_rate_limit_delay_from_retry_info_before_the_header(
    closing: Closing, google_stub: GoogleStub
) -> None:
    model = closing(model_at(google_stub))
    google_stub.fail_next(
        429,
        "Resource has been exhausted (e.g. check quota).",
        details=[
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []},
            {"@type": RETRY_INFO, "retryDelay": "7s"},
        ],
        headers={"retry-after": "30"},
    )
    with pytest.raises(RateLimitError) as info:
        await model.generate(REQUEST)
    assert info.value.retry_after == 7.0

    google_stub.fail_next(429, "Quota exceeded.")  # neither: the engine decides
    with pytest.raises(RateLimitError) as info:
        await model.generate(REQUEST)
    assert info.value.retry_after is None


async def test_the_sdk_client_gets_the_timeout(closing: Closing, google_stub: GoogleStub) -> None:
    google_stub.delay = 5.0
    slow = closing(model_at(google_stub, timeout=0.3))
    with pytest.raises(ModelTimeoutError) as info:
        await slow.generate(REQUEST)  # no policy around it: the SDK's own timeout fired
    assert info.value.retryable
    assert len(google_stub.requests) == 1


async def test_a_blocked_prompt_is_a_bad_request(closing: Closing, google_stub: GoogleStub) -> None:
    google_stub.blocked = "PROHIBITED_CONTENT"
    model = closing(model_at(google_stub))
    with pytest.raises(BadRequestError, match="PROHIBITED_CONTENT") as info:
        await model.generate(REQUEST)
    assert not info.value.retryable


async def test_base_url_is_one_at_most_and_optional(
    closing: Closing, google_stub: GoogleStub
) -> None:
    two = ClientOptions(base_url=(google_stub.base_url, google_stub.base_url))
    with pytest.raises(UsageError, match="google models take one --base-url, not 2"):
        get_model("google/gemini-x", two)
    default = closing(get_model("google/gemini-x"))  # the SDK's own endpoint, not called here
    assert default.identity()["base_url"] is None
    assert default.identity()["backend"] == "gemini-api"
    check_options([default], RunConfig.from_options({"temperature": 0.5, "seed": 3}))
    assert google_stub.requests == []


async def test_tools_go_as_function_declarations_and_calls_and_results_as_parts(
    closing: Closing, google_stub: GoogleStub
) -> None:
    model = closing(model_at(google_stub))
    reply = await model.generate(ModelRequest(TWO_CALLS, tools=[WEATHER]))

    [sent] = google_stub.requests  # a 400 had the stand-in found Gemini's rules broken
    [tool] = sent.body["tools"]
    [declaration] = tool["functionDeclarations"]
    # The SDK writes this field's proto name, which the API reads as `parametersJsonSchema`.
    schema = declaration.pop("parameters_json_schema", None) or declaration.pop(
        "parametersJsonSchema"
    )
    assert schema == WEATHER["function"]["parameters"]  # JSON Schema, as the row holds it
    assert declaration == {"name": "weather", "description": "Today's weather in a city."}
    assert [p["text"] for p in sent.body["systemInstruction"]["parts"]] == ["Use the tools."]
    assert sent.body["contents"] == [
        {"role": "user", "parts": [{"text": "Weather in Oslo and Rome?"}]},
        {
            "role": "model",
            "parts": [
                {"text": "Checking both."},
                {
                    "functionCall": {"id": "c1", "name": "weather", "args": {"city": "Oslo"}},
                    "thoughtSignature": NO_SIGNATURE,  # Google's documented placeholder
                },
                {
                    "functionCall": {  # arguments that are not JSON, sent as recorded
                        "id": "c2",
                        "name": "weather",
                        "args": {"unparsed_arguments": "{city: Rome"},
                    },
                    "thoughtSignature": NO_SIGNATURE,
                },
            ],
        },
        {  # one turn of responses, named after the calls they answer
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "id": "c1",
                        "name": "weather",
                        "response": {"output": "Sunny, 21 C"},
                    }
                },
                {  # a result that is a JSON object goes as that object
                    "functionResponse": {
                        "id": "c2",
                        "name": "weather",
                        "response": {"sky": "rain", "temp_c": 17},
                    }
                },
            ],
        },
        {"role": "user", "parts": [{"text": "And tomorrow?"}]},
    ]
    (call,) = reply.tool_calls  # a new user turn: the stand-in calls again, with step 1
    assert call.id.startswith("fc_") and call.name == "weather"
    assert json.loads(call.arguments) == {"query": "And tomorrow?", "step": 1}
    assert reply.text == ""


async def test_calls_without_ids_are_numbered_across_the_conversation(
    closing: Closing, google_stub: GoogleStub
) -> None:
    """The Gemini API may give calls no id: `call_N` counts the conversation's calls, so a
    later step's call never takes an earlier one's id, and its result finds its name."""
    google_stub.call_ids = False
    model = closing(model_at(google_stub))
    messages: list[Message] = [*TWO_CALLS]
    ids = []
    for _ in range(2):
        reply = await model.generate(ModelRequest(messages, tools=[WEATHER]))
        (call,) = reply.tool_calls
        ids.append(call.id)
        messages += [
            {"role": "assistant", "content": "", "tool_calls": [call.as_openai()]},
            {"role": "tool", "tool_call_id": call.id, "content": f"Snow ({call.id})"},
        ]
    final = await model.generate(ModelRequest(messages, tools=[WEATHER]))

    assert ids == ["call_3", "call_4"]  # TWO_CALLS holds two calls already
    last = google_stub.requests[-1].body["contents"]
    assert last[-1]["parts"][0]["functionResponse"]["id"] == "call_4"
    assert final.text == "From the tool: Snow (call_3) | Snow (call_4)"


async def test_a_result_holding_nan_goes_as_valid_json(
    closing: Closing, google_stub: GoogleStub
) -> None:
    """The SDK would write a NaN read from the result as `NaN`, which is not JSON."""
    messages: list[Message] = [*TWO_CALLS]
    messages[4] = {**messages[4], "content": '{"sky": "rain", "temp_c": NaN, "p": [-Infinity]}'}
    await closing(model_at(google_stub)).generate(ModelRequest(messages, tools=[WEATHER]))
    [sent] = google_stub.requests
    response = sent.body["contents"][2]["parts"][1]["functionResponse"]["response"]
    assert response == {"sky": "rain", "temp_c": None, "p": [None]}


async def test_a_result_answering_no_call_is_a_bad_request_before_sending(
    closing: Closing, google_stub: GoogleStub
) -> None:
    orphan: list[Message] = [*TWO_CALLS[:5], {"role": "tool", "tool_call_id": "c9", "content": "?"}]
    model = closing(model_at(google_stub))
    with pytest.raises(BadRequestError, match="answers no call in the conversation \\('c9'\\)"):
        await model.generate(ModelRequest(orphan, tools=[WEATHER]))
    assert google_stub.requests == []


async def test_a_call_without_a_thought_signature_is_refused_as_gemini_3_refuses_it(
    google_stub: GoogleStub,
) -> None:
    """The stand-in holds Gemini 3's rule, so the round trips above can fail."""
    from google import genai
    from google.genai import errors, types

    client = genai.Client(
        api_key=google_stub.api_key, http_options={"base_url": google_stub.base_url}
    )
    call = types.Part(function_call=types.FunctionCall(id="c1", name="weather", args={}))
    answer = types.Part(
        function_response=types.FunctionResponse(id="c1", name="weather", response={"output": "x"})
    )
    with pytest.raises(errors.ClientError, match="missing a thought_signature"):
        await client.aio.models.generate_content(
            model="gemini-x",
            contents=[
                types.Content(role="user", parts=[types.Part(text="Weather?")]),
                types.Content(role="model", parts=[call]),
                types.Content(role="user", parts=[answer]),
            ],
        )
    await client.aio.aclose()


async def test_ids_reused_or_missing_are_sent_as_ids_of_their_own(
    closing: Closing, google_stub: GoogleStub
) -> None:
    google_stub.tool_steps = 4
    model = closing(model_at(google_stub))
    await model.generate(ModelRequest(REUSED_IDS, tools=[WEATHER]))
    parts = [p for c in google_stub.requests[-1].body["contents"][1:] for p in c["parts"]]
    assert [p["functionCall"]["id"] for p in parts if "functionCall" in p] == SENT_IDS
    answers = [p["functionResponse"] for p in parts if "functionResponse" in p]
    assert [a["id"] for a in answers] == SENT_IDS
    assert [a["response"] for a in answers] == [{"output": t} for t in ("Sunny", "Rain", "Snow")]
