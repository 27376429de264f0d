"""`chatjudge export`: a finished run's verdicts to an OTLP/JSON file, or to an OpenTelemetry
collector over OTLP/HTTP, as `gen_ai.evaluation.result` log records (docs/traces.md)."""

from __future__ import annotations

import itertools
import os
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from chatjudge import secrets
from chatjudge.errors import UsageError
from chatjudge.models import registry
from chatjudge.otel.encode import BATCH, Encoder
from chatjudge.otel.records import Evaluation, evaluations, open_run
from chatjudge.otel.sdk import SCOPE, resource
from chatjudge.outputs import check_not_a_run_file
from chatjudge.rundir import prepare_output, read_run_info
from chatjudge.traces.redact import Redactor

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
    UsageError for a bad run or option, `SendError` (with the count sent) when a
    collector refuses them or cannot be reached."""
    if otlp is None and endpoint is None:
        raise UsageError("say where the records go: --otlp FILE.jsonl or --otlp-endpoint URL")
    run = Path(run)
    redactor = Redactor(redact)
    source, proto = open_run(run, protocol)
    _remember_keys(run)
    target = Path(otlp) if otlp is not None else None
    if target is not None:
        check_not_a_run_file(target, (target,), flag="--otlp")  # --overwrite does not lift it
        if target.exists() and not overwrite:
            raise UsageError(f"{target} exists: choose another file, or give --overwrite")
        prepare_output(target.parent, (target,))
    observed = time.time_ns()

    def batches(counts: _Counts) -> Iterator[list[Evaluation]]:
        records = counts.counted(evaluations(run, source, proto, redactor))
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


def _remember_keys(run: Path) -> None:
    """Mask what the run masked: the keys of every built-in provider and of the run's
    judges' providers, from this environment; and the OTLP headers' values (a backend's
    API key) in anything said about the collector."""
    providers = {*registry.BUILTIN}
    providers.update(str(j.get("provider")) for j in read_run_info(run).judges)
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


def _resource_attributes() -> dict[str, object]:
    return dict(resource().attributes)


def _write(batches: Iterator[list[Evaluation]], target: Path, encoder: Encoder) -> None:
    """One `ExportLogsServiceRequest` a line, into a temporary file renamed at the end."""
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            for batch in batches:
                fh.write(encoder.line(batch))
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
