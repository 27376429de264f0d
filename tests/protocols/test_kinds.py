"""The protocol kinds: how each reduces an item's judge calls (samples x orders x judges)
into one verdict, what it decides for the commands, and that no command outside
`protocols/` and `formats/` tells kinds apart by their names."""

from __future__ import annotations

from typing import Any

import pytest

from chatjudge.protocols import (
    BASELINE,
    CANDIDATE,
    TIE,
    ChoiceSpec,
    FieldSpec,
    Protocol,
    ScoreSpec,
    get_protocol,
)
from chatjudge.protocols.kinds import ItemVerdict, kind_of
from chatjudge.runner.aggregate import CallOutcome
from chatjudge.verdicts import Verdict

POINTWISE = get_protocol("interactivity-accuracy")
PAIRWISE = get_protocol("pairwise-chat-quality")


def reduce_calls(protocol: Protocol, calls: list[CallOutcome]) -> ItemVerdict:
    return kind_of(protocol).reduce(protocol, calls)


def scored(interactivity: int, accuracy: int, *, sample: int = 0, judge: str = "j") -> CallOutcome:
    verdict = Verdict({"interactivity": interactivity, "accuracy": accuracy})
    return CallOutcome(judge, sample, False, raw="{}", verdict=verdict)


def chose(
    choice: str, *, flipped: bool = False, sample: int = 0, judge: str = "j", **extra: Any
) -> CallOutcome:
    verdict = Verdict({"pairwise_choice": choice, **extra}, label="?")
    return CallOutcome(judge, sample, flipped, raw="{}", verdict=verdict)


def both_orders(first: str, second: str, *, sample: int = 0, judge: str = "j") -> list[CallOutcome]:
    """One judge's sample in both presentation orders (choices on the candidate's side)."""
    return [
        chose(first, sample=sample, judge=judge),
        chose(second, flipped=True, sample=sample, judge=judge),
    ]


# Pointwise


def test_one_call_gives_its_scores_and_no_agreement() -> None:
    verdict = reduce_calls(POINTWISE, [scored(3, 1)])
    assert verdict.scores == {"interactivity": 3, "accuracy": 1}
    assert verdict.agreement is None and verdict.consistent is None


def test_samples_are_averaged_an_integer_when_whole() -> None:
    verdict = reduce_calls(POINTWISE, [scored(3, 1), scored(1, 1, sample=1)])
    assert verdict.scores == {"interactivity": 2, "accuracy": 1}
    assert all(type(v) is int for v in verdict.scores.values())


def test_a_fractional_mean_is_rounded_to_six_places() -> None:
    calls = [scored(3, 1), scored(2, 0, sample=1), scored(2, 0, sample=2)]
    verdict = reduce_calls(POINTWISE, calls)
    assert verdict.scores == {"interactivity": 2.333333, "accuracy": 0.333333}
    assert isinstance(verdict.scores["interactivity"], float)


@pytest.mark.parametrize(
    ("votes", "agreement"),
    [
        ([(3, 1), (3, 1), (3, 1)], 1.0),
        ([(3, 1), (3, 1), (2, 1)], 2 / 3),
        ([(3, 1), (3, 0), (2, 1)], 1 / 3),  # agreement is on the whole verdict, not per score
        ([(2, 1), (3, 1)], 0.5),
    ],
)
def test_agreement_is_the_share_of_calls_equal_to_the_most_common_verdict(
    votes: list[tuple[int, int]], agreement: float
) -> None:
    calls = [scored(i, a, sample=k) for k, (i, a) in enumerate(votes)]
    assert reduce_calls(POINTWISE, calls).agreement == pytest.approx(agreement)


def test_a_pointwise_panel_averages_over_judges() -> None:
    calls = [scored(3, 1, judge="a"), scored(1, 0, judge="b")]
    verdict = reduce_calls(POINTWISE, calls)
    assert verdict.scores == {"interactivity": 2, "accuracy": 0.5}
    assert verdict.agreement == 0.5


# Pairwise


@pytest.mark.parametrize("choice", [CANDIDATE, BASELINE, TIE])
def test_agreeing_orders_keep_the_choice(choice: str) -> None:
    verdict = reduce_calls(PAIRWISE, both_orders(choice, choice))
    assert verdict.scores == {"pairwise_choice": choice}
    assert verdict.consistent is True
    assert verdict.agreement is None  # one vote


@pytest.mark.parametrize(
    ("first", "second"), [(CANDIDATE, BASELINE), (BASELINE, CANDIDATE), (CANDIDATE, TIE)]
)
def test_disagreeing_orders_become_a_tie(first: str, second: str) -> None:
    verdict = reduce_calls(PAIRWISE, both_orders(first, second))
    assert verdict.scores == {"pairwise_choice": TIE}
    assert verdict.consistent is False


