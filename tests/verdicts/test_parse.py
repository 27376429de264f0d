"""The tolerant verdict parser on messy, realistic judge replies: right verdict or VerdictError."""

from __future__ import annotations

import pytest

from chatjudge.errors import VerdictError
from chatjudge.protocols import BASELINE, CANDIDATE, TIE, ChoiceSpec, get_protocol
from chatjudge.protocols.spec import FieldSpec, Protocol, ScoreSpec
from chatjudge.verdicts import parse_verdict

IA = get_protocol("interactivity-accuracy")
PW = get_protocol("pairwise-chat-quality")

# --- interactivity-accuracy -------------------------------------------------------------

IA_CLEAN = (
    '{"interactivity": {"thought": "The assistant asked for the tank capacity before solving.",'
    ' "score": 3}, "accuracy": {"thought": "Final answer 60 minutes matches the ground truth.",'
    ' "score": 1}}'
)

IA_OK = {
    "clean JSON": IA_CLEAN,
    "GPT-style fenced JSON with prose around": (
        "Here is my evaluation of the follow-up conversation.\n\n```json\n{\n"
        '  "interactivity": {"thought": "The assistant asks which year the trip is, a relevant'
        ' clarification, but does not confirm the arrival airport.", "score": 2},\n'
        '  "accuracy": {"thought": "The assistant says 11:00 am; the ground truth is 12:00 noon'
        ' PDT.", "score": 0}\n}\n```\n\nLet me know if you need anything else.'
    ),
    "Llama-style preamble and afterword around a bare object": (
        "Sure! After carefully reviewing the follow-up conversation, here is my evaluation:\n\n"
        '{"interactivity": {"thought": "No clarifying questions, but none were needed.",'
        ' "score": 2}, "accuracy": {"thought": "7.31 g is consistent with the ground truth.",'
        ' "score": 1}}\n\n'
        "I hope this evaluation is helpful. The assistant performed well overall."
    ),
    "single quotes": (
        "{'interactivity': {'thought': 'It asked for the weight and the bottle strength',"
        " 'score': 3}, 'accuracy': {'thought': 'It said 10 mL, which matches', 'score': 1}}"
    ),
    "trailing commas": (
        '{\n  "interactivity": {"thought": "Low engagement.", "score": 1,},\n'
        '  "accuracy": {"thought": "WHERE COUNT(*) is invalid SQL.", "score": 0,},\n}'
    ),
    "scores as strings": (
        '{"interactivity": {"thought": "Some follow-up.", "score": "2"},'
        ' "accuracy": {"thought": "Correct.", "score": "1"}}'
    ),
    "unescaped double quotes inside a thought": (
        '{"interactivity": {"thought": "It said "You\'re right" and changed its answer.",'
        ' "score": 1}, "accuracy": {"thought": "Final answer 20 C is wrong.", "score": 0}}'
    ),
    "truncated after the last score (object not closed)": (
        '{"interactivity": {"thought": "Asked one question.", "score": 2},'
        ' "accuracy": {"thought": "Matches.", "score": 0}'
    ),
}

IA_EXPECTED = {
    "clean JSON": (3, 1),
    "GPT-style fenced JSON with prose around": (2, 0),
    "Llama-style preamble and afterword around a bare object": (2, 1),
    "single quotes": (3, 1),
    "trailing commas": (1, 0),
    "scores as strings": (2, 1),
    "unescaped double quotes inside a thought": (1, 0),
    "truncated after the last score (object not closed)": (2, 0),
}


@pytest.mark.parametrize("case", sorted(IA_OK))
def test_interactivity_accuracy_replies_that_parse(case: str) -> None:
    verdict = parse_verdict(IA_OK[case], IA)
    interactivity, accuracy = IA_EXPECTED[case]
    assert verdict.scores == {"interactivity": interactivity, "accuracy": accuracy}
    assert all(isinstance(v, int) for v in verdict.scores.values())
    assert verdict.label is None
    assert set(verdict.rationale) == {"interactivity", "accuracy"}


def test_rationales_are_kept() -> None:
    verdict = parse_verdict(IA_CLEAN, IA)
    assert verdict.rationale == {
        "interactivity": "The assistant asked for the tank capacity before solving.",
        "accuracy": "Final answer 60 minutes matches the ground truth.",
    }


