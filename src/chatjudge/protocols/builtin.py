"""The two built-in protocols, their templates loaded from package data.

The template files are byte-for-byte copies of the seeds. Loading applies exactly
two normalizations, and nothing else:
  1. `interactivity_accuracy.txt`: the mojibake `100Â°C` becomes `100°C`.
  2. `pairwise_chat_quality.txt`: the trailing source-code comment
     `  // candidate_model_response` after `{response}` is dropped.
"""

from __future__ import annotations

from importlib.resources import files

from chatjudge.chat.fields import CHECKED_TOOLS, EXPECTED_TOOL_CALLS, TRAJECTORY, TRAJECTORY_COLUMNS
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


_CALLS = ("matched_calls", "actual_calls", "expected_calls", "calls_without_result")


def tool_trajectory() -> Protocol:
    """Deterministic: the trajectory's tool calls against `expected_tool_calls`, no judge
    (`chatjudge.trajectories` scores each item)."""
    shares = dict(min=0, max=1, integer=False)
    counts = dict(min=0, max=1_000_000)
    return Protocol(
        name="tool-trajectory",
        description="Deterministic, no judge: the tool calls made against the expected ones "
        "(exact / in-order / any-order / superset / subset).",
        kind="pointwise",
        template="",
        scorer="tool-trajectory",
        fields=(
            FieldSpec(
                name=TRAJECTORY,
                conversation=True,
                description="the assistant's messages, from the first of "
                + ", ".join(TRAJECTORY_COLUMNS),
            ),
            FieldSpec(
                name=EXPECTED_TOOL_CALLS, description='[{"name", "arguments", "compare"?}, ...]'
            ),
            FieldSpec(name="match", required=False, description="the match mode (--match)"),
            FieldSpec(
                name=CHECKED_TOOLS,
                required=False,
                description="the tools checked, names or patterns (--checked-tools)",
            ),
        ),
        scores=(
            ScoreSpec(name="trajectory_match", path="trajectory_match", min=0, max=1),
            ScoreSpec(name="tool_call_precision", path="tool_call_precision", **shares),
            ScoreSpec(name="tool_call_recall", path="tool_call_recall", **shares),
            ScoreSpec(name="tool_call_f1", path="tool_call_f1", **shares),
            *(ScoreSpec(name=name, path=name, **counts) for name in _CALLS),
        ),
        metrics=(
            MetricSpec(
                name="trajectory_match",
                source="trajectory_match",
                description="share of trajectories that match by their mode",
            ),
            MetricSpec(
                name="tool_call_precision",
                source="matched_calls",
                denominator=("actual_calls",),
                description="matched calls / calls made, over all items",
            ),
            MetricSpec(
                name="tool_call_recall",
                source="matched_calls",
                denominator=("expected_calls",),
                description="matched calls / expected calls, over all items",
            ),
            MetricSpec(
                name="tool_call_f1",
                source="matched_calls",
                scale=2.0,
                denominator=("actual_calls", "expected_calls"),
                description="2 matched / (made + expected), over all items",
            ),
            *(
                MetricSpec(
                    name=f"{name}_macro", source=name, description=f"mean of each item's {name}"
                )
                for name in ("tool_call_precision", "tool_call_recall", "tool_call_f1")
            ),
        ),
    )
