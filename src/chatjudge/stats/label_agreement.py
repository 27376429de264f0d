"""Agreement between a judge's labels and human labels: share equal and Cohen's kappa.

Pairwise labels from either side are read in one vocabulary, case-insensitively:
`A` = `BASELINE` (Response A is the baseline), `B` = `CANDIDATE`, `SAME` = `TIE`.
Numbers (or numeric strings) are labels too, for ordinal scores compared as classes.
MT-Bench reports agreement with ties (setup S1) and without them (S2: pairs where
either side said tie are left out); `ties=` picks one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from chatjudge.stats.bootstrap import percentile_interval, resampled_sums
from chatjudge.stats.intervals import clopper_pearson, range_too_few

BASELINE, CANDIDATE, TIE = "BASELINE", "CANDIDATE", "TIE"
_CHOICES = {
    "A": BASELINE,
    "BASELINE": BASELINE,
    "B": CANDIDATE,
    "CANDIDATE": CANDIDATE,
    "SAME": TIE,
    "TIE": TIE,
}
Label = str | float


@dataclass(frozen=True, slots=True)
class Agreement:
    """Share of equal labels over `n` pairs and Cohen's kappa, with 95% intervals: the
    share's exact Clopper-Pearson one, kappa's a bootstrap over pairs.

    `kappa` is None when it is undefined: both sides used one and the same label for
    every pair, so chance agreement is 1 (the share equal is still reported).
    `kappa_too_few` says why kappa has no interval where it has a value (fewer than 30
    pairs, fewer than 3 distinct label pairs, or every pair equal: `range_too_few`).
    `n_dropped` counts the pairs left out because one side said tie (`ties=False`).
    """

    agreement: float
    n: int
    kappa: float | None
    ci95: tuple[float, float] | None
    kappa_ci95: tuple[float, float] | None
    n_dropped: int = 0
    labels: tuple[Label, ...] = ()
    kappa_too_few: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """`with_ties`/`without_ties` of agreement.json (`kappa_too_few` only when set)."""
        out: dict[str, Any] = {
            "agreement": self.agreement,
            "n": self.n,
            "kappa": self.kappa,
            "ci95": list(self.ci95) if self.ci95 else None,
            "kappa_ci95": list(self.kappa_ci95) if self.kappa_ci95 else None,
            "n_dropped": self.n_dropped,
            "labels": list(self.labels),
        }
        if self.kappa_too_few is not None:
            out["kappa_too_few"] = self.kappa_too_few
        return out


def normalize_label(label: Any) -> Label:
    """`BASELINE`, `CANDIDATE` or `TIE` for a pairwise label, a float for a numeric one."""
    if isinstance(label, str):
        key = label.strip().upper()
        if key in _CHOICES:
            return _CHOICES[key]
        try:
            label = float(key)
        except ValueError:
            raise ValueError(
                f"unknown label {label!r}: use A, B, SAME, CANDIDATE, BASELINE, TIE or a number"
            ) from None
    if isinstance(label, int | float | np.integer | np.floating) and np.isfinite(label):
        return float(label)
    raise ValueError(
        f"unknown label {label!r}: use A, B, SAME, CANDIDATE, BASELINE, TIE or a number"
    )


def agreement(
    judge_labels: Sequence[Any],
    human_labels: Sequence[Any],
    *,
    ties: bool = True,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Agreement:
    """How often the judge's label equals the human's, with Cohen's kappa.

    The share's interval is Clopper-Pearson's, valid at every n; kappa's a percentile
    bootstrap over pairs where it can be valid, else None with `kappa_too_few` saying why.
    Raises ValueError for different lengths, unknown or missing labels, pairwise
    labels mixed with numbers, and no pairs (before or after leaving out ties).
    """
    judge, human = list(judge_labels), list(human_labels)
    if len(judge) != len(human):
        raise ValueError(f"{len(judge)} judge labels but {len(human)} human labels")
    if not judge:
        raise ValueError("no label pairs to compare")
    pairs = [
        (_label(j, "judge", i), _label(h, "human", i))
        for i, (j, h) in enumerate(zip(judge, human, strict=True))
    ]
    kinds = {type(x) for pair in pairs for x in pair}
    if len(kinds) > 1:
        raise ValueError("labels mix pairwise choices (A, B, SAME, ...) with numbers")
    kept = pairs if ties else [p for p in pairs if TIE not in p]
    if not kept:
        raise ValueError(f"no pairs left after leaving out ties ({len(pairs)} had a tie)")

    classes = tuple(sorted({x for pair in kept for x in pair}, key=str if str in kinds else float))
    code = {c: i for i, c in enumerate(classes)}
    j_codes = np.array([code[j] for j, _ in kept])
    h_codes = np.array([code[h] for _, h in kept])
    # Per pair: equal?, the judge's label one-hot, the human's label one-hot. Means of
    # these columns give the agreement and both label distributions, hence kappa.
    k = len(classes)
    rows = np.column_stack([j_codes == h_codes, np.eye(k)[j_codes], np.eye(k)[h_codes]])
    rows = rows.astype(float)
    share, kappa = _agreement_kappa(rows.sum(axis=0)[None, :], len(kept), k)
    kappa_value = None if np.isnan(kappa[0]) else float(kappa[0])
    too_few = None
    kappa_ci = None
    if kappa_value is not None:
        too_few = range_too_few(np.column_stack([j_codes, h_codes]), kappa_value, (-1, 1), "pairs")
    if kappa_value is not None and too_few is None:
        sums = resampled_sums(rows, n_resamples, seed)
        kappa_ci = percentile_interval(_agreement_kappa(sums, len(kept), k)[1], 0.95)
    return Agreement(
        agreement=float(share[0]),
        n=len(kept),
        kappa=kappa_value,
        ci95=clopper_pearson(int(rows[:, 0].sum()), len(kept)),
        kappa_ci95=kappa_ci,
        n_dropped=len(pairs) - len(kept),
        labels=classes,
        kappa_too_few=too_few,
    )


def _agreement_kappa(sums: np.ndarray, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Share equal and Cohen's kappa (NaN where chance agreement is 1) from column sums."""
    observed = sums[:, 0] / n
    chance = (sums[:, 1 : 1 + k] / n * sums[:, 1 + k :] / n).sum(axis=1)
    undefined = chance >= 1 - 1e-12
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = np.where(undefined, np.nan, (observed - chance) / (1 - chance))
    return observed, kappa


def _label(label: Any, side: str, index: int) -> Label:
    try:
        return normalize_label(label)
    except ValueError as exc:
        raise ValueError(f"{side} label at position {index}: {exc}") from None