IA_FAIL = {
    "a boolean score": IA_CLEAN.replace('"score": 3', '"score": true'),
    "empty reply": "",
    "whitespace only": "  \n\n ",
    "prose only": "The assistant was quite interactive and its answer was correct. Score: 3 and 1.",
    "interactivity out of range": IA_CLEAN.replace('"score": 3', '"score": 4'),
    "accuracy out of range": IA_CLEAN.replace('"score": 1}}', '"score": 2}}'),
    "fractional score": IA_CLEAN.replace('"score": 3', '"score": 2.5'),
    "fractional score as a string": IA_CLEAN.replace('"score": 3', '"score": "2.5"'),
    "score as a word": IA_CLEAN.replace('"score": 3', '"score": "high"'),
    "score missing": IA_CLEAN.replace(', "score": 1}}', "}}"),
    "echoed template placeholder": IA_CLEAN.replace('"score": 3', '"score": <score>'),
    "truncated mid-string": IA_CLEAN[: IA_CLEAN.index("matches the") + 5],
    "truncated mid-object, before the accuracy score": IA_CLEAN[: IA_CLEAN.rindex('"score"')],
    "truncated right after a digit": IA_CLEAN[: IA_CLEAN.rindex("1}}") + 1],
    "wrapped in another object": '{"evaluation": ' + IA_CLEAN + "}",
}


@pytest.mark.parametrize("case", sorted(IA_FAIL))
def test_interactivity_accuracy_replies_that_fail(case: str) -> None:
    with pytest.raises(VerdictError, match="no valid verdict"):
        parse_verdict(IA_FAIL[case], IA)


def test_failure_message_says_what_was_wrong() -> None:
    with pytest.raises(VerdictError, match="interactivity.score"):
        parse_verdict(IA_FAIL["interactivity out of range"], IA)
    with pytest.raises(VerdictError, match="no JSON object"):
        parse_verdict("", IA)


# --- pairwise-chat-quality ---------------------------------------------------------------

PW_OK = {
    "clean JSON": (
        '{"explanation": "Response B respects the vegetarian constraint; A suggests chicken.",'
        ' "pairwise_choice": "B"}',
        "B",
    ),
    "GPT-style fenced JSON": (
        "```json\n{\n"
        '  "explanation": "Both responses give the correct status code with similar detail.",\n'
        '  "pairwise_choice": "SAME"\n}\n```',
        "SAME",
    ),
    "Llama-style preamble, bare object, afterword": (
        "**Evaluation**\n\nI have reviewed the conversation history. Response A stays within the"
        " 800 euro budget while Response B recommends a 2,400 euro laptop.\n\n"
        '{"explanation": "A follows the budget stated earlier; B ignores it.",'
        ' "pairwise_choice": "A"}\n\nIn conclusion, Response A is better.',
        "A",
    ),
    "lowercase label": (
        '{"explanation": "B is grounded in the policy.", "pairwise_choice": "b"}',
        "B",
    ),
    "label in markdown bold inside JSON": (
        '{"explanation": "B is concise.", "pairwise_choice": "**B**"}',
        "B",
    ),
    "single quotes and trailing comma": (
        "{'explanation': 'Response A doesn\\'t invent decisions', 'pairwise_choice': 'A',}",
        "A",
    ),
    "braces and code in the explanation": (
        "```json\n"
        '{"explanation": "A suggests f\\"\\\\{x\\\\}\\", which is wrong; B correctly says'
        ' {{ gives { and }} gives }.", "pairwise_choice": "B"}\n```',
        "B",
    ),
    "no JSON, labelled line": (
        "Response B uses the dog's name and the beach detail from earlier in the conversation,"
        " while Response A is generic.\n\nPairwise choice: **B**",
        "B",
    ),
    "no JSON, bold heading": (
        "**Explanation:** Both ask about watering and light.\n\n**Pairwise Choice:** SAME",
        "SAME",
    ),
    "no JSON, winner names the response": ("Winner: Response A", "A"),
    "no JSON, MT-Bench style": ("Both are fine but B is tighter.\n\nFinal verdict: [[B]]", "B"),
    "same label stated twice": (
        "pairwise_choice: A\n\nA stays within budget, B does not.\n\nFinal verdict: A",
        "A",
    ),
    "truncated mid-explanation after the choice": (
        '{"pairwise_choice": "B", "explanation": "B answers the question; A refuses becau',
        "B",
    ),
}


