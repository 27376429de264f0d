"""Human-calibrated metrics of a run: its judge's verdicts corrected by a few human labels.

The human file is the one `chatjudge agree` reads (JSONL or CSV, an `id` column, one row
per rating; several raters per row are averaged: the estimand is the expected rating of
a random rater). Which metric a column calibrates:
- pairwise runs: the rating column (`--column`, else `label`, `human`, `pairwise_choice`,
  `choice` or `score`) holds A/B/SAME or CANDIDATE/BASELINE/TIE; it calibrates the
  preference (ties count half) and the win, loss and tie rates;
- pointwise runs: a column named like a score (`accuracy`, `interactivity`) calibrates
  the metrics built on that score (`interactivity` and `itr` both); otherwise the rating
  column calibrates `--score` (default: the protocol's first score).
Every metric gets the PPI++ estimate (`chatjudge.stats.ppi`) over the rows judged ok.

A file naming an id the run does not have, a row without any rating, or a rating that is
not a label or a number is refused with its row number and field. Rows labelled but not
judged (their items failed) are counted and listed. PPI needs the labelled rows to be a
random sample of the run: a warning says when their mean length differs from the rest's
by more than `LENGTH_GAP`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from chatjudge.data.sources import Source
from chatjudge.errors import UsageError
from chatjudge.formats.results import ResultRecord
from chatjudge.protocols import BUILTIN, get_protocol
from chatjudge.protocols.kinds import PREFERENCE, Kind, kind_named
from chatjudge.protocols.spec import BASELINE, CANDIDATE, TIE, MetricSpec
from chatjudge.rundir import RunDir
from chatjudge.stats.intervals import SHARE, UNBOUNDED, Range
from chatjudge.stats.label_agreement import normalize_label
from chatjudge.stats.ppi import ppi_mean
from chatjudge.stats.style import response_text

RATING_COLUMNS = ("label", "human", "pairwise_choice", "choice", "score")
LENGTH_GAP = 0.25  # relative difference of mean length that makes the sample suspect
_PREFERENCE = {CANDIDATE: 1.0, TIE: 0.5, BASELINE: 0.0}
MAX_LISTED = 20

Metric = Callable[[Any], float]  # a rating or a judge score -> the metric's per-row value


def calibrate_run(
    run_dir: Path, human_path: Path, *, column: str | None = None, score: str | None = None
) -> dict[str, Any]:
    """The run's human-calibrated metrics: `{"calibrated": {metric: {...}}, "columns",
    "n_labelled", "n_labelled_not_judged", "labelled_not_judged", "warnings"}`."""
    run = RunDir(run_dir)
    summary = run.summary
    records = list(run.results())
    columns, ratings = read_ratings(run, human_path, records, column=column, score=score)
    judged = {r.id: r for r in records if r.status == "ok"}
    order = [r.id for r in records if r.status == "ok"]
    labelled = set().union(*(set(by_id) for by_id in ratings.values()))
    not_judged = sorted(labelled - set(judged))
    out: dict[str, Any] = {
        "columns": columns,
        "n_labelled": len(labelled & set(judged)),
        "n_labelled_not_judged": len(not_judged),
        "labelled_not_judged": not_judged[:MAX_LISTED],
        "warnings": [],
        "calibrated": {},
    }
    kind = kind_named(summary.kind, summary.scorer)
    for name, (source, metric) in _metrics(kind, summary.protocol, columns).items():
        by_id = ratings[source]
        ids = [i for i in order if i in by_id]
        if len(ids) < 2:
            out["warnings"].append(f"{name}: fewer than two judged rows are labelled")
            continue
        judge_of = _judge_value(kind, source)
        judge_all = np.array([metric(judge_of(judged[i])) for i in order])
        judge_labelled = np.array([metric(judge_of(judged[i])) for i in ids])
        human = np.array([np.mean([metric(v) for v in by_id[i]]) for i in ids])
        bounds = _range(kind, summary.protocol, name)
        known = UNBOUNDED if bounds is None else Range(*bounds)
        if kind.prefers:
            known = SHARE  # a vote's share: 0/1, or halves with ties, as the values say
        found = ppi_mean(judge_all, judge_labelled, human, known=known).to_dict()
        out["calibrated"][name] = clipped(found, bounds)
    gap = _length_gap([judged[i] for i in order], labelled)
    if gap is not None:
        out["warnings"].append(gap)
    return out


def read_ratings(
    run: RunDir,
    human_path: Path,
    records: list[ResultRecord],
    *,
    column: str | None = None,
    score: str | None = None,
) -> tuple[dict[str, str], dict[str, dict[str, list[Any]]]]:
    """`(columns, ratings)`: which score each file column rates (pairwise: the
    preference), and per rated score each labelled id's ratings (pairwise labels as
    CANDIDATE/BASELINE/TIE, scores as floats); a bad file is a usage error naming the row
    and field. `records`: the run's results."""
    summary = run.summary
    kind = kind_named(summary.kind, summary.scorer)
    frame = read_label_frame(human_path)
    if kind.prefers:
        rating = _rating_column(frame, column, human_path)
        columns = {rating: PREFERENCE}
    else:
        columns = _score_columns(frame, column, score, summary.protocol, records, human_path)
    known = {r.id for r in records}
    return columns, _ratings(frame, columns, known, human_path, run.path, kind)


def read_label_frame(path: Path) -> Any:
    """A human labels file (JSONL or CSV) as a DataFrame indexed by row number (the line,
    for JSONL), or a usage error naming the file and the row. Read as `run` reads data, so
    a file the data reader takes (a byte-order mark, say) is taken here too."""
    import pandas as pd

    if not path.is_file():
        raise UsageError(f"human labels file not found: {path}")
    if path.suffix.lower() not in (".jsonl", ".ndjson", ".csv"):
        raise UsageError(f"{path}: human labels must be .jsonl or .csv")
    rows, numbers = [], []
    for raw in Source(path):
        if raw.data is None:
            raise UsageError(f"{path}: row {raw.number}: {raw.error}")
        rows.append(raw.data)
        numbers.append(raw.number)
    frame = pd.DataFrame.from_records(rows, index=numbers)
    if "id" not in frame.columns:
        raise UsageError(f"{path}: no 'id' column")
    return frame


def _rating_column(frame: Any, column: str | None, path: Path) -> str:
    if column is not None:
        if column not in frame.columns:
            raise UsageError(f"{path}: no column '{column}'")
        return column
    found = next((c for c in RATING_COLUMNS if c in frame.columns), None)
    if found is None:
        raise UsageError(
            f"{path}: name the rating column with --column (found {list(frame.columns)})"
        )
    return found


def _score_columns(
    frame: Any,
    column: str | None,
    score: str | None,
    protocol: str,
    records: list[ResultRecord],
    path: Path,
) -> dict[str, str]:
    """File column -> the score it rates: columns named like scores, else one rating column."""
    scores = _score_names(protocol, records)
    named = {c: c for c in frame.columns if c in scores and c != column}
    if column is None and named:
        return named
    rating = _rating_column(frame, column, path)
    target = score or (rating if rating in scores else scores[0] if scores else None)
    if target is None or target not in scores:
        raise UsageError(f"--score {target!r} is not a score of this run: use one of {scores}")
    return {rating: target}


def _score_names(protocol: str, records: list[ResultRecord]) -> list[str]:
    if protocol in BUILTIN:
        return [s.name for s in get_protocol(protocol).scores]
    first: dict[str, Any] = next((r.scores for r in records if r.status == "ok"), {})
    return [k for k, v in first.items() if isinstance(v, int | float)]


def _ratings(
    frame: Any, columns: dict[str, str], known: set[str], path: Path, run_dir: Path, kind: Kind
) -> dict[str, dict[str, list[Any]]]:
    """Per rated score (or the preference), each labelled id's ratings, checked row by row."""
    out: dict[str, dict[str, list[Any]]] = {t: defaultdict(list) for t in columns.values()}
    records = frame.to_dict(orient="records")
    for number, row in zip(frame.index, records, strict=True):
        item = row.get("id")
        if _missing(item):
            raise UsageError(f"{path}: row {number}, field 'id': missing id")
        item_id = str(item).strip()
        if item_id not in known:
            raise UsageError(
                f"{path}: row {number}, field 'id': unknown id {item_id!r}: no item of {run_dir} "
                "has it"
            )
        present = [c for c in columns if not _missing(row.get(c))]
        if not present:
            raise UsageError(f"{path}: row {number}, field '{next(iter(columns))}': missing label")
        for c in present:
            out[columns[c]][item_id].append(_checked(row[c], kind, path, number, c))
    return {target: dict(by_id) for target, by_id in out.items()}


def _checked(value: Any, kind: Kind, path: Path, number: int, column: str) -> Any:
    """A pairwise label as CANDIDATE/BASELINE/TIE, a score as a float; else a usage error."""
    try:
        label = normalize_label(value)
    except ValueError:
        label = None
    if kind.prefers and label not in _PREFERENCE:
        raise UsageError(
            f"{path}: row {number}, field '{column}': bad value {value!r}: use A, B, SAME, "
            "CANDIDATE, BASELINE or TIE"
        )
    if not kind.prefers and not isinstance(label, float):
        raise UsageError(
            f"{path}: row {number}, field '{column}': bad value {value!r}: not a number"
        )
    return label


def _missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and not value.strip()


def _metrics(kind: Kind, protocol: str, columns: dict[str, str]) -> dict[str, tuple[str, Metric]]:
    """Metric name -> (the rated score it is built on, how a rating becomes its value)."""
    if kind.prefers:
        out: dict[str, tuple[str, Metric]] = {PREFERENCE: (PREFERENCE, _PREFERENCE.__getitem__)}
        for side, name in ((CANDIDATE, "candidate_win_rate"), (BASELINE, "baseline_win_rate")):
            out[name] = (PREFERENCE, _equals(side))
        out["tie_rate"] = (PREFERENCE, _equals(TIE))
        return out
    rated = set(columns.values())
    if protocol in BUILTIN:
        specs = [m for m in get_protocol(protocol).metrics if m.source in rated]
        return {m.name: (m.source, _transform(m)) for m in specs}
    return {name: (name, float) for name in columns.values()}


def _range(kind: Kind, protocol: str, metric: str) -> tuple[float, float] | None:
    """What `metric` can be: a rate's [0, 1], a built-in score's range transformed as the
    metric transforms it; None where the run does not say (a custom protocol's score)."""
    if kind.prefers:
        return (0.0, 1.0)
    if protocol not in BUILTIN:
        return None
    proto = get_protocol(protocol)
    spec = next(m for m in proto.metrics if m.name == metric)
    score = next((s for s in proto.scores if s.name == spec.source), None)
    if score is None:
        return None
    low, high = sorted((end + spec.offset) * spec.scale for end in (score.min, score.max))
    return (low, high)


def clipped(found: dict[str, Any], bounds: tuple[float, float] | None) -> dict[str, Any]:
    """A calibrated figure (and its judge-only and human-only ones) within the metric's
    range: a normal interval, and PPI's correction, can reach past it (a rate of 1.03)."""
    if bounds is None:
        return found
    low, high = bounds

    def within(figure: dict[str, Any]) -> dict[str, Any]:
        value, ci = figure["value"], figure["ci95"]
        return {
            **figure,
            "value": None if value is None else min(max(value, low), high),
            "ci95": None if ci is None else [min(max(v, low), high) for v in ci],
        }

    return {**within(found), "judge_only": within(found["judge_only"]),
            "human_only": within(found["human_only"])}  # fmt: skip


def _equals(side: str) -> Metric:
    return lambda label: 1.0 if label == side else 0.0


def _transform(spec: MetricSpec) -> Metric:
    return lambda value: (float(value) + spec.offset) * spec.scale


def _judge_value(kind: Kind, source: str) -> Callable[[ResultRecord], Any]:
    if kind.prefers:
        return lambda record: record.scores["pairwise_choice"]
    return lambda record: float(record.scores[source])


def _length_gap(records: list[ResultRecord], labelled: set[str]) -> str | None:
    """A warning when the labelled rows' mean length differs visibly from the others'."""
    lengths = np.array([_length(r.fields) for r in records], dtype=float)
    mask = np.array([r.id in labelled for r in records])
    if mask.sum() < 2 or (~mask).sum() < 2:
        return None
    inside, outside = lengths[mask].mean(), lengths[~mask].mean()
    if outside <= 0 or abs(inside - outside) / outside <= LENGTH_GAP:
        return None
    direction = "longer" if inside > outside else "shorter"
    return (
        f"the labelled rows are {abs(inside - outside) / outside:.0%} {direction} on average "
        f"than the rest ({inside:,.0f} vs {outside:,.0f} characters): PPI needs the labelled "
        "rows to be a random sample of the run, so the calibrated figures may be off"
    )


def _length(fields: dict[str, Any]) -> int:
    return sum(len(response_text(v)) for v in fields.values() if isinstance(v, str | list))
