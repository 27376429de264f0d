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
from typing import Any, Literal

import numpy as np

from chatjudge.errors import UsageError
from chatjudge.formats.analyses import Comparison
from chatjudge.protocols.kinds import Kind, kind_named
from chatjudge.rundir import RunDir
from chatjudge.stats import bradley_terry
from chatjudge.stats.style import FEATURES, response_text, style_counts, style_features

OUTCOME = {"BASELINE": "A", "CANDIDATE": "B", "TIE": "TIE"}
Control = Literal["length", "style"]


def compare_runs(
    runs: dict[str, Path],
    *,
    baseline: str = "baseline",
    score: str | None = None,
    seed: int = 0,
    control: Control | None = None,
) -> dict[str, Any]:
    """Ratings and win rates of the named runs (name -> run directory): the content of
    `compare.json`, checked against `chatjudge.formats.analyses.Comparison`.

    `control` adds ratings with the responses' normalized length difference (`length`),
    or length and markdown header, list and bold differences (`style`), as covariates
    of the Bradley-Terry model (Chatbot Arena's style control), next to the raw ones."""
    if not runs:
        raise UsageError("compare needs two or more runs (or one pairwise run)")
    opened = {name: RunDir(path) for name, path in runs.items()}
    summaries = {name: run.summary for name, run in opened.items()}
    kinds = {kind_named(s.kind) for s in summaries.values()}
    if len(runs) < 2 and not next(iter(kinds)).one_run_compares:
        raise UsageError("compare needs two or more runs (or one pairwise run)")
    protocols = {s.protocol for s in summaries.values()}
    if len(kinds) > 1 or len(protocols) > 1:
        raise UsageError(f"runs mix protocols {sorted(protocols)}: compare runs of one protocol")
    scores = {name: run.ok_scores() for name, run in opened.items()}
    common = sorted(set.intersection(*(set(s) for s in scores.values())))
    if not common:
        raise UsageError("the runs have no item judged ok in all of them")
    kind = kinds.pop()
    texts = {name: _texts(run, kind) for name, run in opened.items()} if control else {}
    sides: list[tuple[str, str]] = []  # per battle, model A's and model B's response
    if kind.one_run_compares:
        if baseline in runs:
            raise UsageError(f"a run is named like the baseline '{baseline}': use --baseline-name")
        battles = [
            (baseline, name, OUTCOME[scores[name][i]["pairwise_choice"]])
            for name in runs
            for i in common
        ]
        sides = [(texts[name][i][0], texts[name][i][1]) for name in texts for i in common]
        anchor: str | None = baseline
    else:
        score = score or _first_score(scores, common)
        battles = [
            (a, b, _outcome(scores[a][i][score], scores[b][i][score]))
            for a, b in combinations(runs, 2)
            for i in common
        ]
        if texts:
            pairs = combinations(runs, 2)
            sides = [(texts[a][i][1], texts[b][i][1]) for a, b in pairs for i in common]
        anchor = None
    ratings = bradley_terry(battles, anchor=anchor, seed=seed)
    models, matrix = ratings.expected_win_rates()
    controlled = None
    if control is not None:
        names = FEATURES[:1] if control == "length" else FEATURES
        counts = np.array([[*style_counts(x), *style_counts(y)] for x, y in sides])
        covariates = style_features(counts[:, :4], counts[:, 4:])[:, : len(names)]
        controlled = bradley_terry(
            battles, anchor=anchor, seed=seed, covariates=covariates, covariate_names=names
        )
    comparison = Comparison(
        protocol=protocols.pop(),
        kind=kind.name,
        score=score,
        baseline=baseline if kind.one_run_compares else None,
        runs={name: str(path) for name, path in runs.items()},
        n_items=len(common),
        n_battles=len(battles),
        models=models,
        ratings=[r.to_dict() for r in ratings.ratings],
        win_rates=[[None if v != v else round(float(v), 4) for v in row] for row in matrix],
        outcomes=_outcomes(battles),
        control=control,
        controlled_ratings=[r.to_dict() for r in controlled.ratings] if controlled else None,
        style_coefficients=controlled.coefficients if controlled else None,
        evaluators={
            name: s.evaluator.fingerprint if s.evaluator else None for name, s in summaries.items()
        },
    )
    return comparison.model_dump(mode="json")


def _texts(run: RunDir, kind: Kind) -> dict[str, tuple[str, str]]:
    """Per item id, the (baseline, model) responses that style control measures.

    Pairwise: `baseline_model_response` and `response`. Pointwise: `response` when the
    row has one, else what the assistant said in `chat` (the conversation judged)."""
    out = {}
    for record in run.results():
        if record.status != "ok":
            continue
        fields = record.fields
        if kind.one_run_compares:
            pair = (fields.get("baseline_model_response"), fields.get("response"))
        else:
            pair = (None, fields["response"] if "response" in fields else _assistant(fields))
        out[record.id] = (response_text(pair[0]), response_text(pair[1]))
    return out


def _assistant(fields: dict[str, Any]) -> Any:
    chat = fields.get("chat")
    if isinstance(chat, list):
        return [m for m in chat if isinstance(m, dict) and m.get("role") == "assistant"]
    return chat


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