def test_without_flip_there_is_no_consistency() -> None:
    verdict = reduce_calls(PAIRWISE, [chose(BASELINE)])
    assert verdict.scores == {"pairwise_choice": BASELINE}
    assert verdict.consistent is None and verdict.agreement is None


def test_consistent_only_when_every_sample_agrees_across_orders() -> None:
    calls = both_orders(CANDIDATE, CANDIDATE) + both_orders(CANDIDATE, BASELINE, sample=1)
    verdict = reduce_calls(PAIRWISE, calls)
    assert verdict.consistent is False
    # Votes: CANDIDATE and TIE, one each: a tie at the top.
    assert verdict.scores == {"pairwise_choice": TIE}
    assert verdict.agreement == 0.5


def test_majority_over_samples() -> None:
    calls = [
        *both_orders(CANDIDATE, CANDIDATE),
        *both_orders(CANDIDATE, CANDIDATE, sample=1),
        *both_orders(BASELINE, BASELINE, sample=2),
    ]
    verdict = reduce_calls(PAIRWISE, calls)
    assert verdict.scores == {"pairwise_choice": CANDIDATE}
    assert verdict.consistent is True
    assert verdict.agreement == pytest.approx(2 / 3)


def test_majority_over_unflipped_samples() -> None:
    calls = [chose(BASELINE), chose(BASELINE, sample=1), chose(TIE, sample=2)]
    verdict = reduce_calls(PAIRWISE, calls)
    assert verdict.scores == {"pairwise_choice": BASELINE}
    assert verdict.consistent is None
    assert verdict.agreement == pytest.approx(2 / 3)


def test_majority_over_judges_with_inconsistent_orders_as_ties() -> None:
    calls = [
        *both_orders(CANDIDATE, CANDIDATE, judge="a"),
        *both_orders(CANDIDATE, CANDIDATE, judge="b"),
        *both_orders(BASELINE, CANDIDATE, judge="c"),  # position bias: a TIE vote
    ]
    verdict = reduce_calls(PAIRWISE, calls)
    assert verdict.scores == {"pairwise_choice": CANDIDATE}
    assert verdict.consistent is False
    assert verdict.agreement == pytest.approx(2 / 3)


def test_the_same_sample_index_of_two_judges_is_two_votes() -> None:
    calls = [chose(CANDIDATE, judge="a"), chose(BASELINE, judge="b")]
    verdict = reduce_calls(PAIRWISE, calls)
    assert verdict.scores == {"pairwise_choice": TIE}  # one vote each: no majority
    assert verdict.consistent is None  # one order per judge: nothing to compare


@pytest.mark.parametrize(
    "votes",
    [
        [CANDIDATE, BASELINE],
        [CANDIDATE, BASELINE, TIE],
        [CANDIDATE, CANDIDATE, BASELINE, BASELINE, TIE],
    ],
)
def test_a_tie_at_the_top_is_tie(votes: list[str]) -> None:
    calls = [chose(v, sample=k) for k, v in enumerate(votes)]
    verdict = reduce_calls(PAIRWISE, calls)
    assert verdict.scores == {"pairwise_choice": TIE}
    assert verdict.agreement == pytest.approx(votes.count(TIE) / len(votes))


# A custom pairwise protocol carrying scores too

CUSTOM = Protocol(
    name="pairwise-with-margin",
    kind="pairwise",
    template="A: {a}\nB: {b}",
    fields=(FieldSpec(name="a"), FieldSpec(name="b")),
    scores=(ScoreSpec(name="margin", path="margin", min=0, max=10),),
    choice=ChoiceSpec(options={"A": BASELINE, "TIE": TIE, "B": CANDIDATE}),
    swap=("a", "b"),
)


def test_a_custom_pairwise_protocol_keeps_its_extra_scores() -> None:
    calls = [
        chose(CANDIDATE, margin=6),
        chose(CANDIDATE, flipped=True, margin=3),
        chose(CANDIDATE, sample=1, margin=4),
        chose(BASELINE, flipped=True, sample=1, margin=2),
    ]
    verdict = reduce_calls(CUSTOM, calls)
    assert verdict.scores["margin"] == pytest.approx(15 / 4)  # the mean over every call
    assert verdict.scores["pairwise_choice"] == TIE  # CANDIDATE vs TIE (sample 1 disagreed)
    assert set(verdict.scores) == {"pairwise_choice", "margin"}
    assert verdict.consistent is False
