"""PPI++ means: a hand computation, the limits of lam, power tuning, inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from chatjudge.stats import ppi_mean
from chatjudge.stats.intervals import SHARE, UNBOUNDED, Range, clopper_pearson


def test_hand_computation_on_six_rows() -> None:
    # Six judged rows; humans labelled the first three.
    judge_all = [1, 0, 1, 1, 0, 1]
    judge_labelled = [1, 0, 1]
    human = [1, 0, 0]
    result = ppi_mean(judge_all, judge_labelled, human, known=SHARE)
    # n = 3 labelled, m = 3 unlabelled (judge values 1, 0, 1: mean 2/3, variance 1/3).
    # Var(judge) over all six rows (ddof 1): mean 2/3, (4 * (1/3)^2 + 2 * (2/3)^2) / 5 = 4/15.
    # Cov(human, judge) on the labelled rows (ddof 1):
    #   ((2/3)(1/3) + (-1/3)(-2/3) + (-1/3)(1/3)) / 2 = 1/6.
    # lam = Cov / ((1 + n/m) Var) = (1/6) / (2 * 4/15) = 5/16.
    lam = 5 / 16
    assert result.lam == pytest.approx(lam)
    # theta = mean(human - lam * judge) + lam * mean(unlabelled judge)
    #       = mean(11/16, 0, -5/16) + (5/16)(2/3) = 1/8 + 5/24 = 1/3.
    assert result.value == pytest.approx(1 / 3)
    # Var = Var(human - lam * judge) / n + lam^2 Var(unlabelled judge) / m
    #     = ((9/16)^2 + (2/16)^2 + (7/16)^2) / 2 / 3 + (25/256)(1/3) / 3
    #     = (67/256) / 3 + 25/2304
    variance = (67 / 256) / 3 + 25 / 2304
    half = 1.959963984540054 * math.sqrt(variance)
    # 3 labels is a small sample: the hull with the humans' Clopper-Pearson interval of 1 in
    # 3, [0.008, 0.906], which the normal interval holds here.
    assert result.ci95 == pytest.approx((1 / 3 - half, 1 / 3 + half))
    assert result.human_only.ci95 == clopper_pearson(1, 3)
    # Humans alone: variance 1/3 per label; the estimate is worth (1/3) / Var labels.
    assert result.effective_labels == pytest.approx((1 / 3) / variance)
    assert result.n_labels == 3
    assert result.human_only.value == pytest.approx(1 / 3)
    assert result.human_only.n == 3
    assert result.judge_only.value == pytest.approx(4 / 6)
    assert result.judge_only.n == 6
    assert result.to_dict()["ci95"] == list(result.ci95)


def test_lam_zero_is_the_humans_alone_and_lam_one_plain_ppi() -> None:
    rng = np.random.default_rng(0)
    judge = rng.random(100)
    human = judge + rng.normal(0, 0.3, 100)
    none = ppi_mean(judge, judge[:20], human[:20], lam=0.0)
    assert none.value == pytest.approx(human[:20].mean())
    assert none.ci95 == pytest.approx(none.human_only.ci95)
    assert none.effective_labels == pytest.approx(20)
    plain = ppi_mean(judge, judge[:20], human[:20], lam=1.0)
    assert plain.value == pytest.approx((human[:20] - judge[:20]).mean() + judge[20:].mean())


def test_power_tuning_helps_with_a_good_judge_and_costs_little_with_a_useless_one() -> None:
    rng = np.random.default_rng(1)
    truth = rng.random(2000) < 0.5
    good = np.where(rng.random(2000) < 0.85, truth, ~truth).astype(float)
    useless = (rng.random(2000) < 0.5).astype(float)
    human = truth.astype(float)
    tuned = ppi_mean(good, good[:200], human[:200])
    assert 0.3 < tuned.lam <= 1
    width = tuned.ci95[1] - tuned.ci95[0]
    assert width < tuned.human_only.ci95[1] - tuned.human_only.ci95[0]
    assert tuned.effective_labels > 300
    blind = ppi_mean(useless, useless[:200], human[:200])
    assert blind.lam < 0.15
    human_width = blind.human_only.ci95[1] - blind.human_only.ci95[0]
    assert blind.ci95[1] - blind.ci95[0] == pytest.approx(human_width, rel=0.05)
    # Plain PPI with a useless judge is wider than the humans alone.
    plain = ppi_mean(useless, useless[:200], human[:200], lam=1.0)
    assert plain.ci95[1] - plain.ci95[0] > 1.2 * human_width


def test_all_rows_labelled_is_the_humans_mean() -> None:
    result = ppi_mean([1, 0, 1], [1, 0, 1], [0, 0, 1])
    assert result.lam == 0 and result.value == pytest.approx(1 / 3)


def test_bad_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match="at least two labelled rows"):
        ppi_mean([1, 0], [1], [1])
    with pytest.raises(ValueError, match="2 judge values but 3 human"):
        ppi_mean([1, 0, 1], [1, 0], [1, 0, 1])
    with pytest.raises(ValueError, match="only 2 judged"):
        ppi_mean([1, 0], [1, 0, 1], [1, 0, 1])
    with pytest.raises(ValueError, match="not finite"):
        ppi_mean([1, 0, float("nan")], [1, 0], [1, 0])


def test_a_small_labelled_sample_is_held_to_the_humans_valid_interval() -> None:
    # 5 labels, all 1, the judge agreeing: the normal interval was [1, 1] (variance 0).
    judge_all = [1.0] * 5 + [1.0, 0.0] * 20
    result = ppi_mean(judge_all, [1.0] * 5, [1.0] * 5, known=SHARE)
    assert result.human_only.ci95 == clopper_pearson(5, 5)
    lo, hi = result.ci95
    assert lo <= clopper_pearson(5, 5)[0] and hi >= 1.0
    # A score in [1, 3]: the betting interval for that range.
    scored = ppi_mean([2.0] * 10, [2.0] * 4, [2.0, 2.0, 3.0, 2.0], known=Range(1.0, 3.0))
    assert scored.ci95[0] < 2.0 and scored.ci95[1] > 2.8


def test_a_small_labelled_sample_with_no_known_range_is_too_few_to_say() -> None:
    result = ppi_mean([5.0, 7.0, 9.0, 4.0], [5.0, 7.0, 9.0], [6.0, 7.0, 8.0], known=UNBOUNDED)
    assert result.ci95 is None and result.too_few.startswith("too few to say: 3 items")
    assert result.to_dict()["too_few"] == result.too_few and result.to_dict()["ci95"] is None
    assert result.human_only.ci95 is None and result.human_only.too_few is not None


def test_a_large_labelled_sample_keeps_the_normal_interval() -> None:
    rng = np.random.default_rng(1)
    human = rng.integers(0, 2, 200).astype(float)
    judge = np.where(rng.random(200) < 0.8, human, 1 - human)
    judge_all = np.concatenate([judge, rng.integers(0, 2, 800).astype(float)])
    plain = ppi_mean(judge_all, judge, human)
    assert (
        plain.too_few is None and plain.ci95 == ppi_mean(judge_all, judge, human, known=SHARE).ci95
    )
