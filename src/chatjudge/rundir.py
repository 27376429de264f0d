"""The run directory and the outputs beside produced rows: their file names and paths,
where a command may write (`prepare_output`), a run read typed (`RunDir`), and what
differs between two runs or outputs.

Everything that reads a run (`report`, `compare`, `agree`, `gate`, `merge`, `export`,
`EvalResult.table`) opens it as a `RunDir`, whose files are the records of
`chatjudge.formats` (the documented contract of `docs/formats.md`): a file of an older
format is upgraded, one this chatjudge does not know is refused with a clear message
instead of being misread.
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
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chatjudge.errors import UsageError
from chatjudge.formats.io import read_model
from chatjudge.formats.results import ResultRecord, read_results
from chatjudge.formats.run_info import RunInfo
from chatjudge.formats.summary import Summary
from chatjudge.writing import open_write

if TYPE_CHECKING:
    from chatjudge.formats.produced import ProducedInfo
    from chatjudge.protocols import Protocol

RESULTS, SUMMARY, STORE, RUN_INFO, REPORT = (
    "results.jsonl",
    "summary.json",
    "calls.sqlite",
    "run.json",
    "report.html",
)
COMPARISON, COMPARISON_REPORT, AGREEMENT = "compare.json", "compare.html", "agreement.json"
GATE = "gate.json"  # `chatjudge gate`'s, in the candidate run's directory unless --out
RUN_FILES = frozenset({RESULTS, SUMMARY, STORE, RUN_INFO, REPORT})  # only `run` writes these
RUNS_ROOT = Path("chatjudge-runs")


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


def default_output(
    data_name: str, command: str, models: list[str], options: dict[str, Any]
) -> Path:
    """`chatjudge-runs/<data>-<command>-<models>-<hash>.jsonl`: the same command resumes."""
    folder = default_out_dir(data_name, command, models, options)
    return folder.with_name(folder.name + ".jsonl")


class RunDir:
    """A run's directory, read through its formats: `info` (run.json), `summary`,
    `results()` and the run's `protocol`. Opening one reads nothing; each file is read
    when first asked for (results each time, streamed), so that a command that needs
    only run.json of many runs reads only those. A missing or damaged file is a usage
    error naming it; a file of an older format is upgraded on read."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"RunDir({str(self.path)!r})"

    @cached_property
    def info(self) -> RunInfo:
        """`run.json`, upgraded from an older format (chatjudge 0.1 wrote no `format`)."""
        path = self.path / RUN_INFO
        if not path.is_file():
            raise UsageError(
                f"{self.path} has no {RUN_INFO}: is it the directory of a chatjudge run?"
            )
        return read_model(path, RunInfo)

    @cached_property
    def summary(self) -> Summary:
        """`summary.json`, of a finished run: one with its results beside it."""
        self._require(SUMMARY, RESULTS)
        return read_model(self.path / SUMMARY, Summary)

    def results(self) -> Iterator[ResultRecord]:
        """Each line of `results.jsonl`, as its validated record, read as it is iterated
        (a run may hold millions of items)."""
        self._require(RESULTS)  # now, not at the first item
        return read_results(self.path / RESULTS)

    def ok_scores(self) -> dict[str, dict[str, Any]]:
        """Per-item scores of the items judged ok, by item id."""
        return {r.id: r.scores for r in self.results() if r.status == "ok"}

    def protocol(self, given: str | Path | Protocol | None = None) -> Protocol:
        """The protocol the run was judged with: a built-in one by the name run.json
        holds, or `given` (`--protocol`: a custom protocol's file, as run.json keeps only
        its name), refused unless it is the run's by name and by hash."""
        from chatjudge.protocols import BUILTIN, check_recorded, get_protocol

        name = self.info.protocol
        if given is not None:
            return check_recorded(get_protocol(given), self.info, str(self.path))
        if name not in BUILTIN:
            raise UsageError(
                f"{self.path} was judged with the custom protocol {name!r}: give its file "
                "with --protocol FILE.toml"
            )
        return get_protocol(name)

    def _require(self, *names: str) -> None:
        for name in names:
            if not (self.path / name).is_file():
                raise UsageError(
                    f"{self.path} has no {name}: is it the directory of a finished run?"
                )


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
                with open_write(path, append=True):  # opened, not written: a link refused
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
    elif None not in (old.protocol_sha256, new.protocol_sha256) and (
        old.protocol_sha256 != new.protocol_sha256
    ):  # the same name, another template or rule (a run of an older chatjudge has none)
        found.append(f"protocol {new.protocol} sha256: {old.protocol_sha256} vs "
                     f"{new.protocol_sha256}")  # fmt: skip
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
