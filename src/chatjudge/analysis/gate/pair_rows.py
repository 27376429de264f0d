"""The gate's pairing: the rows judged ok in both runs, in a fixed order, as arrays.

Rows failed or missing in one run are counted, never silently dropped; the pairing also
says what the protocol knows of one row's difference (its range, and whether it can
only be -a, 0 or a), which the statistics need to guard a small sample.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from chatjudge.analysis.gate.units import Row, RunRows, field_value
from chatjudge.errors import UsageError
from chatjudge.protocols import Protocol
from chatjudge.stats.paired import Difference, paired_difference, paired_ratio_difference


@dataclass(frozen=True, slots=True)
class Paired:
    """The rows judged ok in both runs, in a fixed order, as arrays for the statistics."""

    ids: list[str]
    candidate: np.ndarray
    baseline: np.ndarray
    candidate_inner: list[np.ndarray]
    baseline_inner: list[np.ndarray] | None  # None: one pairwise run (the baseline is 1/2)
    clusters: np.ndarray | None
    rows: list[dict[str, Any]]  # each pair's fields (the candidate's)
    bounds: tuple[float, float] | None = None  # the range of one row's difference
    three_point: bool = False  # every row's difference is -a, 0 or a (no clusters)
    # a ratio metric: each row's (numerator, denominator), n x 2 per run; Δ is then the
    # difference of the runs' ratios ΣN/ΣD, and `candidate`/`baseline` are unused
    candidate_parts: np.ndarray | None = None
    baseline_parts: np.ndarray | None = None

    def difference(
        self,
        mask: np.ndarray | None,
        boundary: float,
        level: float,
        seed: int,
        n_resamples: int = 10_000,
    ) -> Difference:
        """The paired difference over the rows in `mask` (all: None), guarded for a
        small sample as a decision at `boundary` needs."""
        keep = slice(None) if mask is None else mask
        if self.candidate_parts is not None and self.baseline_parts is not None:
            return paired_ratio_difference(
                self.candidate_parts[keep],
                self.baseline_parts[keep],
                self.clusters[keep] if self.clusters is not None else None,
                level=level,
                n_resamples=n_resamples,
                seed=seed,
            )
        return paired_difference(
            self.candidate[keep],
            self.baseline[keep],
            self.clusters[keep] if self.clusters is not None else None,
            level=level,
            n_resamples=n_resamples,
            seed=seed,
            bounds=self.bounds,
            boundary=boundary,
            three_point=self.three_point,
        )

    def point(self, mask: np.ndarray) -> float:
        """Δ over the rows in `mask`, without an interval (a slice of one unit)."""
        if self.candidate_parts is not None and self.baseline_parts is not None:
            (nc, dc), (nb, db) = self.candidate_parts[mask].sum(0), self.baseline_parts[mask].sum(0)
            return float(nc / dc - nb / db)
        return float(np.mean(self.candidate[mask] - self.baseline[mask]))

    def defined(self, mask: np.ndarray) -> bool:
        """Whether Δ has a value over the rows in `mask`: a ratio's denominators sum to
        more than 0 in both runs there (a mean always has one)."""
        if self.candidate_parts is None or self.baseline_parts is None:
            return True
        return bool(self.candidate_parts[mask, 1].sum() and self.baseline_parts[mask, 1].sum())

    @property
    def ratio(self) -> bool:
        """Whether Δ is a difference of ratio estimators (a micro metric)."""
        return self.candidate_parts is not None


def pair(
    cand: RunRows, base: RunRows | None, cluster: str | None
) -> tuple[Paired, dict[str, dict[str, int]]]:
    """The rows ok in both runs (all ok rows of one pairwise run), and per run its rows,
    failed rows and rows the other run lacks: counted, never silently dropped."""
    if base is None:
        ids = sorted((i for i, r in cand.rows.items() if r.ok), key=lambda i: _order(cand, i))
        counts = {"run": _count(cand, 0)}
    else:
        both = cand.rows.keys() & base.rows.keys()
        ids = sorted(
            (i for i in both if cand.rows[i].ok and base.rows[i].ok),
            key=lambda i: _order(cand, i),
        )
        counts = {
            "baseline": _count(base, len(base.rows.keys() - cand.rows.keys())),
            "candidate": _count(cand, len(cand.rows.keys() - base.rows.keys())),
        }
    rows = [cand.rows[i] for i in ids]
    base_rows = [base.rows[i] for i in ids] if base is not None else []
    ratio = any(r.parts is not None for r in cand.rows.values())
    if ratio and base is None:
        raise UsageError("a ratio metric compares two runs: pass --baseline DIR --candidate DIR")
    units = [r.unit for r in rows]
    if cluster is not None:
        clusters: np.ndarray | None = np.array(
            [field_value(r.id, r.fields, cluster, "--cluster") for r in rows]
        )
    elif len(set(units)) < len(units):  # samples of one source row move together
        clusters = np.array(units)
    else:
        clusters = None
    cand_parts = _parts(rows) if ratio else None
    base_parts = _parts(base_rows) if ratio else None
    paired = Paired(
        ids=ids,
        candidate=np.array([r.value for r in rows], dtype=float),
        baseline=(
            np.full(len(rows), 0.5)
            if base is None
            else np.array([base.rows[i].value for i in ids], dtype=float)
        ),
        candidate_inner=[np.array(r.inner, dtype=float) for r in rows],
        baseline_inner=(
            None if base is None else [np.array(r.inner, dtype=float) for r in base_rows]
        ),
        clusters=clusters,
        rows=[dict(r.fields) for r in rows],
        bounds=_bounds(cand, base),
        three_point=clusters is None
        and all(len(r.inner) == 1 for r in [*rows, *base_rows])
        and _three_point(cand, base),
        candidate_parts=cand_parts,
        baseline_parts=base_parts,
    )
    return paired, counts  # a ratio with no value in a run: `small.check_defined`


def _parts(rows: list[Row]) -> np.ndarray:
    """Each row's (numerator, denominator), n x 2."""
    return np.array([r.parts for r in rows], dtype=float).reshape(len(rows), 2)


