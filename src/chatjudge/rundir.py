"""The run directory: its file names, the typed records in them, and the one way to read them.

Everything that reads a run (`report`, `compare`, `agree`, `EvalResult.table`) goes
through here, and a file of a format this chatjudge does not know is refused with a
clear message instead of being misread. The models are the documented contract of
`docs/formats.md`; readers allow fields they do not know (additions within a format),
and a test holds the engine's output to exactly these fields.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

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
RUN_FILES = frozenset({RESULTS, SUMMARY, STORE, RUN_INFO, REPORT})  # only `run` writes these
RUNS_ROOT = Path("chatjudge-runs")
M = TypeVar("M", bound=BaseModel)


class Record(BaseModel):
    # Built when first used, not on import: a run uses a few of these models (about 20 ms
    # of a small run's CPU for those it does not; issue 29, item 8).
    model_config = ConfigDict(extra="allow", defer_build=True)


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


class ResultRecord(Record):
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


class Metric(Record):
    value: float | None
    ci95: list[float] | None
    n: int


class RoleCostRecord(Record):
    """One role's cost in USD (None: a price is unknown) and where its prices came from."""

    usd: float | None
    priced: bool
    source: str
    # Replies with more output tokens than their call's max_tokens (a server that ignores
    # it): charged their real tokens, so they can take the spend over a budget.
    over_cap_replies: int = 0


class BudgetRecord(Record):
    """`--max-cost-usd`: the limit, and whether it stopped the command before the end."""

    max_usd: float
    spent_usd: float  # as the budget counts it: a reply without token counts at its worst case
    reached: bool  # True: the command stopped there (exit 4); the same command resumes
    done: int  # items (run) or rows/conversations (generate, simulate) finished and written
    total: int  # ... of those the command had to do


class Cost(Record):
    """A command's cost by role (judge; model_under_test; assistant, simulated_user)."""

    roles: dict[str, RoleCostRecord]
    total_usd: float | None  # None when any role's price is unknown
    unpriced: list[str]  # the roles whose price is unknown
    budget: BudgetRecord | None = None  # with --max-cost-usd


class Summary(Record):
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
    cost_usd: float | None  # = cost.total_usd
    cost: Cost | None = None  # by role
    per_judge: dict[str, Any]
    created: str
    chatjudge_version: str
    simulation: dict[str, Metric] | None = None  # simulated conversations, when judged
    style_control: dict[str, Any] | None = None  # pairwise: coefficients behind *_controlled_*
    n_skipped: int = 0  # rows left out by --skip-invalid, listed in `skipped`
    skipped: list[dict[str, Any]] = Field(default_factory=list)


class ShardRecord(Record):
    """`--shard I/N` of `generate` or `simulate`: which shard of which data, and where its rows
    stand among all rows, so that `chatjudge merge` puts the shards' rows back in input order."""

    shard: str  # I/N
    data: str  # the input's name
    indexes: list[int]  # each input row's position among all rows, in the order written
    data_sha256: str | None = None  # the data's fingerprint (see `RunInfo.data_sha256`)


class GenerationSummary(Record):
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
    cost_usd: float | None  # = cost.total_usd
    cost: Cost | None = None  # by role
    options: dict[str, Any]
    created: str
    chatjudge_version: str
    n_skipped: int = 0
    skipped: list[dict[str, Any]] = Field(default_factory=list)
    shard: ShardRecord | None = None  # with --shard


class SimulationSummary(Record):
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
    cost: Cost | None = None  # by role: assistant, simulated_user
    options: dict[str, Any]
    created: str
    chatjudge_version: str
    n_skipped: int = 0
    skipped: list[dict[str, Any]] = Field(default_factory=list)
    shard: ShardRecord | None = None  # with --shard


class RunInfo(Record):
    """`run.json`: what was run (never a key)."""

    format: int = FORMAT
    protocol: str
    judges: list[dict[str, Any]]
    config: dict[str, Any]  # every option's value, by name
    data: str
    n_rows: int
    chatjudge_version: str = __version__
    # The data's fingerprint: the SHA-256 of the file's bytes, or of the rows' ids and count
    # (data from Python). `chatjudge merge` refuses shards of different data by it; runs of
    # older chatjudge versions lack it.
    data_sha256: str | None = None


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
    """What `generate` and `simulate` write: the rows (JSONL), and beside them their store,
    summary and record, named after the rows' file (`out.jsonl`, `out.calls.sqlite`,
    `out.summary.json`, `out.run.json`), so that the same `--out` resumes. `import` writes
    the rows and the record."""

    rows: Path

    @property
    def store(self) -> Path:
        return self.rows.with_name(self.rows.stem + ".calls.sqlite")

    @property
    def summary(self) -> Path:
        return self.rows.with_name(self.rows.stem + ".summary.json")

    @property
    def record(self) -> Path:
        return self.rows.with_name(self.rows.stem + ".run.json")


class ProducedInfo(Record):
    """`<out>.run.json`: which command wrote the rows beside it, from what data, models and
    options (never a key). `generate` and `simulate` write it before their first call, as
    `run` writes `run.json`, and `import` with its rows: the same command resumes (or
    rewrites) that output, any other is refused unless `--overwrite` (`chatjudge.outputs`)."""

    format: int = FORMAT
    command: Literal["generate", "simulate", "import"]
    models: dict[str, str]  # by role: model_under_test; assistant, simulated_user; import none
    field: str | None = None  # generate: the field its replies fill
    data: str  # the input's name, as `run.json`'s (import: its files' names)
    options: dict[str, Any]  # every option's value, by name
    chatjudge_version: str = __version__


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
    return read_model(run_dir / SUMMARY, Summary, "summary")


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


