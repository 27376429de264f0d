"""`chatjudge compare`: several runs on the same items -> Bradley-Terry ratings.

Pairwise runs (each candidate against the same baseline) give one battle per item:
baseline vs candidate, with the item's verdict; pointwise runs give one battle per
item and pair of runs, the higher score winning. Ties are explicit battles counted
as half a win for each side. Only items judged ok in every run are used, so every
model is rated on the same questions. Ratings are on an Elo-like scale with 95%
bootstrap intervals, and the win-rate matrix holds the win rates the ratings
predict for every pair, as Arena-Hard-Auto reports them.
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path
from typing import Any

from chatjudge.errors import UsageError
from chatjudge.rundir import Comparison, ok_scores, read_summary
from chatjudge.stats import bradley_terry

OUTCOME = {"BASELINE": "A", "CANDIDATE": "B", "TIE": "TIE"}


def compare_runs(
    runs: dict[str, Path], *, baseline: str = "baseline", score: str | None = None, seed: int = 0
) -> dict[str, Any]:
    """Ratings and win rates of the named runs (name -> run directory): the content of
    `compare.json`, checked against `chatjudge.rundir.Comparison`."""
    if not runs:
        raise UsageError("compare needs two or more runs (or one pairwise run)")
    summaries = {name: read_summary(path) for name, path in runs.items()}
    kinds = {s.kind for s in summaries.values()}
    if len(runs) < 2 and kinds != {"pairwise"}:
        raise UsageError("compare needs two or more runs (or one pairwise run)")
    protocols = {s.protocol for s in summaries.values()}
    if len(kinds) > 1 or len(protocols) > 1:
        raise UsageError(f"runs mix protocols {sorted(protocols)}: compare runs of one protocol")
    scores = {name: ok_scores(path) for name, path in runs.items()}
    common = sorted(set.intersection(*(set(s) for s in scores.values())))
    if not common:
        raise UsageError("the runs have no item judged ok in all of them")
    kind = kinds.pop()
    if kind == "pairwise":
        if baseline in runs:
            raise UsageError(f"a run is named like the baseline '{baseline}': use --baseline-name")
        battles = [
            (baseline, name, OUTCOME[scores[name][i]["pairwise_choice"]])
            for name in runs
            for i in common
        ]
        anchor: str | None = baseline
    else:
        score = score or _first_score(scores, common)
        battles = [
            (a, b, _outcome(scores[a][i][score], scores[b][i][score]))
            for a, b in combinations(runs, 2)
            for i in common
        ]
        anchor = None
    ratings = bradley_terry(battles, anchor=anchor, seed=seed)
    models, matrix = ratings.expected_win_rates()
    comparison = Comparison(
        protocol=protocols.pop(),
        kind=kind,
        score=score,
        baseline=baseline if kind == "pairwise" else None,
        runs={name: str(path) for name, path in runs.items()},
        n_items=len(common),
        n_battles=len(battles),
        models=models,
        ratings=[r.to_dict() for r in ratings.ratings],
        win_rates=[[None if v != v else round(float(v), 4) for v in row] for row in matrix],
        outcomes=_outcomes(battles),
    )
    return comparison.model_dump(mode="json")


def _first_score(scores: dict[str, dict[str, dict[str, Any]]], common: list[str]) -> str:
    first = next(iter(scores.values()))[common[0]]
    numeric = [k for k, v in first.items() if isinstance(v, int | float)]
    if not numeric:
        raise UsageError("pointwise runs without a numeric score cannot be compared")
    return numeric[0]


def _outcome(a: float, b: float) -> str:
    return "A" if a > b else "B" if b > a else "TIE"


def _outcomes(battles: list[tuple[str, str, str]]) -> dict[str, dict[str, int]]:
    """Per model: battles won, tied and lost (the raw counts behind the ratings)."""
    counts: dict[str, dict[str, int]] = {}
    for a, b, outcome in battles:
        for model, wins in ((a, "A"), (b, "B")):
            c = counts.setdefault(model, {"won": 0, "tied": 0, "lost": 0})
            key = "tied" if outcome == "TIE" else "won" if outcome == wins else "lost"
            c[key] += 1
    return counts
