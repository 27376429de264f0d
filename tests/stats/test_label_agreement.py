"""Judge-human agreement and Cohen's kappa against hand-worked examples."""

from __future__ import annotations

import json

import pytest

from chatjudge.stats import agreement, normalize_label
from chatjudge.stats.intervals import clopper_pearson

JUDGE = ["A", "A", "B", "B", "SAME"]
HUMAN = ["A", "B", "B", "B", "SAME"]


def test_agreement_and_kappa_with_ties() -> None:
    # Equal on pairs 1, 3, 4, 5: agreement 4/5 = 0.8.
    # Judge: A 2/5, B 2/5, SAME 1/5; human: A 1/5, B 3/5, SAME 1/5.
    # Chance = .4*.2 + .4*.6 + .2*.2 = .08 + .24 + .04 = .36
    # kappa = (.8 - .36) / (1 - .36) = .44 / .64 = 0.6875
    result = agreement(JUDGE, HUMAN)
    assert result.agreement == pytest.approx(0.8)
    assert result.n == 5
    assert result.kappa == pytest.approx(0.6875)
    assert result.n_dropped == 0
    assert result.labels == ("BASELINE", "CANDIDATE", "TIE")


def test_ties_false_drops_pairs_where_either_side_is_a_tie() -> None:
    # Left: (A,A) (A,B) (B,B) (B,B); agreement 3/4 = .75.
    # Judge: A .5, B .5; human: A .25, B .75. Chance = .125 + .375 = .5
    # kappa = (.75 - .5) / (1 - .5) = 0.5
    result = agreement(JUDGE, HUMAN, ties=False)
    assert result.agreement == pytest.approx(0.75)
    assert result.n == 4
    assert result.n_dropped == 1
    assert result.kappa == pytest.approx(0.5)
    one_sided = agreement(["A", "TIE", "B"], ["TIE", "B", "B"], ties=False)
    assert (one_sided.n, one_sided.n_dropped, one_sided.agreement) == (1, 2, 1.0)


def test_textbook_kappa() -> None:
    # 50 pairs: both yes 20, both no 15, judge yes/human no 5, judge no/human yes 10.
    # Observed = 35/50 = .7; judge yes 25/50, human yes 30/50:
    # chance = .5*.6 + .5*.4 = .5; kappa = (.7 - .5) / .5 = 0.4
    judge = ["B"] * 20 + ["A"] * 15 + ["B"] * 5 + ["A"] * 10
    human = ["B"] * 20 + ["A"] * 15 + ["A"] * 5 + ["B"] * 10
    result = agreement(judge, human)
    assert result.agreement == pytest.approx(0.7)
    assert result.kappa == pytest.approx(0.4)
    lo, hi = result.ci95
    assert lo < 0.7 < hi
    klo, khi = result.kappa_ci95
    assert klo < 0.4 < khi
    assert klo >= -1 and khi <= 1
    assert agreement(judge, human, seed=0) == result
    # The share's interval moves in steps of 1/50; kappa's shows the new draw.
    assert agreement(judge, human, seed=1).kappa_ci95 != result.kappa_ci95


def test_vocabularies_and_case_are_normalised() -> None:
    judge = ["a", " Candidate ", "same", "B"]
    human = ["BASELINE", "b", "TIE", "candidate"]
    result = agreement(judge, human)
    assert result.agreement == 1.0 and result.n == 4
    assert normalize_label("Same") == "TIE"
    assert normalize_label("a") == "BASELINE"
    assert normalize_label(3) == 3.0


def test_numeric_labels_are_classes() -> None:
    # Equal on 3 of 4. Judge: 1 1/4, 2 1/4, 3 2/4; human: 1 2/4, 2 1/4, 3 1/4.
    # Chance = .25*.5 + .25*.25 + .5*.25 = .3125; kappa = (.75-.3125)/.6875 = 0.636364
    result = agreement([1, 2, 3, 3], [1.0, "2", 3, 1])
    assert result.agreement == pytest.approx(0.75)
    assert result.kappa == pytest.approx(0.4375 / 0.6875)
    assert result.labels == (1.0, 2.0, 3.0)


