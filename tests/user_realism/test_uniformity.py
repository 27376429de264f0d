"""Uniformity: tokens, Jaccard sums against a pair-by-pair computation, the jackknife and the
sign-flip values."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from chatjudge.user_realism import uniformity
from chatjudge.user_realism.uniformity import first_tokens, similarities


def jaccard(a: list[str], b: list[str]) -> float:
    x, y = set(zip(a, a[1:], strict=False)), set(zip(b, b[1:], strict=False))
    return len(x & y) / len(x | y) if x | y else 0.0


def test_first_tokens_keep_case_and_punctuation_and_stop_at_50() -> None:
    assert first_tokens(["Hi, there!", "ok"]) == ["Hi", ",", "there", "!", "ok"]
    assert len(first_tokens(["a " * 40, "b " * 40])) == 50


def test_by_hand_on_three_goals() -> None:
    real = [["a", "b", "c"], ["a", "b"], ["x", "y"]]  # {ab, bc}, {ab}, {xy}
    simulated = [["a", "b"], ["b", "c"], ["a", "b", "c"]]  # {ab}, {bc}, {ab, bc}
    sums = similarities(real + simulated)
    # Real pairs: (0,1) 1/2, (0,2) 0, (1,2) 0; simulated: (0,1) 0, (0,2) 1/2, (1,2) 1/2.
    assert sums.means() == pytest.approx((1 / 6, 2 / 6))
    assert sums.to_real[:3].tolist() == pytest.approx([0.5, 0.5, 0.0])
    # real user 0 against simulated users 1 and 2 (its own, simulated 0, left out): 1/2 + 1
    assert sums.to_simulated[0] == pytest.approx(1.5)
    # The jackknife: goal 0 left out leaves real (1,2) = 0, simulated (1,2) = 1/2; goal 1,
    # real (0,2) = 0, simulated (0,2) = 1/2; goal 2, real (0,1) = 1/2, simulated (0,1) = 0.
    left_real, left_simulated = sums.leave_one_out()
    assert left_real.tolist() == pytest.approx([0.0, 0.0, 0.5])
    assert left_simulated.tolist() == pytest.approx([0.5, 0.5, 0.0])


@pytest.mark.parametrize("dense_share", [1 / 32, 0.0, 2.0])  # mixed, all dense, all sparse
def test_the_sums_are_every_pair_s(monkeypatch: pytest.MonkeyPatch, dense_share: float) -> None:
    monkeypatch.setattr(uniformity, "_DENSE_SHARE", dense_share)
    monkeypatch.setattr(uniformity, "_BLOCK", 7)  # several blocks, one cut mid-goal
    rng = np.random.default_rng(0)
    words = ["i", "need", "help", "my", "order", "please", "?", "Thanks", "!"]
    users = [list(rng.choice(words, size=rng.integers(0, 12))) for _ in range(2 * 13)]
    users[3] = []  # a user with no 2-gram
    g = len(users) // 2
    sums = similarities(users)
    for i in range(2 * g):
        others = [j for j in range(2 * g) if j != i and j % g != i % g]
        to_real = sum(jaccard(users[i], users[j]) for j in others if j < g)
        to_sim = sum(jaccard(users[i], users[j]) for j in others if j >= g)
        assert sums.to_real[i] == pytest.approx(to_real, abs=1e-5)
        assert sums.to_simulated[i] == pytest.approx(to_sim, abs=1e-5)


def test_swapping_a_goal_flips_its_value() -> None:
    """Simulated minus real, recomputed with any goals' users swapped, is the signed sum of
    the per-goal values: the permutation test needs nothing else."""
    rng = np.random.default_rng(1)
    users = [list(rng.choice(list("abcde"), size=8)) for _ in range(10)]
    g = 5
    values = similarities(users).swap_values()
    for swapped in itertools.product([False, True], repeat=g):
        order = [(g + k if s else k) for k, s in enumerate(swapped)]
        order += [(k if s else g + k) for k, s in enumerate(swapped)]
        real, simulated = similarities([users[i] for i in order]).means()
        signs = np.where(swapped, -1.0, 1.0)
        assert simulated - real == pytest.approx(signs @ values / (g * (g - 1)), abs=1e-6)


def test_users_without_a_2_gram_are_like_no_one() -> None:
    sums = similarities([["a"], [], ["b"], ["c"], ["a"], []])  # no 2-gram at all
    assert sums.means() == (0.0, 0.0) and not sums.to_real.any() and not sums.to_simulated.any()
