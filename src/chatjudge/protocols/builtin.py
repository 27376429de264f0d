"""The two built-in protocols, their templates loaded from package data.

The template files are byte-for-byte copies of the seeds. Loading applies exactly
two normalizations, and nothing else:
  1. `interactivity_accuracy.txt`: the mojibake `100Â°C` becomes `100°C`.
  2. `pairwise_chat_quality.txt`: the trailing source-code comment
     `  // candidate_model_response` after `{response}` is dropped.
"""

from __future__ import annotations

from importlib.resources import files

from chatjudge.protocols.spec import (
    BASELINE,
    CANDIDATE,
    TIE,
    ChoiceSpec,
    FieldSpec,
    MetricSpec,
    Protocol,
    ScoreSpec,
)

_MOJIBAKE = ("100Â°C", "100°C")
_SOURCE_COMMENT = "{response}  // candidate_model_response"


def load_template(filename: str) -> str:
    """Read a shipped template and apply the two documented normalizations."""
    text = files("chatjudge.protocols").joinpath("templates", filename).read_text("utf-8")
    if filename == "interactivity_accuracy.txt":
        text = text.replace(*_MOJIBAKE)
    elif filename == "pairwise_chat_quality.txt":
        text = text.replace(_SOURCE_COMMENT, "{response}")
    return text


INTERACTIVITY_INSTRUCTION = """

Reply with the JSON object only, exactly in this shape and with no other text:
{"interactivity": {"thought": "...", "score": 1 or 2 or 3}, "accuracy": {"thought": "...", "score": 0 or 1}}"""  # noqa: E501

PAIRWISE_INSTRUCTION = """

# Output format
Reply with one JSON object only, exactly in this shape and with no other text:
{"explanation": "<your step-by-step reasoning>", "pairwise_choice": "A" or "SAME" or "B"}"""


def interactivity_accuracy() -> Protocol:
    return Protocol(
        name="interactivity-accuracy",
        description="Pointwise, with reference (CollabLLM): interactivity 1-3 and accuracy 0/1.",
        kind="pointwise",
        template=load_template("interactivity_accuracy.txt"),
        fields=(
            FieldSpec(
                name="chat_history",
                required=False,
                conversation=True,
                description="earlier conversation, may be empty",
            ),
            FieldSpec(name="chat", conversation=True, description="follow-up conversation"),
            FieldSpec(name="question", description="target question"),
            FieldSpec(name="answer", description="ground-truth answer"),
        ),
        scores=(
            ScoreSpec(
                name="interactivity",
                path="interactivity.score",
                min=1,
                max=3,
                rationale="interactivity.thought",
            ),
            ScoreSpec(
                name="accuracy", path="accuracy.score", min=0, max=1, rationale="accuracy.thought"
            ),
        ),
        metrics=(
            MetricSpec(
                name="interactivity",
                source="interactivity",
                description="mean interactivity score (1-3)",
            ),
            MetricSpec(
                name="itr",
                source="interactivity",
                offset=-2.5,
                scale=200.0,
                description="interactivity rate: mean of (score - 2.5) * 2, times 100",
            ),
            MetricSpec(name="accuracy", source="accuracy", description="share of correct answers"),
        ),
        output_instruction=INTERACTIVITY_INSTRUCTION,
    )


def pairwise_chat_quality() -> Protocol:
    return Protocol(
        name="pairwise-chat-quality",
        description="Pairwise (Vertex AI multi-turn chat quality): candidate B vs baseline A.",
        kind="pairwise",
        template=load_template("pairwise_chat_quality.txt"),
        fields=(
            FieldSpec(
                name="history",
                required=False,
                conversation=True,
                description="conversation history",
            ),
            FieldSpec(name="prompt", conversation=True, description="current user prompt"),
            FieldSpec(
                name="baseline_model_response",
                empty_ok=True,
                description="baseline, shown as Response A",
                trajectory="baseline_trajectory",
            ),
            FieldSpec(
                name="response",
                empty_ok=True,
                description="candidate, shown as Response B",
                trajectory="response_trajectory",
            ),
        ),
        choice=ChoiceSpec(options={"A": BASELINE, "SAME": TIE, "B": CANDIDATE}),
        metrics=(
            MetricSpec(name="candidate_win_rate", source="pairwise_choice", equals=CANDIDATE),
            MetricSpec(name="baseline_win_rate", source="pairwise_choice", equals=BASELINE),
            MetricSpec(name="tie_rate", source="pairwise_choice", equals=TIE),
        ),
        swap=("baseline_model_response", "response"),
        output_instruction=PAIRWISE_INSTRUCTION,
    )
