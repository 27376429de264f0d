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
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from chatjudge import jsoncodec
from chatjudge.__about__ import __version__
from chatjudge.errors import UsageError

FORMAT = 1  # of every file below: results records, the summaries, run.json, compare.json...
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
    """One line of `results.jsonl`: an item's verdict, its calls and its input row (`fields`:
    every column of the row, the protocol's fields first, so analyses can slice by any)."""

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


class CalibratedMetric(_Record):
    """A human-calibrated (PPI++) metric: what the humans would say over all judged rows."""

    value: float
    ci95: list[float]
    n_labels: int
    effective_labels: float  # human labels alone that would give an interval this narrow
    lam: float
    judge_only: Metric
    human_only: Metric


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
    simulation: dict[str, Metric] | None = None  # simulated conversations, when judged
    style_control: dict[str, Any] | None = None  # pairwise: coefficients behind *_controlled_*
    n_skipped: int = 0  # rows left out by --skip-invalid, listed in `skipped`
    skipped: list[dict[str, Any]] = Field(default_factory=list)


class GenerationSummary(_Record):
    """`<out>.summary.json` of `chatjudge generate`."""

    format: int = FORMAT
    kind: Literal["generation"] = "generation"
    model: str
    field: str
    n_rows: int
    n_ok: int
    n_failed: int
    failures: dict[str, int]  # failed rows by cause
    metrics: dict[str, Metric]
    usage: dict[str, int]
    cost_usd: float | None
    options: dict[str, Any]
    created: str
    chatjudge_version: str
    n_skipped: int = 0
    skipped: list[dict[str, Any]] = Field(default_factory=list)


class SimulationSummary(_Record):
    """`<out>.summary.json` of `chatjudge simulate`."""

    format: int = FORMAT
    kind: Literal["simulation"] = "simulation"
    n_conversations: int
    n_ok: int
    n_failed: int
    failures: dict[str, int]  # failed conversations by cause
    plain_user_replies: int  # simulated-user replies without the requested JSON
    metrics: dict[str, Metric]
    per_sample: list[dict[str, Any]] | None = None  # several samples: each one's metrics
    spread: dict[str, float | None] | None = None  # ...and the stdev of their means
    assistant: str
    user: str
    n_rows: int
    samples: int
    max_turns: int
    usage: dict[str, dict[str, int]]  # by role: assistant, user
    options: dict[str, Any]
    created: str
    chatjudge_version: str
    n_skipped: int = 0
    skipped: list[dict[str, Any]] = Field(default_factory=list)


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
    # `--control length|style`: ratings with style covariates, next to the raw ones.
    control: Literal["length", "style"] | None = None
    controlled_ratings: list[Rating] | None = None
    style_coefficients: dict[str, float] | None = None
    calibrated: dict[str, dict[str, Any]] | None = None  # `--human`: per run, CalibratedMetric


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


def iter_results(run_dir: Path) -> Iterator[dict[str, Any]]:
    """Each line of `results.jsonl` as a dict (a `ResultRecord`'s fields).

    A line that is not JSON (a run killed while writing, a copy cut short) is a usage
    error naming the file and line, never skipped: a table that counts 40 items must not
    sit beside a page that shows 39. Re-running the run's command rewrites the file from
    the store, sending nothing.
    """
    path = run_dir / RESULTS
    with path.open("rb") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = jsoncodec.loads(line, parse_constant=_no_nan)
            except ValueError:
                raise UsageError(
                    f"{path}, line {number}, is cut off or not JSON (a run killed while "
                    "writing, or a copy cut short): run the same `chatjudge run` command again "
                    "to rewrite the results from its store (nothing is sent again)"
                ) from None
            _check_format(record, path)
            yield record


def ok_scores(run_dir: Path) -> dict[str, dict[str, Any]]:
    """Per-item scores of the items judged ok, by item id."""
    return {r["id"]: r["scores"] for r in iter_results(run_dir) if r["status"] == "ok"}


def prepare_output(directory: Path, files: tuple[Path, ...] = ()) -> None:
    """Create `directory` and check, before anything is sent, that chatjudge can write in it
    and replace `files` there: an unwritable output is a usage error, not a traceback after
    the first calls."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory):
            pass
        for path in files:
            if path.exists():
                with path.open("ab"):
                    pass
    except OSError as exc:
        where = exc.filename or directory
        raise UsageError(
            f"cannot write to {where}: {exc.strerror or exc}; choose another --out, or make it "
            "writable (chmod, chattr -i, a read-write mount)"
        ) from exc


def read_run_info(run_dir: Path) -> RunInfo:
    """The run's `run.json` (format-checked; chatjudge 0.1 wrote it without a format)."""
    path = run_dir / RUN_INFO
    if not path.is_file():
        raise UsageError(f"{run_dir} has no {RUN_INFO}: is it the directory of a chatjudge run?")
    data = jsoncodec.loads(path.read_bytes(), parse_constant=_no_nan)
    if isinstance(data, dict) and "format" not in data:  # chatjudge 0.1 wrote no format
        data["format"] = FORMAT
    _check_format(data, path)
    try:
        return RunInfo.model_validate(data)
    except ValidationError as exc:
        raise UsageError(f"{path} is not a chatjudge run.json: {_first_error(exc)}") from None


GROWTH = frozenset({"limit", "samples"})  # more rows or samples of the same run