def prepare_output(directory: Path, files: tuple[Path, ...] = (), *, create: bool = True) -> None:
    """Create `directory` and check, before anything is sent, that chatjudge can write in it
    and replace `files` there: an unwritable output is a usage error, not a traceback after
    the first calls. `create=False` (a dry run) checks the same and creates nothing."""
    try:
        if not create:
            _writable_without_creating(directory, files)
            return
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


def _writable_without_creating(directory: Path, files: tuple[Path, ...]) -> None:
    """`prepare_output`'s checks by permission only: the nearest existing folder, and the
    files already there, can be written."""
    existing = directory
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "not a directory", str(existing))
    for path in (existing, *(f for f in files if f.exists())):
        if not os.access(path, os.W_OK):
            raise PermissionError(errno.EACCES, "permission denied", str(path))


def read_run_info(run_dir: Path) -> RunInfo:
    """The run's `run.json` (format-checked; chatjudge 0.1 wrote it without a format)."""
    path = run_dir / RUN_INFO
    if not path.is_file():
        raise UsageError(f"{run_dir} has no {RUN_INFO}: is it the directory of a chatjudge run?")
    data = _load(path, RUN_INFO)
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
    found = []
    if data and old.data != new.data:
        found.append(f"data: {old.data} vs {new.data}")
    if old.protocol != new.protocol:
        found.append(f"protocol: {old.protocol} vs {new.protocol}")
    if _judges(old) != _judges(new):
        found.append(f"judges: {_judge_names(old)} vs {_judge_names(new)}")
    return found + option_differences(old.config, new.config, "run", ignore=ignore)


def produced_differences(old: ProducedInfo, new: ProducedInfo) -> list[str]:
    """What differs between two outputs' command, data, models and result-changing options
    (more rows or samples are the same output, resumed)."""
    if old.command != new.command:
        return [f"command: {old.command} vs {new.command}"]
    found = [f"data: {old.data} vs {new.data}"] if old.data != new.data else []
    for role in sorted(old.models.keys() | new.models.keys()):
        a, b = old.models.get(role), new.models.get(role)
        if a != b:
            found.append(f"{role}: {a} vs {b}")
    if old.field != new.field:
        found.append(f"field: {old.field} vs {new.field}")
    if new.command != "import":
        return found + option_differences(old.options, new.options, new.command, ignore=GROWTH)
    for name in sorted(old.options.keys() | new.options.keys()):  # import's all change rows
        a, b = plain(old.options.get(name)), plain(new.options.get(name))
        if a != b:
            found.append(f"option {name}: {a!r} vs {b!r}")
    return found


def option_differences(
    old: Mapping[str, Any], new: Mapping[str, Any], command: str, *, ignore: frozenset[str]
) -> list[str]:
    """The result-changing options of `command` whose values differ between two option
    sets (by name), but those in `ignore` and those one of them lacks (an option a command
    of an older chatjudge did not have)."""
    from chatjudge.options import option_fields

    found = []
    for name, info in option_fields(command):
        extra = info.json_schema_extra
        if not isinstance(extra, dict) or not extra.get("fingerprint"):
            continue
        if name in ignore or name not in old or name not in new:
            continue
        a, b = plain(old[name]), plain(new[name])
        if a != b:
            found.append(f"option {name}: {a!r} vs {b!r}")
    return found


def plain(value: Any) -> Any:
    """A value as it reads back from JSON (tuples as lists), so that a run read from
    run.json and one built in memory compare equal."""
    return json.loads(json.dumps(value, default=str))


def _judges(info: RunInfo) -> list[str]:
    return sorted(json.dumps(j, sort_keys=True, default=str) for j in info.judges)


def _judge_names(info: RunInfo) -> str:
    return "+".join(str(j.get("name")) for j in info.judges)


def write_json(path: Path, model: BaseModel, *, only_set: bool = False) -> dict[str, Any]:
    """Write a file through its model; returns what was written. `only_set`: the fields its
    writer did not give are left out (a summary's sections that did not apply this time).
    A NaN or infinite number is written as null: `json` would write `NaN`, which is not
    JSON and which strict parsers (and `jq`, and browsers) refuse."""
    data = jsoncodec.finite(model.model_dump(mode="json", exclude_unset=only_set))
    path.write_text(json.dumps(data, indent=2, allow_nan=False) + "\n", encoding="utf-8")
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


def read_model(path: Path, model: type[M], what: str) -> M:
    """A JSON file of `model`'s format; another format, or not that kind of file, is a
    usage error naming the file."""
    data = _load(path, what)
    _check_format(data, path)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise UsageError(f"{path} is not a chatjudge {what}: {_first_error(exc)}") from None


def _load(path: Path, what: str) -> Any:
    """A JSON file's content; one that is not JSON (cut short, damaged) is a usage error."""
    try:
        return jsoncodec.loads(path.read_bytes(), parse_constant=_no_nan)
    except ValueError:
        raise UsageError(
            f"{path} is cut off or not JSON: not a chatjudge {what} as written (re-run the "
            "command that wrote it)"
        ) from None