def _bounds(cand: RunRows, base: RunRows | None) -> tuple[float, float] | None:
    """The range of one row's difference: the metric's range less the baseline's (one
    pairwise run: its fixed 1/2)."""
    scale = cand.scale
    if scale is None:
        return None
    if base is None:
        return (scale.low - 0.5, scale.high - 0.5)
    return (scale.low - scale.high, scale.high - scale.low)


def _three_point(cand: RunRows, base: RunRows | None) -> bool:
    """Whether one measurement's difference can only be -a, 0 or a: a vote against the
    fixed 1/2, or two 0/1 metrics (then the exact sign test is valid for the mean)."""
    scale = cand.scale
    if scale is None or scale.values is None:
        return False
    others = (0.5,) if base is None else scale.values
    found = {c - b for c in scale.values for b in others}
    reach = max(abs(d) for d in found)
    return found <= {-reach, 0.0, reach}


def _order(run: RunRows, item_id: str) -> tuple[str, str]:
    return (run.rows[item_id].unit, item_id)


def _count(run: RunRows, unpaired: int) -> dict[str, int]:
    return {
        "rows": len(run.rows),
        "failed": run.failed,
        "no_value": run.no_value,
        "unpaired": unpaired,
    }


def same_baseline(proto: Protocol, base: RunRows, cand: RunRows) -> None:
    """Two pairwise runs compare only against one baseline: the same response per item."""
    assert proto.swap is not None
    name = proto.swap[0]
    differ = [
        i
        for i in sorted(base.rows.keys() & cand.rows.keys())
        if base.rows[i].fields.get(name) != cand.rows[i].fields.get(name)
    ]
    if differ:
        shown = ", ".join(repr(i) for i in differ[:5]) + (" ..." if len(differ) > 5 else "")
        raise UsageError(
            f"the two pairwise runs judged different {name} on {len(differ)} matched "
            f"item(s) ({shown}): they are not against the same baseline (--allow-mismatch)"
        )
