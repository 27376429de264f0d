"""The run directory: its file names, the typed records in them, and the one way to read them.

Everything that reads a run (`report`, `compare`, `agree`, `EvalResult.table`) goes
through here, and a file of a format this chatjudge does not know is refused with a
clear message instead of being misread. The models are the documented contract of
`docs/formats.md`; readers allow fields they do not know (additions within a format),
and a test holds the engine's output to exactly these fields.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from chatjudge import jsoncodec
from chatjudge.__about__ import __version__
from chatjudge.errors import UsageError

FORMAT = 1  # of results records, summary.json, run.json and compare.json
RESULTS, SUMMARY, STORE, RUN_INFO, REPORT = (
    "results.jsonl",
    "summary.json",
    "calls.sqlite",
    "run.json",
    "report.html",
)
COMPARISON, COMPARISON_REPORT, AGREEMENT = "compare.json", "compare.html", "agreement.json"
RUNS_ROOT = Path("chatjudge-runs")


class _Record(BaseModel):
    model_config = ConfigDict(extra="allow")


class CallRecord(_Record):
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


class ResultRecord(_Record):
    """One line of `results.jsonl`: an item's verdict, its calls and its fields."""

    format: int = FORMAT
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


class Metric(_Record):
    value: float | None
    ci95: list[float] | None
    n: int


class Summary(_Record):
    """`summary.json`."""

    format: int = FORMAT
    protocol: str
    kind: Literal["pointwise", "pairwise"]
    judge: str
    judges: list[str]
    n_items: int
    n_ok: int
    n_failed: int
    metrics: dict[str, Metric]
    samples: int
    flip: bool
    usage: dict[str, int]
    cost_usd: float | None
    per_judge: dict[str, Any]
    created: str
    chatjudge_version: str
    n_skipped: int = 0  # rows left out by --skip-invalid, listed in `skipped`
    skipped: list[dict[str, Any]] = Field(default_factory=list)
    simulation: dict[str, Metric] | None = None  # simulated conversations, when judged


class RunInfo(_Record):
    """`run.json`: what was run (never a key)."""

    format: int = FORMAT
    protocol: str
    judges: list[dict[str, Any]]
    config: dict[str, Any]  # every option's value, by name
    data: str
    n_rows: int
    chatjudge_version: str = __version__


class Rating(_Record):
    model: str
    rating: float
    ci95: list[float] | None
    n_battles: int


class Comparison(_Record):
    """`compare.json`: Bradley-Terry ratings of several runs on the same items."""

    format: int = FORMAT
    protocol: str
    kind: Literal["pointwise", "pairwise"]
    score: str | None
    baseline: str | None
    runs: dict[str, str]
    n_items: int
    n_battles: int
    models: list[str]
    ratings: list[Rating]
    win_rates: list[list[float | None]]
    outcomes: dict[str, dict[str, int]]


def default_out_dir(
    data_name: str, protocol: str, judges: list[str], options: dict[str, Any]
) -> Path:
    """`chatjudge-runs/<data>-<protocol>-<judge>-<hash of the result-changing options>`, so
    that running the same command again finds its own store and resumes."""
    digest = hashlib.sha256(
        json.dumps({"judges": judges, "options": options}, sort_keys=True, default=str).encode()
    ).hexdigest()[:8]
    judge = re.sub(r"[^A-Za-z0-9.]+", "_", "+".join(judges))[:40]
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{data_name}-{protocol}-{judge}")
    return RUNS_ROOT / f"{name}-{digest}"


@dataclass(frozen=True)
class Produced:
    """What `generate` and `simulate` write: the rows (JSONL), and beside them their store
    and summary, named after the rows' file (`out.jsonl`, `out.calls.sqlite`,
    `out.summary.json`), so that the same `--out` resumes."""

    rows: Path

    @property
    def store(self) -> Path:
        return self.rows.with_name(self.rows.stem + ".calls.sqlite")

    @property
    def summary(self) -> Path:
        return self.rows.with_name(self.rows.stem + ".summary.json")


def default_output(
    data_name: str, command: str, models: list[str], options: dict[str, Any]
) -> Path:
    """`chatjudge-runs/<data>-<command>-<models>-<hash>.jsonl`: the same command resumes."""
    folder = default_out_dir(data_name, command, models, options)
    return folder.with_name(folder.name + ".jsonl")


def read_summary(run_dir: Path) -> Summary:
    """The run's summary; a directory without one, or of another format, is a usage error."""
    for name in (SUMMARY, RESULTS):
        if not (run_dir / name).is_file():
            raise UsageError(f"{run_dir} has no {name}: is it the directory of a finished run?")
    path = run_dir / SUMMARY
    data = jsoncodec.loads(path.read_bytes(), parse_constant=_no_nan)
    _check_format(data, path)
    try:
        return Summary.model_validate(data)
    except ValidationError as exc:
        raise UsageError(f"{path} is not a chatjudge summary: {_first_error(exc)}") from None


def iter_results(run_dir: Path) -> Iterator[dict[str, Any] | None]:
    """Each line of `results.jsonl` as a dict (a `ResultRecord`'s fields); `None` for a line
    that is not JSON: a run killed mid-write may leave a truncated last line."""
    path = run_dir / RESULTS
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            try:
                record = jsoncodec.loads(line, parse_constant=_no_nan)
            except ValueError:
                yield None
                continue
            _check_format(record, path)
            yield record


def ok_scores(run_dir: Path) -> dict[str, dict[str, Any]]:
    """Per-item scores of the items judged ok, by item id."""
    return {r["id"]: r["scores"] for r in iter_results(run_dir) if r and r["status"] == "ok"}


def write_json(path: Path, model: BaseModel | dict[str, Any]) -> None:
    data = model.model_dump(mode="json") if isinstance(model, BaseModel) else model
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def _check_format(data: Any, path: Path) -> None:
    found = data.get("format") if isinstance(data, dict) else None
    if found != FORMAT:
        raise UsageError(
            f"{path} has format {found!r}; this chatjudge ({__version__}) reads format "
            f"{FORMAT}: use the chatjudge version that wrote it"
        )


def _no_nan(_: str) -> None:
    """NaN and Infinity are not JSON: they become null so that a page can parse its data."""
    return None


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    return f"{'.'.join(map(str, error['loc']))}: {error['msg']}"
