"""Krippendorff's alpha: FED's human annotators and Krippendorff's own worked example,
each checked against the coincidence-matrix formula written out here with numpy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chatjudge.stats import krippendorff_alpha, krippendorff_alpha_ci
from chatjudge.stats.reliability import krippendorff_alpha_estimate

FED = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "fed" / "fed_data.json"

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 observers x 12 units.
# Published: nominal .743, ordinal .815, interval .849.
K2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def reference_alpha(ratings: Any, level: str) -> float:
    """alpha = 1 - D_o / D_e from the coincidence matrix (Krippendorff 2011, section C)."""
    matrix = np.array(ratings, dtype=float)  # None -> NaN
    values = np.unique(matrix[~np.isnan(matrix)])
    index = {v: i for i, v in enumerate(values)}
    coincidence = np.zeros((len(values), len(values)))
    for unit in matrix.T:
        given = unit[~np.isnan(unit)]
        m = len(given)
        if m < 2:
            continue  # unpairable
        for i in range(m):
            for j in range(m):
                if i != j:
                    coincidence[index[given[i]], index[given[j]]] += 1 / (m - 1)
    n_c = coincidence.sum(axis=1)
    n = n_c.sum()
    if level == "nominal":
        delta2 = 1 - np.eye(len(values))
    elif level == "interval":
        delta2 = (values[:, None] - values[None, :]) ** 2
    else:  # ordinal: (sum of n_g from c to k, minus half of n_c and n_k) squared
        delta2 = np.zeros((len(values), len(values)))
        for c in range(len(values)):
            for k in range(len(values)):
                lo, hi = min(c, k), max(c, k)
                delta2[c, k] = (n_c[lo : hi + 1].sum() - (n_c[c] + n_c[k]) / 2) ** 2
    observed = (coincidence * delta2).sum() / n
    expected = (n_c[:, None] * n_c[None, :] * delta2).sum() / (n * (n - 1))
    return 1 - observed / expected


def fed_dialog_ratings(quality: str) -> list[list[float | None]]:
    """FED's dialog-level annotations of `quality`: 5 annotators x 125 dialogs, N/A missing."""
    records = json.loads(FED.read_text())
    dialogs = [r for r in records if "response" not in r]
    assert len(dialogs) == 125

    def rating(value: Any) -> float | None:
        if isinstance(value, str):
            assert value.startswith("N/A"), value
            return None
        return float(value)

    columns = [[rating(v) for v in d["annotations"][quality]] for d in dialogs]
    assert all(len(c) == 5 for c in columns)
    return [list(row) for row in zip(*columns, strict=True)]


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_fed_overall_matches_the_coincidence_formula(level: str) -> None:
    ratings = fed_dialog_ratings("Overall")
    alpha = krippendorff_alpha(ratings, level)
    assert alpha == pytest.approx(reference_alpha(ratings, level), abs=1e-6)
    assert 0.0 < alpha < 1.0


@pytest.mark.parametrize("level", ["ordinal", "interval"])
def test_fed_error_recovery_with_missing_ratings(level: str) -> None:
    ratings = fed_dialog_ratings("Error recovery")  # ~140 N/A ratings: missing values
    assert sum(v is None for row in ratings for v in row) > 100
    alpha = krippendorff_alpha(ratings, level)
    assert alpha == pytest.approx(reference_alpha(ratings, level), abs=1e-6)


@pytest.mark.parametrize(
    ("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_krippendorff_worked_example(level: str, published: float) -> None:
    alpha = krippendorff_alpha(K2011, level)
    assert alpha == pytest.approx(reference_alpha(K2011, level), abs=1e-9)
    assert round(alpha, 3) == published
    nan_form = [[np.nan if v is None else v for v in row] for row in K2011]
    assert krippendorff_alpha(nan_form, level) == alpha


def test_nominal_accepts_any_labels() -> None:
    coded = [[1, 2, 1, 3], [1, 2, 2, 3]]
    labelled = [["yes", "no", "yes", None], ["yes", "no", "no", None]]
    text = krippendorff_alpha(labelled, "nominal")
    assert text == pytest.approx(krippendorff_alpha([r[:3] for r in coded], "nominal"))


def test_interval_is_seeded_and_brackets_alpha() -> None:
    ratings = fed_dialog_ratings("Overall")
    alpha = krippendorff_alpha(ratings, "interval")
    ci = krippendorff_alpha_ci(ratings, "interval", n_resamples=300)
    assert ci is not None
    assert ci[0] < alpha < ci[1]
    assert krippendorff_alpha_ci(ratings, "interval", n_resamples=300) == ci
    assert krippendorff_alpha_ci(ratings, "interval", n_resamples=300, seed=1) != ci
    assert krippendorff_alpha_ci([[1], [2]], "interval") is None


def test_the_estimate_keeps_the_interval_where_it_can_be_valid() -> None:
    ratings = fed_dialog_ratings("Overall")
    found = krippendorff_alpha_estimate(ratings, "interval")
    assert found.value == krippendorff_alpha(ratings, "interval")
    assert found.ci95 == krippendorff_alpha_ci(ratings, "interval")
    assert found.too_few is None and found.n == len(ratings[0])


def test_few_items_or_perfect_agreement_are_too_few_to_say() -> None:
    # Krippendorff's 12 units: the bootstrap over 12 items is no valid interval.
    found = krippendorff_alpha_estimate(K2011, "ordinal")
    assert found.ci95 is None and found.too_few == "too few to say: 12 items (fewer than 30)"
    # 40 items, both raters always agree: alpha is 1 in every resample ([1, 1] before).
    same = [float(i % 4) for i in range(40)]
    perfect = krippendorff_alpha_estimate([same, same], "ordinal")
    assert perfect.value == pytest.approx(1.0) and perfect.ci95 is None
    assert "an end of its range" in perfect.too_few


def test_clear_errors() -> None:
    with pytest.raises(ValueError, match="numeric ratings, got 'N/A"):
        krippendorff_alpha([[1, "N/A (no errors)", 3], [1, 2, 3]], "ordinal")
    with pytest.raises(ValueError, match="fewer than two distinct values"):
        krippendorff_alpha([[2, 2, None], [2, 2, 2]], "interval")
    with pytest.raises(ValueError, match="raters x items"):
        krippendorff_alpha([1, 2, 3], "interval")