@pytest.mark.parametrize("case", sorted(PW_OK))
def test_pairwise_replies_that_parse(case: str) -> None:
    text, label = PW_OK[case]
    verdict = parse_verdict(text, PW)
    assert verdict.label == label
    assert verdict.scores == {
        "pairwise_choice": {"A": BASELINE, "SAME": TIE, "B": CANDIDATE}[label]
    }
    assert "pairwise_choice" in verdict.rationale


PW_FAIL = {
    "empty reply": "",
    "names both A and B": (
        "pairwise_choice: A\n\nOn reflection, B recalls the earlier turn better.\n\n"
        "pairwise_choice: B"
    ),
    "A or B": "Pairwise choice: A or B, they are hard to tell apart.",
    "A/B in JSON": '{"explanation": "Hard to say.", "pairwise_choice": "A/B"}',
    "echoed format instruction": (
        'I will answer in this shape: {"explanation": "<your step-by-step reasoning>",'
        ' "pairwise_choice": "A" or "SAME" or "B"}'
    ),
    "lowercase article after verdict": "My verdict: a tie, both responses are equally good.",
    "article after choice": "The choice: A tough one, since both responses have merits.",
    "label outside the options": '{"explanation": "Both bad.", "pairwise_choice": "NEITHER"}',
    "truncated before the choice": '{"explanation": "Response B is better because it rem',
    "truncated mid-label": '{"explanation": "Tie.", "pairwise_choice": "SA',
    "prose without a stated choice": "Response B is better than Response A in most respects.",
}


@pytest.mark.parametrize("case", sorted(PW_FAIL))
def test_pairwise_replies_that_fail(case: str) -> None:
    with pytest.raises(VerdictError):
        parse_verdict(PW_FAIL[case], PW)


@pytest.mark.parametrize(
    ("label", "unflipped", "flipped"),
    [("A", BASELINE, CANDIDATE), ("B", CANDIDATE, BASELINE), ("SAME", TIE, TIE)],
)
def test_flipped_presentation_maps_labels_to_the_candidate_side(
    label: str, unflipped: str, flipped: str
) -> None:
    text = f'{{"explanation": "...", "pairwise_choice": "{label}"}}'
    assert parse_verdict(text, PW).scores == {"pairwise_choice": unflipped}
    verdict = parse_verdict(text, PW, flipped=True)
    assert verdict.scores == {"pairwise_choice": flipped}
    assert verdict.label == label  # as the judge wrote it, in the order it was shown


def test_flipped_applies_to_a_labelled_line_too() -> None:
    verdict = parse_verdict("Pairwise choice: **A**", PW, flipped=True)
    assert (verdict.label, verdict.scores) == ("A", {"pairwise_choice": CANDIDATE})


# --- a custom protocol with a wide range -------------------------------------------------

TEN = Protocol(
    name="ten",
    kind="pointwise",
    template="{response}",
    fields=(FieldSpec(name="response"),),
    scores=(ScoreSpec(name="quality", path="score", min=1, max=10, rationale="why"),),
)


def test_a_number_cut_off_at_the_end_is_not_trusted() -> None:
    # A reply cut off after "score": 1 may have meant 10: a failure, not a guess.
    for cut in ('{"why": "Clear and complete.", "score": 1', '{"why": "Thorough.", "score": 10'):
        with pytest.raises(VerdictError):
            parse_verdict(cut, TEN)
    assert parse_verdict('{"why": "Thorough.", "score": 10}', TEN).scores == {"quality": 10}
    assert parse_verdict('{"why": "Thorough.", "score": 10,', TEN).scores == {"quality": 10}


def test_a_choice_protocol_with_custom_labels() -> None:
    p = Protocol(
        name="kinder",
        kind="pairwise",
        template="{a} {b}",
        fields=(FieldSpec(name="a"), FieldSpec(name="b")),
        choice=ChoiceSpec(
            name="winner",
            path="winner",
            rationale="why",
            options={"FIRST": BASELINE, "EQUAL": TIE, "SECOND": CANDIDATE},
            flipped={"FIRST": "SECOND", "SECOND": "FIRST"},
        ),
        swap=("a", "b"),
    )
    assert parse_verdict('{"why": "x", "winner": "second"}', p).scores == {"winner": CANDIDATE}
    assert parse_verdict("Winner: FIRST", p, flipped=True).scores == {"winner": CANDIDATE}
    with pytest.raises(VerdictError):
        parse_verdict('{"why": "x", "winner": "B"}', p)