def run_differences(
    old: RunInfo, new: RunInfo, *, data: bool = True, ignore: frozenset[str] = GROWTH
) -> list[str]:
    """What differs between two runs' data, protocol, judges and result-changing options,
    but the options in `ignore` (`data=False`: not the data, for runs of two assistants on
    the same rows)."""
    from chatjudge.options import option_fields

    found = []
    if data and old.data != new.data:
        found.append(f"data: {old.data} vs {new.data}")
    if old.protocol != new.protocol:
        found.append(f"protocol: {old.protocol} vs {new.protocol}")
    if _judges(old) != _judges(new):
        found.append(f"judges: {_judge_names(old)} vs {_judge_names(new)}")
    for name, info in option_fields("run"):
        extra = info.json_schema_extra
        if not isinstance(extra, dict) or not extra.get("fingerprint"):
            continue
        if name in ignore or name not in old.config or name not in new.config:
            continue  # an option a run of an older chatjudge did not have
        a, b = _plain(old.config[name]), _plain(new.config[name])
        if a != b:
            found.append(f"option {name}: {a!r} vs {b!r}")
    return found


def _plain(value: Any) -> Any:
    """A value as it reads back from JSON (tuples as lists), so that a run read from
    run.json and one built in memory compare equal."""
    return json.loads(json.dumps(value, default=str))


def _judges(info: RunInfo) -> list[str]:
    return sorted(json.dumps(j, sort_keys=True, default=str) for j in info.judges)


def _judge_names(info: RunInfo) -> str:
    return "+".join(str(j.get("name")) for j in info.judges)


def write_json(path: Path, model: BaseModel, *, only_set: bool = False) -> dict[str, Any]:
    """Write a file through its model; returns what was written. `only_set`: the fields its
    writer did not give are left out (a summary's sections that did not apply this time)."""
    data = model.model_dump(mode="json", exclude_unset=only_set)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return data


def dump_record(record: ResultRecord) -> dict[str, Any]:
    """A results line's content: the fields the engine gave (panel scores and simulation
    figures only where they apply), in the model's order."""
    return record.model_dump(exclude_unset=True)


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


# `chatjudge gate`: the ship decision between two versions, written by `chatjudge.analysis.gate`.
GATE = "gate.json"


class GateDifference(_Record):
    value: float
    ci95: list[float]  # two-sided 95% (slices: the Bonferroni-adjusted level in `level`)


class GateSlice(_Record):
    """One value of the `--by` column: its difference, worst first in `Gate.slices`."""

    value: str
    n_pairs: int
    difference: GateDifference
    level: float  # 1 - 0.05 / number of slices
    below_margin: bool  # the adjusted interval lies wholly below -margin
    counts: bool  # 30 rows or more: may fail the gate with --slices-must-not-regress


class GateNoise(_Record):
    """How much of the interval's width is judge noise (samples, orders, judges per row)."""

    judge_share: float
    width: float
    width_double_samples: float  # at equal call cost: twice the samples per row...
    width_double_rows: float  # ...or twice the rows
    width_floor: float  # what more samples alone can reach
    samples_per_row: float


class GateLook(_Record):
    """An earlier gate of the same runs and metric, on fewer rows."""

    n_pairs: int
    outcome: str
    difference: GateDifference
    created: str


class GateSequential(_Record):
    """`gate --sequential`: how far judging went before the outcome was decided."""

    batch: int
    batches: int
    seed: int
    rows_total: int
    rows_judged: int
    calls: int  # judge calls the judged rows needed
    calls_saved: int  # calls the rows left unjudged would have needed
    stopped: Literal["decided", "exhausted"]


class Gate(_Record):
    """`gate.json`: the outcome of `chatjudge gate` and everything behind it."""

    format: int = FORMAT
    outcome: Literal["pass", "fail", "inconclusive"]
    reason: str
    metric: str
    difference: GateDifference
    se: float
    method: str
    mde80: float
    rows_to_decide: int | None
    margin: float
    require: Literal["not-worse", "better"]
    n_pairs: int
    n_units: int
    counts: dict[str, dict[str, int]]  # per run: rows, failed, unpaired
    by: str | None
    cluster: str | None
    slices: list[GateSlice]
    noise: GateNoise | None
    mismatches: list[str]
    looks: list[GateLook]
    sequential: GateSequential | None = None
    # Corrections for the judge's biases, named as such (one pairwise run: style control;
    # --human: the candidate run's metrics as the humans would rate them).
    control: Literal["length", "style"] | None = None  # the difference is this controlled rate's
    raw_difference: GateDifference | None = None  # the raw difference, when `control` is set
    corrected: dict[str, Metric] = Field(default_factory=dict)
    style_control: dict[str, Any] | None = None  # coefficients and the plain sentence
    calibrated: dict[str, CalibratedMetric] = Field(default_factory=dict)
    runs: dict[str, str]  # role (baseline, candidate, run) -> run directory
    created: str
    chatjudge_version: str


def read_gate(path: Path) -> Gate:
    """A `gate.json`; another format, or not a gate, is a usage error."""
    data = jsoncodec.loads(path.read_bytes(), parse_constant=_no_nan)
    _check_format(data, path)
    try:
        return Gate.model_validate(data)
    except ValidationError as exc:
        raise UsageError(f"{path} is not a chatjudge gate: {_first_error(exc)}") from None


class Agreement(_Record):
    """`agreement.json`: a judge against human raters (`chatjudge agree`), and the run's
    metrics calibrated by the human labels (`calibrated`)."""

    format: int = FORMAT
    run: str
    human: str
    column: str
    protocol: str
    judge: str
    n_items: int
    with_ties: dict[str, Any] | None = None  # pairwise
    without_ties: dict[str, Any] | None = None
    score: str | None = None  # pointwise
    correlation: dict[str, Any] | None = None
    krippendorff_alpha: dict[str, Any] | None = None
    calibrated: dict[str, CalibratedMetric] = Field(default_factory=dict)
    # Columns used, labelled rows the judge did not judge, warnings about the sample.
    calibration: dict[str, Any] | None = None
