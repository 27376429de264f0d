"""The built-in protocols: templates faithful to the seeds, fields, verdict schemas, metrics."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

import pytest

from chatjudge.chat.render import JudgeView
from chatjudge.data import Source, iter_items
from chatjudge.errors import UsageError
from chatjudge.protocols import (
    BASELINE,
    CANDIDATE,
    TIE,
    get_protocol,
    list_protocols,
)

SEEDS = Path(__file__).resolve().parents[2] / ".." / "shared" / "seeds"
SHIPPED = files("chatjudge.protocols").joinpath("templates")

# DESIGN §1: the only two differences allowed between a seed and the loaded template.
NORMALIZATIONS = {
    "interactivity-accuracy": ("interactivity_accuracy.txt", "100Â°C", "100°C"),
    "pairwise-chat-quality": ("pairwise_chat_quality.txt", "  // candidate_model_response", ""),
}


@pytest.mark.parametrize("name", sorted(NORMALIZATIONS))
def test_loaded_template_is_the_seed_with_its_one_normalization(name: str) -> None:
    filename, before, after = NORMALIZATIONS[name]
    seed = (SEEDS / filename).read_bytes().decode("utf-8")
    assert seed.count(before) == 1
    assert get_protocol(name).template == seed.replace(before, after)


@pytest.mark.parametrize("filename", ["interactivity_accuracy.txt", "pairwise_chat_quality.txt"])
def test_shipped_template_files_are_byte_identical_to_the_seeds(filename: str) -> None:
    assert SHIPPED.joinpath(filename).read_bytes() == (SEEDS / filename).read_bytes()


def test_normalized_templates_carry_no_mojibake_or_source_comment() -> None:
    ia = get_protocol("interactivity-accuracy").template
    pw = get_protocol("pairwise-chat-quality").template
    assert "Â" not in ia and "Water boils at 100°C at sea level" in ia
    assert "//" not in pw and pw.endswith("### Response B\n{response}\n")


def test_interactivity_accuracy_fields_and_placeholders() -> None:
    p = get_protocol("interactivity-accuracy")
    assert p.kind == "pointwise"
    assert p.parsed_template.fields == ("chat_history", "chat", "question", "answer")
    assert [(f.name, f.required) for f in p.fields] == [
        ("chat_history", False),
        ("chat", True),
        ("question", True),
        ("answer", True),
    ]
    assert p.required_fields == ("chat", "question", "answer")
    assert {f.name for f in p.fields if f.conversation} == {"chat_history", "chat"}


def test_pairwise_chat_quality_fields_and_placeholders() -> None:
    p = get_protocol("pairwise-chat-quality")
    assert p.kind == "pairwise"
    assert p.parsed_template.fields == ("history", "prompt", "baseline_model_response", "response")
    assert p.required_fields == ("prompt", "baseline_model_response", "response")
    assert p.swap == ("baseline_model_response", "response")


def test_interactivity_accuracy_verdict_schema() -> None:
    def dimension(scores: list[int]) -> dict:
        return {
            "type": "object",
            "properties": {
                "thought": {"type": "string"},
                "score": {"type": "integer", "enum": scores},
            },
            "required": ["thought", "score"],
            "additionalProperties": False,
        }

    assert get_protocol("interactivity-accuracy").verdict_schema == {
        "type": "object",
        "properties": {"interactivity": dimension([1, 2, 3]), "accuracy": dimension([0, 1])},
        "required": ["interactivity", "accuracy"],
        "additionalProperties": False,
    }


def test_pairwise_chat_quality_verdict_schema() -> None:
    assert get_protocol("pairwise-chat-quality").verdict_schema == {
        "type": "object",
        "properties": {
            "explanation": {"type": "string"},
            "pairwise_choice": {"type": "string", "enum": ["A", "SAME", "B"]},
        },
        "required": ["explanation", "pairwise_choice"],
        "additionalProperties": False,
    }


def test_scores_and_metrics() -> None:
    ia = get_protocol("interactivity-accuracy")
    assert ia.score_names == ("interactivity", "accuracy")
    itr = {m.name: m for m in ia.metrics}["itr"]
    # itr = mean of (score - 2.5) * 2, times 100: score 3 is +100, score 2 is -100.
    assert [(s + itr.offset) * itr.scale for s in (3, 2, 1)] == [100.0, -100.0, -300.0]
    assert [m.name for m in ia.metrics] == ["interactivity", "itr", "accuracy"]

    pw = get_protocol("pairwise-chat-quality")
    assert pw.score_names == ("pairwise_choice",)
    assert pw.choice is not None
    assert pw.choice.options == {"A": BASELINE, "SAME": TIE, "B": CANDIDATE}
    assert {m.name: m.equals for m in pw.metrics} == {
        "candidate_win_rate": CANDIDATE,
        "baseline_win_rate": BASELINE,
        "tie_rate": TIE,
    }


def test_output_instructions_describe_the_verdict_shape() -> None:
    ia = get_protocol("interactivity-accuracy").output_instruction
    pw = get_protocol("pairwise-chat-quality").output_instruction
    assert ia.startswith("\n\n") and '"score": 1 or 2 or 3' in ia and '"score": 0 or 1' in ia
    assert pw.startswith("\n\n") and '"pairwise_choice": "A" or "SAME" or "B"' in pw


def test_lookup_by_name() -> None:
    assert [p.name for p in list_protocols()] == [
        "interactivity-accuracy",
        "pairwise-chat-quality",
        "tool-trajectory",
    ]
    assert get_protocol("pairwise-chat-quality") is get_protocol("pairwise-chat-quality")
    p = get_protocol("interactivity-accuracy")
    assert get_protocol(p) is p
    with pytest.raises(UsageError, match="unknown protocol 'pairwise'"):
        get_protocol("pairwise")


# Tool calls reach the judge in the slots only, the template's bytes around them unchanged.

WEATHER_CALL = {
    "role": "assistant",
    "content": "",
    "tool_calls": [
        {
            "id": "w1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Lyon"}'},
        }
    ],
}
WEATHER_RESULT = {"role": "tool", "tool_call_id": "w1", "content": "<b>21 C</b>, clear"}
SHOWN_CALL = '**assistant** called get_weather({"city": "Lyon"})\n**tool** (get_weather) returned: '


@pytest.mark.parametrize("flipped", [False, True])
def test_a_pairwise_prompt_shows_both_trajectories_in_their_slots_only(flipped: bool) -> None:
    protocol = get_protocol("pairwise-chat-quality")
    row = {
        "history": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}],
        "prompt": "Weather in Lyon?",
        "baseline_model_response": "21 C and clear.",
        "baseline_trajectory": [
            WEATHER_CALL,
            WEATHER_RESULT,
            {"role": "assistant", "content": "21 C and clear."},
        ],
        "response": "Clear, 21 C.",
        "response_trajectory": [
            WEATHER_CALL,
            {**WEATHER_RESULT, "content": "x" * 2500},
            {"role": "assistant", "content": "Clear, 21 C."},
        ],
    }
    baseline = SHOWN_CALL + "<b>21 C</b>, clear\n**assistant**: 21 C and clear."
    candidate = (
        SHOWN_CALL + "x" * 2000 + "… [cut 500 of 2,500 characters]\n**assistant**: Clear, 21 C."
    )
    (item,) = iter_items(Source([row]), protocol.fields)
    prompt = protocol.render(item.text, flipped=flipped)
    a, b = (candidate, baseline) if flipped else (baseline, candidate)
    seed = (SEEDS / "pairwise_chat_quality.txt").read_bytes().decode("utf-8")
    assert prompt == (
        seed.replace("  // candidate_model_response", "")
        .replace("{history}", "**user**: Hi\n**assistant**: Hello!")
        .replace("{prompt}", "Weather in Lyon?")
        .replace("{baseline_model_response}", a)
        .replace("{response}", b)
    )
    (final,) = iter_items(Source([row]), protocol.fields, view=JudgeView(judge_sees="final"))
    assert final.text["response"] == "Clear, 21 C."
    assert final.text["baseline_model_response"] == "21 C and clear."
