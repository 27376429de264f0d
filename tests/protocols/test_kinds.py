"""The protocol kinds: how each reduces an item's judge calls (samples x orders x judges)
into one verdict, what it decides for the commands, and that no command outside
`protocols/` and `formats/` tells kinds apart by their names."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from chatjudge.formats.results import ResultRecord
from chatjudge.protocols import (
    BASELINE,
    CANDIDATE,
    TIE,
    ChoiceSpec,
    FieldSpec,
    Protocol,
    ScoreSpec,
    get_protocol,
    kinds,
)
from chatjudge.protocols.kinds import (
    PREFERENCE,
    Deterministic,
    ItemVerdict,
    Pairwise,
    Pointwise,
    kind_named,
    kind_of,
)
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


def test_a_pointwise_protocol_with_a_label_takes_the_majority() -> None:
    labelled = Protocol(
        name="pointwise-label",
        kind="pointwise",
        template="{a}",
        fields=(FieldSpec(name="a"),),
        choice=ChoiceSpec(
            name="verdict", path="verdict", options={"GOOD": CANDIDATE, "BAD": BASELINE}
        ),
    )
    calls = [
        CallOutcome("j", k, False, raw="{}", verdict=Verdict({"verdict": side}, label="?"))
        for k, side in enumerate([BASELINE, CANDIDATE, BASELINE])
    ]
    verdict = reduce_calls(labelled, calls)
    assert verdict.scores == {"verdict": BASELINE}
    assert verdict.consistent is None  # one order: nothing to compare
    assert verdict.agreement == pytest.approx(2 / 3)


# What each kind decides

TRAJECTORY = get_protocol("tool-trajectory")


def test_each_protocol_reaches_its_kind() -> None:
    assert isinstance(kind_of(POINTWISE), Pointwise) and not isinstance(
        kind_of(POINTWISE), Deterministic
    )
    assert isinstance(kind_of(PAIRWISE), Pairwise)
    deterministic = kind_of(TRAJECTORY)
    assert isinstance(deterministic, Deterministic)
    assert deterministic.scorer == "tool-trajectory"
    # Persisted as a pointwise protocol is: summaries and TOML keep their text.
    assert deterministic.name == TRAJECTORY.kind == "pointwise"


def test_a_persisted_kind_reads_back_as_its_object() -> None:
    assert kind_named(PAIRWISE.kind) is kinds.PAIRWISE
    assert kind_named(POINTWISE.kind) is kinds.POINTWISE
    assert kind_named("pointwise", None) is kinds.POINTWISE
    assert kind_named("pointwise", "tool-trajectory") is kind_of(TRAJECTORY)
    with pytest.raises(KeyError):
        kind_named("listwise")


@pytest.mark.parametrize(
    ("protocol", "expected"),
    [
        (
            POINTWISE,
            dict(judged=True, verb="judging", swappable=False, one_run_compares=False,
                 prefers=False, controls_style=False, human_labels=True, scorer=None),
        ),
        (
            PAIRWISE,
            dict(judged=True, verb="judging", swappable=True, one_run_compares=True,
                 prefers=True, controls_style=True, human_labels=True, scorer=None),
        ),
        (
            TRAJECTORY,
            dict(judged=False, verb="scoring", swappable=False, one_run_compares=False,
                 prefers=False, controls_style=False, human_labels=False,
                 scorer="tool-trajectory"),
        ),
    ],
    ids=["pointwise", "pairwise", "deterministic"],
)  # fmt: skip
def test_what_each_kind_decides(protocol: Protocol, expected: dict[str, Any]) -> None:
    kind = kind_of(protocol)
    assert {name: getattr(kind, name) for name in expected} == expected


@pytest.mark.parametrize("flip", [True, False])
def test_only_a_prompt_with_two_sides_is_sent_again_swapped(flip: bool) -> None:
    assert kind_of(PAIRWISE).swaps_sides(flip) is flip
    assert kind_of(POINTWISE).swaps_sides(flip) is False
    assert kind_of(TRAJECTORY).swaps_sides(flip) is False


def test_the_gate_decides_a_pairwise_run_on_its_preference_first() -> None:
    kind = kind_of(PAIRWISE)
    names = [m.name for m in PAIRWISE.metrics]
    assert kind.gate_metrics(PAIRWISE) == [PREFERENCE, *names]
    assert kind.gate_spec(PAIRWISE, PREFERENCE) is None  # the kind's own metric
    assert kind.gate_spec(PAIRWISE, names[0]) == PAIRWISE.metrics[0]


def test_the_gate_decides_a_pointwise_run_on_its_declared_metrics() -> None:
    kind = kind_of(POINTWISE)
    assert kind.gate_metrics(POINTWISE) == [m.name for m in POINTWISE.metrics]
    assert kind.gate_spec(POINTWISE, "accuracy") == next(
        m for m in POINTWISE.metrics if m.name == "accuracy"
    )
    with pytest.raises(StopIteration):  # no preference without two sides
        kind.gate_spec(POINTWISE, PREFERENCE)


def _record(*calls: tuple[str, bool]) -> ResultRecord:
    """A results record whose calls have these (status, flipped)."""
    call = dict(judge="j", sample=0, scores={}, label=None, rationale={}, raw=None, error=None,
                cached=False, input_tokens=None, output_tokens=None, latency=None)  # fmt: skip
    return ResultRecord.model_validate(
        dict(
            id="1",
            index=0,
            status="ok",
            scores={},
            error=None,
            consistent=None,
            agreement=None,
            rationale={},
            raw=None,
            usage={},
            fields={},
            calls=[{**call, "status": s, "flipped": f} for s, f in calls],
        )  # fmt: skip
    )


def test_the_otel_record_says_which_side_the_candidate_was_shown_as() -> None:
    kind = kind_of(PAIRWISE)
    assert kind.candidate_shown_as(_record(("ok", False), ("ok", True))) == "B"
    assert kind.candidate_shown_as(_record(("ok", True), ("ok", False))) == "A"
    # the rationale is the first successful call's
    assert kind.candidate_shown_as(_record(("failed", False), ("ok", True))) == "A"
    assert kind.candidate_shown_as(_record(("failed", False))) is None


def test_a_prompt_without_sides_names_none_in_the_otel_record() -> None:
    assert kind_of(POINTWISE).candidate_shown_as(_record(("ok", True))) is None


def test_the_deterministic_kind_scores_a_row_by_its_rules() -> None:
    from chatjudge.trajectories import score_row

    call = {"id": "c0", "type": "function", "function": {"name": "get", "arguments": "{}"}}
    row = {
        "response_trajectory": [
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c0", "content": "ok"},
        ],
        "expected_tool_calls": [{"name": "get", "arguments": {}}, {"name": "put", "arguments": {}}],
    }
    kind = kind_of(TRAJECTORY)
    assert isinstance(kind, Deterministic)
    scored = kind.score(row, "exact", as_written=False, checked_tools=None)
    assert scored.scores == score_row(row, "exact").scores
    assert scored.scores["trajectory_match"] == 0
    assert scored.scores["tool_call_recall"] == 0.5


# No command tells kinds apart by name

SRC = Path(__file__).resolve().parents[2] / "src" / "chatjudge"
NAMES = re.compile(r"""["'](pairwise|pointwise|deterministic)["']""")
# A protocol's or summary's own `scorer` read as a test; a kind's `scorer` is its answer.
SCORER_TEST = re.compile(r"\b(?!kind\b|summary\b)\w+\.scorer\b")


def _sources() -> list[Path]:
    """Python modules and page templates outside `protocols/` (the kinds) and `formats/`
    (the persisted declarations). The page's script (`report/static/*.js`) reads the
    summary's `kind` text as written, as any reader of the format does."""
    skip = (SRC / "protocols", SRC / "formats")
    files = [*SRC.rglob("*.py"), *SRC.rglob("*.j2")]
    return sorted(f for f in files if not any(f.is_relative_to(d) for d in skip))


def _hits(pattern: re.Pattern[str]) -> list[str]:
    return [
        f"{path.relative_to(SRC)}:{number}: {line.strip()}"
        for path in _sources()
        for number, line in enumerate(path.read_text("utf-8").splitlines(), 1)
        if pattern.search(line)
    ]


def test_no_kind_is_named_as_a_string_outside_protocols_and_formats() -> None:
    assert len(_sources()) > 100  # the scan reads the package
    assert _hits(NAMES) == []


def test_no_command_tests_a_protocols_scorer_instead_of_its_kind() -> None:
    assert _hits(SCORER_TEST) == []


def test_the_scan_finds_what_it_looks_for() -> None:
    assert NAMES.search('if protocol.kind == "pairwise":')
    assert SCORER_TEST.search("if proto.scorer:")
    assert not SCORER_TEST.search("kind.scorer")
    assert not SCORER_TEST.search("kind_named(summary.kind, summary.scorer)")


def test_the_kinds_page_names_what_the_kinds_have() -> None:
    """docs/protocols.md's table and list name each kind's decisions by their code names."""
    page = (SRC.parents[1] / "docs" / "protocols.md").read_text("utf-8")
    named = set(re.findall(r"\(`(\w+)`", page))
    assert {"judged", "reduce", "swappable", "gate_metrics", "candidate_shown_as"} <= named
    assert [n for n in named if not hasattr(Deterministic, n) and not hasattr(Pairwise, n)] == []
