"""Style control: the fit against statsmodels, ties, dropped features, counts, intervals."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import special

from chatjudge.stats import style as style_module
from chatjudge.stats import style_control
from chatjudge.stats.bootstrap import Estimate
from chatjudge.stats.intervals import clopper_pearson
from chatjudge.stats.logistic import fit_logistic
from chatjudge.stats.style import (
    FEATURES,
    Controlled,
    controlled_fits,
    explain,
    item_weights,
    normalized_difference,
    response_text,
    style_counts,
    style_features,
)


def dataset(n: int = 300, seed: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Outcomes (wins, ties, losses) driven by length, and both sides' style counts."""
    rng = np.random.default_rng(seed)
    candidate = np.column_stack(
        [rng.integers(20, 400, n), rng.poisson(1, n), rng.poisson(3, n), rng.poisson(2, n)]
    ).astype(float)
    baseline = np.column_stack(
        [rng.integers(20, 400, n), rng.poisson(1, n), rng.poisson(3, n), rng.poisson(2, n)]
    ).astype(float)
    length = normalized_difference(candidate[:, 0], baseline[:, 0])
    p = special.expit(0.3 + 2.0 * length)
    u = rng.random(n)
    outcome = np.where(u < 0.85 * p, 1.0, np.where(u < p, 0.5, 0.0))
    return outcome, candidate, baseline


def statsmodels_fit(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Fractional logit by statsmodels' GLM (Binomial family), features scaled by their SD."""
    design = np.column_stack([np.ones(len(y)), x / x.std(axis=0)])
    return sm.GLM(y, design, family=sm.families.Binomial()).fit().params


def test_controlled_rates_match_statsmodels() -> None:
    y, candidate, baseline = dataset()
    assert {0.0, 0.5, 1.0} <= set(y)  # ties are in the data, as fractional outcomes
    result = style_control(y, candidate, baseline, n_resamples=200)
    features = style_features(candidate, baseline)

    length = statsmodels_fit(y, features[:, :1])
    assert result.length.coefficients["intercept"] == pytest.approx(length[0], abs=1e-4)
    assert result.length.coefficients["length"] == pytest.approx(length[1], abs=1e-4)
    assert result.length.value == pytest.approx(special.expit(length[0]), abs=1e-5)

    full = statsmodels_fit(y, features)
    assert list(result.style.coefficients) == ["intercept", *FEATURES]
    assert list(result.style.coefficients.values()) == pytest.approx(list(full), abs=1e-4)
    assert result.style.value == pytest.approx(special.expit(full[0]), abs=1e-5)
    assert result.raw.value == pytest.approx(y.mean())
    # The length bonus is real here: the controlled rate is below the raw one.
    assert result.length.value < result.raw.value


def test_ties_count_half() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 1))
    ties = np.full(50, 0.5)
    fit = controlled_fits(ties, x, ["length"], n_resamples=50)
    assert fit.value == pytest.approx(0.5, abs=1e-6)
    assert fit.coefficients["length"] == pytest.approx(0.0, abs=1e-6)
    # A win and a loss weigh as two ties: the same fit.
    pairs = np.repeat([[1.0, 0.0]], 25, axis=0).ravel()
    doubled = controlled_fits(pairs, np.repeat(x[:25], 2, axis=0), ["length"], n_resamples=0)
    halves = controlled_fits(np.full(25, 0.5), x[:25], ["length"], n_resamples=0)
    assert doubled.value == pytest.approx(halves.value, abs=1e-6)


def test_constant_features_are_dropped_not_singular() -> None:
    y, candidate, baseline = dataset()
    candidate[:, 1:] = 0  # no markdown anywhere
    baseline[:, 1:] = 0
    result = style_control(y, candidate, baseline, n_resamples=100)
    assert result.style.dropped == ("headers", "lists", "bold")
    assert list(result.style.coefficients) == ["intercept", "length"]
    assert result.style.value == pytest.approx(result.length.value)
    assert result.to_dict()["dropped"] == ["headers", "lists", "bold"]


