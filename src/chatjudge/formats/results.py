"""`results.jsonl`: one line per judged item, its verdict, its calls and its input row.

The engine builds each line as a plain dict in the model's field order (`result_row`)
and does not validate it: it knows its records are valid, and a test holds what it
writes to exactly this model. Readers validate every line (`read_results`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from chatjudge import jsoncodec
from chatjudge.errors import UsageError
from chatjudge.formats.io import no_nan, upgraded, validate
from chatjudge.formats.shared import Record, Versioned


class CallRecord(Record):
    """One judge call of an item, as `results.jsonl` holds it under `calls`."""

    judge: str
    sample: int
    flipped: bool
    status: Literal["ok", "failed"]
    scores: dict[str, Any]
    label: str | None
    rationale: dict[str, str]
    raw: str | None
    error: str | None
    cached: bool
    input_tokens: int | None
    output_tokens: int | None
    latency: float | None


class ResultRecord(Versioned):
    """One line of `results.jsonl`: an item's verdict, its calls and its input row (`fields`:
    every column of the row, the protocol's fields first, so analyses can slice by any)."""

    WHAT = "results file"

    format: int = 1
    id: str
    index: int
    status: Literal["ok", "failed"]
    scores: dict[str, Any]
    error: str | None
    consistent: bool | None
    agreement: float | None
    judge_scores: dict[str, dict[str, Any]] | None = None  # panels only
    rationale: dict[str, str]
    raw: str | None
    usage: dict[str, int]
    calls: list[CallRecord]
    fields: dict[str, Any]
    # From `chatjudge simulate` (turns, ended, assistant_tokens), when the row had them.
    simulation: dict[str, Any] | None = None
    # `tool-trajectory`: the calls compared (`chatjudge.trajectories.Scored.comparison`:
    # match, matched, expected, actual, pairs, left_at).
    tool_calls: dict[str, Any] | None = None


_VERSION = ResultRecord.version()


def result_row(
    *,
    id: str,
    index: int,
    verdict: dict[str, Any],
    rationale: dict[str, str],
    raw: str | None,
    usage: dict[str, int],
    calls: list[dict[str, Any]],
    fields: dict[str, Any],
    simulation: dict[str, Any] | None,
    tool_calls: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A results line as `ResultRecord` writes it, built without validating (the hot path of
    a run: one record an item). `verdict`: status, scores, error, consistent,
    agreement and, for panels, judge_scores; `simulation` and `tool_calls` are left out
    when None."""
    row = {
        "format": _VERSION,
        "id": id,
        "index": index,
        "status": verdict["status"],
        "scores": verdict["scores"],
        "error": verdict["error"],
        "consistent": verdict["consistent"],
        "agreement": verdict["agreement"],
    }
    if "judge_scores" in verdict:
        row["judge_scores"] = verdict["judge_scores"]
    row.update(rationale=rationale, raw=raw, usage=usage, calls=calls, fields=fields)
    if simulation is not None:
        row["simulation"] = simulation
    if tool_calls is not None:
        row["tool_calls"] = tool_calls
    return row


def read_results(path: Path) -> Iterator[ResultRecord]:
    """Each line of a `results.jsonl`, validated (and upgraded from an earlier version).

    A line that is not JSON (a run killed while writing, a copy cut short) is a usage
    error naming the file and line, never skipped: a table that counts 40 items must not
    sit beside a page that shows 39. Re-running the run's command rewrites the file from
    the store, sending nothing.
    """
    with path.open("rb") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                data = jsoncodec.loads(line, parse_constant=no_nan)
            except ValueError:
                raise UsageError(
                    f"{path}, line {number}, is cut off or not JSON (a run killed while "
                    "writing, or a copy cut short): run the same `chatjudge run` command again "
                    "to rewrite the results from its store (nothing is sent again)"
                ) from None
            record = upgraded(data, ResultRecord, path)
            yield validate(record, ResultRecord, path, f"results line (line {number})")