def test_single_class_leaves_kappa_undefined() -> None:
    result = agreement(["A"] * 6, ["a"] * 6)
    assert result.agreement == 1.0
    assert result.kappa is None
    assert result.kappa_ci95 is None
    assert result.ci95 == clopper_pearson(6, 6)  # never [1, 1]: 6 of 6 may be 60% agreement
    assert result.ci95[0] < 0.55
    assert json.loads(json.dumps(result.to_dict()))["kappa"] is None


def test_a_single_pair_has_the_exact_interval_and_kappa_none() -> None:
    result = agreement(["A"], ["B"])
    assert result.agreement == 0.0 and result.ci95 == pytest.approx((0.0, 0.975))
    assert result.kappa == 0.0 and result.kappa_ci95 is None
    assert result.kappa_too_few == "too few to say: 1 pairs (fewer than 30)"


def test_three_equal_labels_do_not_collapse_to_a_point() -> None:
    # The bootstrap gave agreement [1, 1] and kappa [1, 1] here: coverage 0.
    result = agreement(["A", "B", "A"], ["A", "B", "A"])
    assert result.agreement == 1.0 and result.kappa == 1.0
    lo, hi = result.ci95
    assert hi == 1.0 and lo == pytest.approx(0.025 ** (1 / 3))
    assert result.kappa_ci95 is None and "3 pairs" in result.kappa_too_few
    assert json.loads(json.dumps(result.to_dict()))["kappa_too_few"] == result.kappa_too_few


def test_kappa_of_perfect_agreement_on_many_pairs_is_too_few_to_say() -> None:
    # 3 classes, 90 pairs, every one equal: each resample's kappa is 1 as well.
    labels = ["A", "B", "SAME"] * 30
    result = agreement(labels, labels)
    assert result.kappa == 1.0 and result.kappa_ci95 is None
    assert "an end of its range" in result.kappa_too_few
    assert result.ci95 == clopper_pearson(90, 90)


def test_kappa_of_two_label_pairs_is_too_few_to_say() -> None:
    # 2 classes, all equal: 2 distinct (judge, human) pairs, fewer than 3.
    result = agreement(["A", "B"] * 20, ["A", "B"] * 20)
    assert result.kappa_ci95 is None and "2 distinct pairs" in result.kappa_too_few


def test_kappa_on_enough_varied_pairs_keeps_its_bootstrap() -> None:
    judge = ["A", "B", "SAME", "A", "B"] * 8
    human = ["A", "B", "SAME", "B", "A"] * 8
    result = agreement(judge, human)
    lo, hi = result.kappa_ci95
    assert lo < result.kappa < hi < 1 and result.kappa_too_few is None
    assert "kappa_too_few" not in result.to_dict()
    assert result.ci95 == clopper_pearson(24, 40)


def test_clear_errors() -> None:
    with pytest.raises(ValueError, match="3 judge labels but 2 human labels"):
        agreement(["A", "B", "A"], ["A", "B"])
    with pytest.raises(ValueError, match="no label pairs"):
        agreement([], [])
    with pytest.raises(ValueError, match="no pairs left after leaving out ties"):
        agreement(["SAME", "TIE", "A"], ["TIE", "B", "TIE"], ties=False)
    with pytest.raises(ValueError, match="human label at position 1: unknown label 'C'"):
        agreement(["A", "B"], ["A", "C"])
    with pytest.raises(ValueError, match="judge label at position 0"):
        agreement([None], ["A"])
    with pytest.raises(ValueError, match="judge label at position 0"):
        agreement([float("nan")], [1])
    with pytest.raises(ValueError, match="mix"):
        agreement(["A", 2], ["A", 2])
