"""Bradley-Terry ratings: closed-form cases, the likelihood equations, bootstrap, inputs."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import optimize

from chatjudge.stats import bradley_terry, win_rate_matrix


def tournament(seed: int = 0, n: int = 200) -> list[tuple[str, str, str]]:
    """X beats Y 80% of the time, Y beats Z 80% of the time; sides alternate."""
    rng = np.random.default_rng(seed)
    battles = []
    for i in range(n):
        for strong, weak in (("X", "Y"), ("Y", "Z")):
            strong_wins = rng.random() < 0.8
            if i % 2:
                battles.append((strong, weak, "A" if strong_wins else "B"))
            else:
                battles.append((weak, strong, "B" if strong_wins else "A"))
    return battles


def test_synthetic_tournament_is_ordered_with_intervals() -> None:
    ratings = bradley_terry(tournament())
    assert ratings.models == ["X", "Y", "Z"]
    for r in ratings.ratings:
        lo, hi = r.ci95
        assert lo < r.rating < hi
        assert r.n_battles in (200, 400)
    # 80% wins means a gap of 400 * log10(4) = 240.8 points, up to sampling noise.
    gap = ratings["X"].rating - ratings["Y"].rating
    assert 150 < gap < 350
    assert np.mean([r.rating for r in ratings.ratings]) == pytest.approx(1000)
    assert bradley_terry(tournament()) == ratings
    assert bradley_terry(tournament(), seed=1).ratings[0].ci95 != ratings.ratings[0].ci95


def test_two_models_recover_the_closed_form_gap() -> None:
    # MLE for two models: P(X beats Y) = share won, so gap = 400 * log10(80 / 20).
    battles = [("X", "Y", "A")] * 80 + [("X", "Y", "B")] * 20
    ratings = bradley_terry(battles, n_resamples=0)
    assert ratings["X"].rating - ratings["Y"].rating == pytest.approx(400 * math.log10(4), abs=0.5)
    assert ratings["X"].ci95 is None
    models, expected = ratings.expected_win_rates()
    assert models == ["X", "Y"]
    assert expected[0, 1] == pytest.approx(0.8, abs=1e-3)
    assert math.isnan(expected[0, 0])


def test_ties_count_half_a_win_each() -> None:
    # X scores 60 + 20/2 = 70 of 100: gap = 400 * log10(70 / 30).
    battles = [("X", "Y", "A")] * 60 + [("Y", "X", "A")] * 20 + [("X", "Y", "tie")] * 20
    ratings = bradley_terry(battles, n_resamples=0)
    gap = ratings["X"].rating - ratings["Y"].rating
    assert gap == pytest.approx(400 * math.log10(70 / 30), abs=0.5)
    even = [("X", "Y", "TIE")] * 10 + [("X", "Y", "A"), ("X", "Y", "B")] * 5
    flat = bradley_terry(even, n_resamples=0)
    assert flat["X"].rating == pytest.approx(1000, abs=1e-3)


def test_fit_solves_the_likelihood_equations() -> None:
    # At the maximum each model's expected score equals its actual score.
    rng = np.random.default_rng(3)
    strength = {"m1": 0.0, "m2": 0.7, "m3": 1.2, "m4": -0.5}
    names = list(strength)
    battles = []
    for _ in range(600):
        a, b = rng.choice(names, size=2, replace=False)
        p = 1 / (1 + math.exp(strength[b] - strength[a]))
        u = rng.random()
        battles.append((a, b, "A" if u < p * 0.9 else "B" if u > p + 0.1 * (1 - p) else "TIE"))
    ratings = bradley_terry(battles, n_resamples=0)
    elo = {r.model: r.rating for r in ratings.ratings}
    expected = dict.fromkeys(names, 0.0)
    actual = dict.fromkeys(names, 0.0)
    for a, b, outcome in battles:
        p = 1 / (1 + 10 ** ((elo[b] - elo[a]) / 400))
        s = {"A": 1.0, "B": 0.0, "TIE": 0.5}[outcome]
        expected[a] += p
        expected[b] += 1 - p
        actual[a] += s
        actual[b] += 1 - s
    for name in names:
        assert expected[name] == pytest.approx(actual[name], abs=0.05)
    assert ratings.models[0] == "m3" and ratings.models[-1] == "m4"

    # The same maximum likelihood by scipy's general minimiser, then to the Elo scale.
    index = {name: i for i, name in enumerate(names)}
    a = np.array([index[x] for x, _, _ in battles])
    b = np.array([index[y] for _, y, _ in battles])
    s = np.array([{"A": 1.0, "B": 0.0, "TIE": 0.5}[o] for _, _, o in battles])

    def nll(theta: np.ndarray) -> float:
        d = theta[a] - theta[b]
        return float(np.sum(np.logaddexp(0.0, d) - s * d))

    theta = optimize.minimize(nll, np.zeros(4), method="BFGS", options={"gtol": 1e-8}).x
    elo = 400 * theta / math.log(10)
    elo += 1000 - elo.mean()
    for name in names:
        assert ratings[name].rating == pytest.approx(elo[index[name]], abs=0.05)


def test_anchor_pins_one_model_at_1000() -> None:
    free = bradley_terry(tournament(), n_resamples=200)
    anchored = bradley_terry(tournament(), anchor="Z", n_resamples=200)
    assert anchored["Z"].rating == pytest.approx(1000)
    assert anchored["Z"].ci95 == pytest.approx((1000, 1000))
    for model in ("X", "Y"):
        free_gap = free[model].rating - free["Z"].rating
        assert anchored[model].rating - 1000 == pytest.approx(free_gap, abs=1e-3)
    assert anchored.to_dict()["anchor"] == "Z"


def test_outcome_spellings_agree() -> None:
    canonical = [("p", "q", "A"), ("p", "q", "B"), ("q", "p", "TIE"), ("q", "p", "B")] * 3
    spelled = [
        ("p", "q", "a"),
        {"model_a": "p", "model_b": "q", "winner": "model_b"},
        ("q", "p", "same"),
        ("q", "p", "p"),
    ] * 3
    assert bradley_terry(spelled, n_resamples=50) == bradley_terry(canonical, n_resamples=50)


def test_undefeated_model_gets_a_finite_rating() -> None:
    ratings = bradley_terry([("X", "Y", "A")] * 5 + [("Y", "Z", "A"), ("Z", "Y", "A")], seed=2)
    assert all(math.isfinite(r.rating) for r in ratings.ratings)
    assert ratings.models[0] == "X"
    payload = json.loads(json.dumps(ratings.to_dict()))
    assert {r["model"] for r in payload["ratings"]} == {"X", "Y", "Z"}
    assert payload["ratings"][0]["rating"] > payload["ratings"][1]["rating"] + 300
    assert payload["n_battles"] == 7


def test_a_rating_on_few_battles_is_too_few_to_say() -> None:
    # 10 battles each: the bootstrap's interval was no valid one (a rating has no range).
    ratings = bradley_terry([("X", "Y", "A"), ("Y", "X", "A")] * 5, anchor="Y")
    assert ratings["X"].ci95 is None
    assert ratings["X"].too_few == "too few to say: 10 battles (fewer than 30)"
    assert ratings["Y"].ci95 == pytest.approx((1000, 1000))  # the anchor: exact
    assert ratings.to_dict()["ratings"][0]["too_few"] == ratings["X"].too_few


def test_a_model_winning_every_battle_is_too_few_to_say() -> None:
    battles = [("X", "Y", "A")] * 40 + [("Y", "Z", "A"), ("Z", "Y", "A")] * 20
    ratings = bradley_terry(battles, n_resamples=200)
    assert ratings["X"].ci95 is None and "won every battle" in ratings["X"].too_few
    assert ratings["Z"].ci95 is not None and ratings["Z"].too_few is None
    assert "too_few" not in ratings["Z"].to_dict()


def test_empirical_win_rate_matrix() -> None:
    # X vs Y: X wins 2, loses 1, ties 1 -> (2 + 0.5) / 4 = 0.625; Y: 0.375.
    battles = [
        ("X", "Y", "A"),
        ("Y", "X", "B"),
        ("Y", "X", "A"),
        ("X", "Y", "TIE"),
        ("Y", "Z", "A"),
    ]
    models, matrix = win_rate_matrix(battles)
    assert models == ["X", "Y", "Z"]
    assert matrix[0, 1] == pytest.approx(0.625)
    assert matrix[1, 0] == pytest.approx(0.375)
    assert matrix[1, 2] == 1.0 and matrix[2, 1] == 0.0
    assert np.isnan(matrix[0, 2]) and np.isnan(matrix[2, 0])  # never met
    assert np.isnan(np.diag(matrix)).all()


def test_clear_errors() -> None:
    with pytest.raises(ValueError, match="unknown outcome 'C'"):
        bradley_terry([("X", "Y", "C")])
    with pytest.raises(ValueError, match="against itself"):
        bradley_terry([("X", "X", "A")])
    with pytest.raises(ValueError, match="no battles"):
        bradley_terry([])
    with pytest.raises(ValueError, match="anchor 'W'"):
        bradley_terry([("X", "Y", "A")], anchor="W")
    with pytest.raises(ValueError, match="never met"):
        bradley_terry([("X", "Y", "A"), ("V", "W", "B")])
    with pytest.raises(ValueError, match="both a label and the other model's name"):
        bradley_terry([("B", "A", "A")])
    with pytest.raises(ValueError, match="missing key"):
        bradley_terry([{"model_a": "X", "model_b": "Y"}])
