"""How `chatjudge align` measures a judge against human labels, and the held-out proof.

A row's agreement is the share of its human labels the judge's verdict equals (one rater:
0 or 1). Pairwise, the verdict is the run's `pairwise_choice` (the candidate's side);
pointwise, each rated score is compared exactly and the deciding score (the labels' first,
the protocol's first by default) gives the row's agreement.

The held-out difference is the paired difference of the rows' agreement, aligned minus
original, with the gate's interval (`chatjudge.stats.paired.paired_difference`): Tango's
score interval for 0/1 rows, guarded below 30 differing rows by the exact sign test (one
rater per row) or the betting interval (several). A percentile bootstrap would be too
lenient here: 5 rows improved and none worse in 40 puts its lower end above 0, where the
exact one-sided p is 0.031.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np

from chatjudge.formats.alignment import AgreementFigures, HeldOutDifference, HumanCeiling
from chatjudge.stats import agreement
from chatjudge.stats.paired import paired_difference

Ratings = Mapping[str, Mapping[str, Sequence[Any]]]  # score -> item id -> human labels
Verdicts = Mapping[str, Mapping[str, Any]]  # item id -> the judge's scores


def row_agreement(verdict: Mapping[str, Any], labels: Sequence[Any], score: str) -> float:
    """The share of `labels` the judge's `score` equals."""
    judged = verdict[score]
    return sum(_same(judged, h) for h in labels) / len(labels)


def _same(judged: Any, human: Any) -> bool:
    if isinstance(human, float):
        return bool(float(judged) == human)
    return bool(judged == human)


def figures(
    verdicts: Verdicts, ratings: Ratings, deciding: str, ids: Sequence[str]
) -> AgreementFigures:
    """The judge's agreement with the humans over `ids` judged ok (pairs of judge verdict
    and human label), with Cohen's kappa for pairwise labels."""
    ok = [i for i in ids if i in verdicts]
    by_score: dict[str, float] = {}
    for score, by_id in ratings.items():
        pairs = [(verdicts[i][score], h) for i in ok if i in by_id for h in by_id[i]]
        if pairs:
            by_score[score] = sum(_same(j, h) for j, h in pairs) / len(pairs)
    pairs = [(verdicts[i][deciding], h) for i in ok for h in ratings[deciding].get(i, ())]
    kappa = None
    if pairs and not isinstance(pairs[0][1], float):
        judge, human = zip(*pairs, strict=True)
        kappa = agreement(judge, human, ties=True, n_resamples=1).kappa
    return AgreementFigures(
        agreement=by_score.get(deciding, float("nan")),
        kappa=kappa,
        by_score=by_score if len(ratings) > 1 else None,
        n=len(ok),
    )


def held_out_difference(
    before: Verdicts,
    after: Verdicts,
    labels: Mapping[str, Sequence[Any]],
    deciding: str,
    ids: Sequence[str],
) -> HeldOutDifference:
    """The paired difference in agreement over `ids` judged ok both ways, with the gate's
    interval and small-sample rule."""
    paired = [i for i in ids if i in before and i in after and i in labels]
    old = np.array([row_agreement(before[i], labels[i], deciding) for i in paired])
    new = np.array([row_agreement(after[i], labels[i], deciding) for i in paired])
    diff = new - old
    improved, regressed = int(np.count_nonzero(diff > 0)), int(np.count_nonzero(diff < 0))
    if len(paired) < 2:
        return HeldOutDifference(value=float(diff.mean()) if len(diff) else 0.0,
                                 ci95=[-1.0, 1.0], method="too few rows", improved=improved,
                                 regressed=regressed, n=len(paired))  # fmt: skip
    three_point = bool(np.isin(diff, (-1.0, 0.0, 1.0)).all())
    found = paired_difference(
        new, old, bounds=(-1.0, 1.0), boundary=0.0, three_point=three_point, n_resamples=2000
    )
    return HeldOutDifference(
        value=found.value,
        ci95=[float(found.ci95[0]), float(found.ci95[1])],
        method=found.method,
        improved=improved,
        regressed=regressed,
        n=len(paired),
    )


def human_ceiling(labels: Mapping[str, Sequence[Any]]) -> HumanCeiling | None:
    """How often two raters of the same row agree, over rows with two or more; None
    without any."""
    rows = [ls for ls in labels.values() if len(ls) >= 2]
    if not rows:
        return None
    pairs = [_same(a, b) for ls in rows for a, b in combinations(ls, 2)]
    return HumanCeiling(agreement=sum(pairs) / len(pairs), n_rows=len(rows), n_pairs=len(pairs))