def test_style_counts_follow_arena() -> None:
    text = (
        "# Title\n## Part\nSome **bold** and __more__ text.\n- one\n* two\n+ three\n"
        "1. first\n  2. second\n```\n# not a header\n- not an item **nor bold**\n```\n"
    )
    tokens, headers, items, bold = style_counts(text)
    assert tokens == len(text) / 4
    assert (headers, items, bold) == (2, 5, 2)
    assert style_counts("") == (0.0, 0.0, 0.0, 0.0)
    assert response_text([{"role": "assistant", "content": "a"}, {"content": "b"}]) == "a\nb"


def test_normalized_difference_is_zero_when_both_are() -> None:
    diff = normalized_difference(np.array([3.0, 0.0, 0.0]), np.array([1.0, 0.0, 2.0]))
    assert diff.tolist() == [0.5, 0.0, -1.0]


def test_interval_is_seeded_and_holds_the_value() -> None:
    y, candidate, baseline = dataset()
    a = style_control(y, candidate, baseline, n_resamples=300, seed=1)
    b = style_control(y, candidate, baseline, n_resamples=300, seed=1)
    c = style_control(y, candidate, baseline, n_resamples=300, seed=2)
    assert a == b and a.length.ci95 != c.length.ci95
    for fit in (a.raw, a.length, a.style):
        lo, hi = fit.ci95
        assert lo < fit.value < hi
        assert 0.03 < hi - lo < 0.3


def test_a_candidate_winning_everything_stays_finite() -> None:
    _, candidate, baseline = dataset(n=40)
    result = style_control(np.ones(40), candidate, baseline, n_resamples=50)
    assert 0.99 < result.length.value <= 1.0
    assert all(np.isfinite(v) for v in result.style.coefficients.values())


