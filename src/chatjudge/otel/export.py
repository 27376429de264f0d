"""`chatjudge export`: a finished run's verdicts to an OTLP/JSON file, or to an OpenTelemetry
collector over OTLP/HTTP, as `gen_ai.evaluation.result` log records (docs/traces.md)."""

from __future__ import annotations

import hashlib
import itertools
import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson

from chatjudge import secrets
from chatjudge.errors import UsageError
from chatjudge.models import registry
from chatjudge.otel.encode import BATCH, Encoder
from chatjudge.otel.records import Evaluation, evaluations, open_run
from chatjudge.otel.sdk import SCOPE, resource
from chatjudge.outputs import check_written
from chatjudge.rundir import RunDir, prepare_output
from chatjudge.traces.redact import Redactor
from chatjudge.writing import replaced

HEADER_VARIABLES = ("OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_LOGS_HEADERS")


@dataclass(frozen=True)
class Exported:
    """What an export wrote or sent: records in all, and how many are parented to a span;
    `endpoint` as it may be printed (no password)."""

    records: int
    parented: int
    otlp: Path | None
    endpoint: str | None


def export_run(
    run: str | Path,
    otlp: str | Path | None = None,
    endpoint: str | None = None,
    *,
    redact: Sequence[str] = (),
    protocol: str | Path | None = None,
    overwrite: bool = False,
) -> Exported:
    """Write the run's records to `otlp` (all or nothing) and/or send them to `endpoint`;
    an earlier export at `otlp` is replaced, any other file only with `overwrite` (never a
    link, a run's file or the run's data). UsageError for a bad run or option, `SendError`
    (with the count sent) when a collector refuses them or cannot be reached."""
    if otlp is None and endpoint is None:
        raise UsageError("say where the records go: --otlp FILE.jsonl or --otlp-endpoint URL")
    opened = RunDir(run)
    redactor = Redactor(redact)
    source, proto = open_run(opened, protocol)
    _remember_keys(opened)
    target = Path(otlp) if otlp is not None else None
    if target is not None:
        _check_target(target, opened, protocol, overwrite=overwrite)
        prepare_output(target.parent, (target,))
    observed = time.time_ns()

    def batches(counts: _Counts) -> Iterator[list[Evaluation]]:
        records = counts.counted(evaluations(opened, source, proto, redactor))
        while batch := list(itertools.islice(records, BATCH)):
            yield batch

    counts = _Counts()
    if target is not None:
        encoder = Encoder(_resource_attributes(), SCOPE, source.time_unix_nano, observed)
        _write(batches(counts), target, encoder)
    if endpoint is not None:
        from chatjudge.otel.sdk import send, shown

        counts = _Counts()  # the same records again, counted as they are sent
        send(batches(counts), endpoint, source.time_unix_nano, observed)
        endpoint = shown(endpoint)
    return Exported(counts.records, counts.parented, target, endpoint)


class _Counts:
    def __init__(self) -> None:
        self.records = 0
        self.parented = 0

    def counted(self, records: Iterator[Evaluation]) -> Iterator[Evaluation]:
        for record in records:
            self.records += 1
            self.parented += record.span_id is not None
            yield record


def _remember_keys(run: RunDir) -> None:
    """Mask what the run masked: the keys of every built-in provider and of the run's
    judges' providers, from this environment; and the OTLP headers' values (a backend's
    API key) in anything said about the collector."""
    providers = {*registry.BUILTIN}
    providers.update(str(j.get("provider")) for j in run.info.judges)
    for name in sorted(providers):
        try:
            found = registry.load(name)
        except UsageError:
            continue
        if found is not None:
            secrets.remember_env(*found.secret_env_vars)
    for variable in HEADER_VARIABLES:
        for pair in os.environ.get(variable, "").split(","):
            secrets.remember(pair.partition("=")[2].strip(), variable)


def _check_target(
    target: Path, run: RunDir, protocol: str | Path | None, *, overwrite: bool
) -> None:
    """--otlp FILE by the output rule: never a link, an input, a run's file or the data the
    run judged (`--overwrite` lifts none of them); an earlier export is replaced, any other
    file only with `--overwrite`."""
    inputs = [Path(protocol)] if protocol is not None and Path(protocol).is_file() else []
    check_written(target, (target,), inputs, flag="--otlp")
    if not target.exists() or _is_export(target):
        return
    if overwrite and _is_run_data(target, run):
        raise UsageError(
            f"--otlp {target} is the data that {run.path} judged: choose another file (not even "
            "--overwrite writes over a run's data)"
        )
    if not overwrite:
        raise UsageError(
            f"{target} exists and is not an export of chatjudge: it would be replaced. Use "
            "another --otlp, or --overwrite to replace it."
        )


def _is_export(path: Path) -> bool:
    """Whether `path` is a file `export --otlp` wrote: its first line a request whose log
    records come from chatjudge's scope."""
    with path.open("rb") as lines:
        first = lines.readline()
    try:
        request = orjson.loads(first)
        scopes = [s["scope"]["name"] for r in request["resourceLogs"] for s in r["scopeLogs"]]
    except (orjson.JSONDecodeError, KeyError, TypeError):
        return False
    return bool(scopes) and all(name == SCOPE[0] for name in scopes)


def _is_run_data(path: Path, run: RunDir) -> bool:
    """Whether `path` holds the bytes of the data file `run` judged (its run.json's
    fingerprint): an input of the run, which no export replaces."""
    expected = run.info.data_sha256
    if expected is None or path.stat().st_size == 0:
        return False
    digest = hashlib.sha256()
    with path.open("rb") as data:
        while chunk := data.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest() == expected


def _resource_attributes() -> dict[str, object]:
    return dict(resource().attributes)


def _write(batches: Iterator[list[Evaluation]], target: Path, encoder: Encoder) -> None:
    """One `ExportLogsServiceRequest` a line, into a temporary file renamed at the end."""
    with replaced(target) as out:
        for batch in batches:
            out.write(encoder.line(batch))
