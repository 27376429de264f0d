"""`alignment.json`: what `chatjudge align` found, the held-out proof of its aligned protocol."""

from __future__ import annotations

from typing import Literal

from chatjudge.formats.shared import Record, Versioned

Candidate = Literal["rules", "examples", "both"]


class AgreementFigures(Record):
    """The judge against the humans on the held-out rows: the share of (row, rater) pairs
    that agree, Cohen's kappa (pairwise), and per rated score (pointwise)."""

    agreement: float
    kappa: float | None = None
    by_score: dict[str, float] | None = None  # pointwise: exact agreement per rated score
    n: int  # rows judged ok


class HeldOutDifference(Record):
    """The paired difference in agreement (after minus before) over the held-out rows,
    with the gate's paired interval and its small-sample rule."""

    value: float
    ci95: list[float]
    method: str
    improved: int  # rows the aligned protocol agrees on more than the original
    regressed: int
    n: int  # rows judged ok with both protocols


class HeldOut(Record):
    n: int
    ids: list[str]
    before: AgreementFigures
    after: AgreementFigures
    difference: HeldOutDifference


class HumanCeiling(Record):
    """With several raters on a row: how often two humans agree (pairs of raters of the
    same row), the most a judge can be expected to reach."""

    agreement: float
    n_rows: int
    n_pairs: int


class Alignment(Versioned):
    """`alignment.json`: the split, the candidates' cross-validated agreement on the select
    part, the chosen candidate and its held-out figures; `recommended` only when the held-out
    interval lies above 0."""

    WHAT = "alignment.json"

    format: int = 1
    recommended: bool
    reason: str
    run: str
    human: str
    protocol: str
    protocol_sha256: str
    labels_sha256: str
    judge: str
    optimizer: str
    seed: int
    held_out_share: float
    score: str | None = None  # pointwise: the score that decides
    n_labelled: int
    select_ids: list[str]
    selection: dict[str, float]  # candidate (and `original`) -> cross-validated agreement
    chosen: Candidate
    rules: list[str]
    example_ids: list[str]
    held_out: HeldOut
    human_ceiling: HumanCeiling | None = None
    warnings: list[str] = []
    optimizer_calls: int
    judge_calls: int
    cost_usd: float | None = None