def test_past_the_bootstrap_size_the_sandwich_interval_agrees(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    y, candidate, baseline = dataset(n=2000, seed=5)
    boot = style_control(y, candidate, baseline, n_resamples=1000).length
    monkeypatch.setattr(style_module, "MAX_BOOTSTRAP_ITEMS", 100)
    sandwich = style_control(y, candidate, baseline, n_resamples=1000).length
    assert sandwich.value == boot.value
    width = boot.ci95[1] - boot.ci95[0]
    assert sandwich.ci95[1] - sandwich.ci95[0] == pytest.approx(width, rel=0.15)


def test_sentence_says_how_much_length_explains() -> None:
    y, candidate, baseline = dataset(seed=4)  # length explains part of the preference
    result = style_control(y, candidate, baseline, n_resamples=50)
    raw, length = result.raw.value, result.length.value
    assert result.sentence.startswith(
        f"Length explains {(raw - length) * 100:.1f} of the raw preference's "
        f"{(raw - 0.5) * 100:.1f} points above 50%; at equal length the candidate is "
        f"preferred {length * 100:.1f}% of the time"
    )


@pytest.mark.parametrize("raw", [0.417, 0.583])
def test_length_never_explains_more_points_than_there_are(raw: float) -> None:
    """`make demo-agent` printed "Length explains 11.2 of the raw preference's 8.3 points
    below 50%": at equal length the preference lay on the other side of 50%."""
    length = 0.529 if raw < 0.5 else 0.471
    side = "below" if raw < 0.5 else "above"
    sentence = explain(
        Estimate(raw, None, 120),
        Controlled(length, None, 120, {}, ()),
        Controlled(0.52, None, 120, {}, ()),
    )
    assert sentence == (
        f"Length explains all of the raw preference's 8.3 points {side} 50%, and more: at "
        f"equal length the preference crosses 50%, and the candidate is preferred "
        f"{length * 100:.1f}% of the time (52.0% at equal length and markdown style)."
    )


def test_bad_outcomes_are_refused() -> None:
    _, candidate, baseline = dataset(n=5)
    with pytest.raises(ValueError, match="outcomes must lie in"):
        style_control(np.array([1, 2, 0, 0, 1.0]), candidate, baseline)
    with pytest.raises(ValueError, match="3 outcomes but 5 rows"):
        style_control(np.ones(3), candidate, baseline)


def test_batched_designs_fit_each_run() -> None:
    rng = np.random.default_rng(4)
    x = np.stack([np.column_stack([np.ones(200), rng.normal(size=200)]) for _ in range(3)])
    y = (rng.random((3, 200)) < special.expit(x[:, :, 1])).astype(float)
    together = fit_logistic(x, y, np.ones((3, 200)))
    for k in range(3):
        alone = sm.GLM(y[k], x[k], family=sm.families.Binomial()).fit().params
        assert together[k] == pytest.approx(alone, abs=1e-4)


def test_bradley_terry_with_style_covariates_matches_statsmodels() -> None:
    from chatjudge.stats import bradley_terry
    from chatjudge.stats.ratings import SCALE

    rng = np.random.default_rng(7)
    z = rng.normal(0.2, 0.4, 300)  # A's (the baseline's) length advantage
    a_wins = rng.random(300) < special.expit(-0.4 + 1.5 * z)
    battles = [("base", "cand", "A" if w else "B") for w in a_wins]
    raw = bradley_terry(battles, anchor="base", n_resamples=0)
    controlled = bradley_terry(
        battles, anchor="base", n_resamples=100, covariates=z[:, None], covariate_names=["length"]
    )
    design = np.column_stack([np.ones(300), z / z.std()])
    intercept, slope = sm.Logit(a_wins.astype(float), design).fit(disp=0).params
    assert controlled["cand"].rating - 1000 == pytest.approx(-SCALE * intercept, abs=0.5)
    assert controlled.coefficients == {"length": pytest.approx(slope, abs=1e-3)}
    # The baseline's length advantage hid part of the candidate's strength.
    assert controlled["cand"].rating > raw["cand"].rating
    lo, hi = controlled["cand"].ci95
    assert lo < controlled["cand"].rating < hi


@pytest.mark.parametrize("n", [7, 1001, 2001])
def test_item_weights_are_the_same_resamples_in_any_blocks(
    n: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same draws as one draw of each chunk (what the weights were before they were
    drawn in parts), whole or in blocks of rows, chunks of several resamples or one."""
    for cells in (style_module._CHUNK_CELLS, 3 * n):  # one chunk; chunks of 3 resamples
        monkeypatch.setattr(style_module, "_CHUNK_CELLS", cells)
        rng, step, expected = np.random.default_rng(9), max(1, cells // n), []
        for start in range(0, 200, step):
            k = min(step, 200 - start)
            drawn = rng.integers(0, n, size=(k, n)) + (np.arange(k) * n)[:, None]
            expected.append(np.bincount(drawn.ravel(), minlength=k * n).reshape(k, n))
        whole = np.concatenate(list(item_weights(n, 200, 9)))
        assert np.array_equal(whole, np.concatenate(expected))
        blocks = list(item_weights(n, 200, 9, rows=8))
        assert max(len(b) for b in blocks) <= 8
        assert np.array_equal(np.concatenate(blocks), whole)
        assert (whole.sum(axis=1) == n).all()


def test_a_small_sample_holds_each_rate_to_the_raw_preferences_valid_interval() -> None:
    # 5 items, all won: the bootstrap gave the raw preference [1, 1] and the fits a point.
    y, cand, base = dataset(n=5)
    found = style_control(np.ones(5), cand, base)
    assert found.raw.ci95 == clopper_pearson(5, 5)
    for rate in (found.length, found.style):
        lo, hi = rate.ci95
        assert lo <= found.raw.ci95[0] and hi >= found.raw.ci95[1]
    # With ties (halves), the betting interval for [0, 1] guards the raw mean.
    ties = style_control(np.array([1.0, 0.5, 1.0, 0.5, 1.0]), cand, base)
    assert ties.raw.ci95[0] < 0.5 and ties.raw.ci95[1] == pytest.approx(1.0)


def test_a_large_sample_keeps_the_fits_own_intervals() -> None:
    y, cand, base = dataset()
    found = style_control(y, cand, base)
    alone = controlled_fits(y, style_features(cand, base)[:, :1], FEATURES[:1])
    assert found.length.ci95 == alone.ci95
