"""Bradley-Terry ratings of models from pairwise battles, on an Elo-like scale.

The model is Arena-Hard-Auto's: a logistic regression of the outcome on a design
matrix with +1 for model A and -1 for model B, fitted by maximum likelihood. A tie
counts as half a win for each side (a target of 0.5). A weak ridge (`_RIDGE`) keeps
ratings finite when a model wins or loses every battle it played; with real data
its effect is far below the bootstrap interval. Ratings are `400 * log10(strength)`
shifted so that their mean is 1000, or so that the `anchor` model is at 1000.
Intervals are percentile bootstraps over battles, where one can be valid: a rating has
no known range, so a model with fewer than 30 battles, or one that won or lost every
battle it played (its rating then bounded only by the ridge, in every resample too), has
no interval, and `too_few` says why (the anchor's 1000 is exact: it keeps its interval).

The likelihood is maximised by Newton's method (iteratively reweighted least
squares) run on every bootstrap resample at once: scipy's general minimisers, one fit
per resample, are far slower for a problem that is tiny and strictly concave. The tests
check the fit against `scipy.optimize.minimize`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from chatjudge.stats.bootstrap import percentile_interval, resampled_counts
from chatjudge.stats.intervals import TOO_FEW
from chatjudge.stats.logistic import fit_logistic
from chatjudge.stats.small_sample import SMALL_UNITS
from chatjudge.stats.style import item_weights

SCALE = 400 / math.log(10)  # natural-log strength -> Elo points
OFFSET = 1000.0
_RIDGE = 1e-3
_MAX_NEWTON = 100
_A_WINS = {"A", "MODEL_A"}
_B_WINS = {"B", "MODEL_B"}
_TIES = {"TIE", "SAME", "DRAW", "TIE (BOTHBAD)"}

Battle = Sequence[Any] | Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Rating:
    """One model's rating, its 95% bootstrap interval and how many battles it played;
    `too_few` says why it has no interval (too few battles, or all won or all lost)."""

    model: str
    rating: float
    ci95: tuple[float, float] | None
    n_battles: int
    too_few: str | None = None

    def to_dict(self) -> dict[str, Any]:
        ci = list(self.ci95) if self.ci95 is not None else None
        out: dict[str, Any] = {
            "model": self.model,
            "rating": self.rating,
            "ci95": ci,
            "n_battles": self.n_battles,
        }
        if self.too_few is not None:
            out["too_few"] = self.too_few
        return out


@dataclass(frozen=True, slots=True)
class Ratings:
    """Bradley-Terry ratings, best first; with covariates, their fitted coefficients (per
    standard deviation of each covariate kept; constant ones are left out)."""

    ratings: tuple[Rating, ...]
    anchor: str | None
    n_battles: int
    n_resamples: int
    coefficients: dict[str, float] | None = None

    @property
    def models(self) -> list[str]:
        return [r.model for r in self.ratings]

    def __getitem__(self, model: str) -> Rating:
        for rating in self.ratings:
            if rating.model == model:
                return rating
        raise KeyError(model)

    def expected_win_rates(self) -> tuple[list[str], np.ndarray]:
        """The fitted chance that the row model beats the column model (ties as half)."""
        r = np.array([x.rating for x in self.ratings])
        matrix = 1 / (1 + 10 ** ((r[None, :] - r[:, None]) / 400))
        np.fill_diagonal(matrix, np.nan)
        return self.models, matrix

    def to_dict(self) -> dict[str, Any]:
        return {
            "anchor": self.anchor,
            "n_battles": self.n_battles,
            "n_resamples": self.n_resamples,
            "ratings": [r.to_dict() for r in self.ratings],
        }


def bradley_terry(
    battles: Iterable[Battle],
    *,
    anchor: str | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    covariates: np.ndarray | None = None,
    covariate_names: Sequence[str] = (),
) -> Ratings:
    """Fit Bradley-Terry ratings to battles `(model_a, model_b, outcome)`.

    `covariates` (battles x k, named by `covariate_names`) adds columns to the logistic
    model, as Chatbot Arena's style control does (normalized length and markdown
    differences, A minus B): the ratings are then the strengths with those held equal.

    `outcome` is `A`, `B` or `TIE` (also `SAME`, `model_a`, `model_b`, `tie (bothbad)`,
    case-insensitive) or the winner's name; a battle may also be a mapping with
    `model_a`, `model_b` and `winner` (Chatbot Arena's format). Raises ValueError for
    an unknown outcome, a model against itself, no battles, an unknown anchor, or
    models in groups that never met (their ratings could not be compared).
    With `n_resamples=0`, or fewer than two battles, intervals are None.
    """
    models, a, b, score = _parse(battles)
    if anchor is not None and anchor not in models:
        raise ValueError(f"anchor {anchor!r} is not among the models: {', '.join(models)}")
    _check_connected(models, a, b)
    if covariates is not None:
        return _with_covariates(
            models, a, b, score, covariates, covariate_names, anchor, n_resamples, seed
        )
    # Identical battles are one row with a weight (how often it occurred); a bootstrap
    # resample of battles is a new set of weights.
    table = np.column_stack([a, b, score])
    rows, weights = np.unique(table, axis=0, return_counts=True)
    problem = _Problem(rows, len(models))
    theta = problem.fit(weights[None, :].astype(float), np.zeros(len(models)))
    point = _elo(theta, models, anchor)[0]

    cis: list[tuple[float, float] | None] = [None] * len(models)
    if n_resamples > 0 and len(score) >= 2:
        _, chunks = resampled_counts(table, n_resamples, seed)
        boot = np.concatenate(
            [_elo(problem.fit(counts.astype(float), theta[0]), models, anchor) for counts in chunks]
        )
        cis = [percentile_interval(boot[:, i], 0.95) for i in range(len(models))]

    ratings = _rated(models, a, b, score, point, cis, anchor)
    return Ratings(ratings=ratings, anchor=anchor, n_battles=len(score), n_resamples=n_resamples)


def _with_covariates(
    models: list[str],
    a: np.ndarray,
    b: np.ndarray,
    score: np.ndarray,
    covariates: np.ndarray,
    names: Sequence[str],
    anchor: str | None,
    n_resamples: int,
    seed: int,
) -> Ratings:
    """Ratings from the logistic model with the covariates' columns beside the models'."""
    m, n = len(models), len(score)
    extra = np.asarray(covariates, dtype=float).reshape(n, -1)
    if extra.shape[1] != len(names):
        raise ValueError(f"{extra.shape[1]} covariate columns but {len(names)} names")
    scale = extra.std(axis=0)
    kept = [j for j in range(extra.shape[1]) if scale[j] > 1e-12]
    design = np.zeros((n, m + len(kept)))
    design[np.arange(n), a] = 1.0
    design[np.arange(n), b] = -1.0
    design[:, m:] = extra[:, kept] / scale[kept]
    beta = fit_logistic(design, score, np.ones((1, n)), ridge=_RIDGE)
    point = _elo(beta[:, :m], models, anchor)[0]
    cis: list[tuple[float, float] | None] = [None] * m
    if n_resamples > 0 and n >= 2:
        fits = (
            fit_logistic(design, score, w, start=beta[0], ridge=_RIDGE)
            for w in item_weights(n, n_resamples, seed)
        )
        boot = np.concatenate([_elo(fit[:, :m], models, anchor) for fit in fits])
        cis = [percentile_interval(boot[:, i], 0.95) for i in range(m)]
    ratings = _rated(models, a, b, score, point, cis, anchor)
    coefficients = {names[j]: float(c) for j, c in zip(kept, beta[0, m:], strict=True)}
    return Ratings(ratings, anchor, n, n_resamples, coefficients)


def _rated(
    models: list[str],
    a: np.ndarray,
    b: np.ndarray,
    score: np.ndarray,
    point: np.ndarray,
    cis: list[tuple[float, float] | None],
    anchor: str | None,
) -> tuple[Rating, ...]:
    """The ratings, best first, each interval kept only where it can be valid."""
    m = len(models)
    played = np.bincount(a, minlength=m) + np.bincount(b, minlength=m)
    won = np.bincount(a, weights=score, minlength=m) + np.bincount(
        b, weights=1 - score, minlength=m
    )
    out = []
    for i in np.argsort(-point, kind="stable"):
        why = None
        if models[i] != anchor:
            why = _too_few(int(played[i]), float(won[i]))
        ci = None if why is not None else cis[i]
        out.append(Rating(models[i], float(point[i]), ci, int(played[i]), why))
    return tuple(out)


def _too_few(played: int, won: float) -> str | None:
    """Why a model's rating has no interval valid at its battles, or None."""
    if played < SMALL_UNITS:
        return f"{TOO_FEW}: {played} battles (fewer than {SMALL_UNITS})"
    if won in (0.0, played):
        side = "lost" if won == 0 else "won"
        return f"{TOO_FEW}: {side} every battle, so only the fit's ridge bounds the rating"
    return None


def win_rate_matrix(battles: Iterable[Battle]) -> tuple[list[str], np.ndarray]:
    """Empirical share of battles the row model won against the column model, ties as half.

    Models are sorted by name; NaN on the diagonal and for pairs that never met.
    """
    models, a, b, score = _parse(battles)
    m = len(models)
    won = np.zeros((m, m))
    met = np.zeros((m, m))
    np.add.at(won, (a, b), score)
    np.add.at(won, (b, a), 1 - score)
    np.add.at(met, (a, b), 1)
    np.add.at(met, (b, a), 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        matrix = won / met
    np.fill_diagonal(matrix, np.nan)
    return models, matrix


class _Problem:
    """The weighted Bradley-Terry likelihood over distinct battle rows (a, b, score of a)."""

    def __init__(self, rows: np.ndarray, m: int) -> None:
        from scipy.sparse import csr_matrix

        a, b = rows[:, 0].astype(int), rows[:, 1].astype(int)
        self.score = rows[:, 2]
        self.m = m
        self.design = np.zeros((len(rows), m))  # +1 for model A, -1 for model B
        self.design[np.arange(len(rows)), a] = 1.0
        self.design[np.arange(len(rows)), b] = -1.0
        # Row r adds its curvature at (a,a) and (b,b), subtracts it at (a,b) and (b,a).
        cells = np.column_stack([a * m + a, b * m + b, a * m + b, b * m + a]).ravel()
        signs = np.tile([1.0, 1.0, -1.0, -1.0], len(rows))
        owner = np.repeat(np.arange(len(rows)), 4)
        self.to_hessian = csr_matrix((signs, (owner, cells)), shape=(len(rows), m * m))

    def loss(self, theta: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """Negative log-likelihood plus ridge, one per fit: (k,) for (k, m) strengths."""
        d = theta @ self.design.T
        value = (weights * (np.logaddexp(0.0, d) - self.score * d)).sum(axis=1)
        return value + 0.5 * _RIDGE * (theta * theta).sum(axis=1)

    def fit(self, weights: np.ndarray, start: np.ndarray) -> np.ndarray:
        """Log-strengths for each weight row (k fits at once): (k, m)."""
        from scipy import special

        k, m = len(weights), self.m
        theta = np.tile(start, (k, 1))
        value = self.loss(theta, weights)
        ridge = _RIDGE * np.eye(m)
        for _ in range(_MAX_NEWTON):
            p = special.expit(theta @ self.design.T)
            grad = (weights * (p - self.score)) @ self.design + _RIDGE * theta
            curvature = weights * p * (1 - p)
            hessian = (self.to_hessian.T @ curvature.T).T.reshape(k, m, m) + ridge
            step = np.linalg.solve(hessian, grad[..., None])[..., 0]
            # Halve the step of any fit whose loss would rise (far from the optimum);
            # a rise at rounding level is no rise.
            scale = np.ones(k)
            for _ in range(40):
                trial = theta - scale[:, None] * step
                new = self.loss(trial, weights)
                worse = new > value + 1e-12 * np.abs(value)
                if not worse.any():
                    break
                scale[worse] /= 2
            theta, value = trial, new
            if np.abs(step).max() < 1e-9:
                break
        return theta


def _elo(theta: np.ndarray, models: list[str], anchor: str | None) -> np.ndarray:
    """(k, m) log-strengths to Elo points: mean 1000, or the anchor at 1000, per row."""
    elo = SCALE * theta
    base = elo[:, [models.index(anchor)]] if anchor is not None else elo.mean(axis=1, keepdims=True)
    return elo - base + OFFSET


def _parse(battles: Iterable[Battle]) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """Model names (sorted), each battle's A and B model index, and A's score (1, 0.5, 0)."""
    triples = []
    for i, battle in enumerate(battles):
        if isinstance(battle, Mapping):
            try:
                model_a, model_b, outcome = battle["model_a"], battle["model_b"], battle["winner"]
            except KeyError as exc:
                raise ValueError(f"battle {i}: missing key {exc}") from None
        else:
            if len(battle) != 3:
                raise ValueError(
                    f"battle {i}: expected (model_a, model_b, outcome), got {battle!r}"
                )
            model_a, model_b, outcome = battle
        model_a, model_b = str(model_a), str(model_b)
        if model_a == model_b:
            raise ValueError(f"battle {i}: model {model_a!r} against itself")
        triples.append((model_a, model_b, _score(outcome, model_a, model_b, i)))
    if not triples:
        raise ValueError("no battles")
    models = sorted({t[0] for t in triples} | {t[1] for t in triples})
    index = {name: k for k, name in enumerate(models)}
    a = np.array([index[t[0]] for t in triples])
    b = np.array([index[t[1]] for t in triples])
    return models, a, b, np.array([t[2] for t in triples])


def _score(outcome: Any, model_a: str, model_b: str, i: int) -> float:
    """Model A's score: 1 for a win, 0.5 for a tie, 0 for a loss."""
    text = str(outcome).strip()
    key = text.upper()
    as_label = 1.0 if key in _A_WINS else 0.0 if key in _B_WINS else 0.5 if key in _TIES else None
    as_name = 1.0 if text == model_a else 0.0 if text == model_b else None
    if as_label is not None and as_name is not None and as_label != as_name:
        raise ValueError(f"battle {i}: outcome {text!r} is both a label and the other model's name")
    score = as_label if as_label is not None else as_name
    if score is None:
        raise ValueError(
            f"battle {i}: unknown outcome {outcome!r}: use A, B, TIE or the winner's name"
        )
    return score


def _check_connected(models: list[str], a: np.ndarray, b: np.ndarray) -> None:
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    m = len(models)
    graph = coo_matrix((np.ones(len(a)), (a, b)), shape=(m, m))
    n_groups, group = connected_components(graph, directed=False)
    if n_groups > 1:
        groups = [[models[k] for k in range(m) if group[k] == g] for g in range(n_groups)]
        raise ValueError(f"these groups of models never met, so cannot be rated together: {groups}")
