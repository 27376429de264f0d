"""A run's verdicts as OpenTelemetry `gen_ai.evaluation.result` events: one per judged
item and metric, in results order, each parented to the span its row was imported from.

The record is the GenAI conventions' (`gen_ai.evaluation.name`, `.score.value`,
`.score.label`, `.explanation`, `gen_ai.response.id`; `error.type` for an item that
failed, which never gets a score), and the evaluator's identity is under `chatjudge.*`.
An item's record holds its verdict as the run reduced it (over samples, both presentation
orders and a panel's judges): the one the summary counts and `gate` decides on. Every text
goes through the run's key masking and `--redact`.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chatjudge import secrets
from chatjudge.__about__ import __version__
from chatjudge.formats.results import ResultRecord
from chatjudge.formats.run_info import RunInfo
from chatjudge.protocols import BASELINE, CANDIDATE, TIE, Protocol, protocol_sha256
from chatjudge.protocols.kinds import Kind, kind_of
from chatjudge.rundir import RunDir
from chatjudge.traces.redact import Redactor
from chatjudge.traces.rows import otel_id

EVENT = "gen_ai.evaluation.result"
# The evaluator fingerprint and its parts (`chatjudge.evaluator.*`), where run.json has them
# (judges and options as canonical JSON text); a run older than the fingerprint has none.
EVALUATOR_PARTS = ("fingerprint", "protocol_sha256", "judges", "options", "verdict_parsing")
# The evaluator's identity: the same on every record of a run.
IDENTITY = (
    "chatjudge.protocol",
    "chatjudge.protocol.sha256",
    "chatjudge.judge",
    "chatjudge.version",
    "chatjudge.run_id",
    *(f"chatjudge.evaluator.{part}" for part in EVALUATOR_PARTS),
)
# The candidate's side of a choice, as a score: a win, a loss, half of each.
CHOICE_VALUES = {CANDIDATE: 1.0, BASELINE: 0.0, TIE: 0.5}
# An error's class, as the run writes it first: `ServerError: ...`, `no valid verdict: ...`.
_ERROR_CLASS = re.compile(r"([A-Za-z][A-Za-z _]{0,39}):")


@dataclass(frozen=True, slots=True)
class Evaluation:
    """One log record: its attributes, and the span it belongs to (lowercase hex ids, or
    None for a row that came from no span)."""

    attributes: dict[str, Any]
    trace_id: str | None
    span_id: str | None


@dataclass(frozen=True)
class Source:
    """What every record of one run shares: when the verdicts were made, who made them."""

    time_unix_nano: int
    identity: dict[str, str]


def open_run(run: RunDir, protocol: str | Path | None = None) -> tuple[Source, Protocol]:
    """The run's identity and protocol; a custom protocol's file must be given (its name
    is all that run.json holds), and must be the one the run was judged with."""
    info = run.info
    summary = run.summary
    proto = run.protocol(protocol)
    created = dt.datetime.fromisoformat(summary.created)
    identity = {
        "chatjudge.protocol": proto.name,
        "chatjudge.protocol.sha256": protocol_sha256(proto),
        "chatjudge.judge": summary.judge,
        "chatjudge.version": info.chatjudge_version or __version__,
        "chatjudge.run_id": run.path.resolve().name,
        **_evaluator(info),
    }
    seconds = int(created.timestamp())
    return Source(seconds * 1_000_000_000 + created.microsecond * 1000, identity), proto


def _evaluator(info: RunInfo) -> dict[str, str]:
    """`chatjudge.evaluator.*`: the fingerprint and what it hashes, as text."""
    if info.evaluator is None:
        return {}
    parts = info.evaluator.model_dump(mode="json")
    return {
        f"chatjudge.evaluator.{name}": value
        if isinstance(value, str)
        else json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        for name, value in ((p, parts[p]) for p in EVALUATOR_PARTS)
    }


def evaluations(
    run: RunDir, source: Source, protocol: Protocol, redactor: Redactor
) -> Iterator[Evaluation]:
    """Every record of the run, item by item (an item's metrics in the protocol's order)."""
    identity = {k: _clean(v, redactor) for k, v in source.identity.items()}
    kind = kind_of(protocol)
    for result in run.results():
        yield from _of_item(result, protocol, kind, identity, redactor)


def _of_item(
    result: ResultRecord,
    protocol: Protocol,
    kind: Kind,
    identity: dict[str, str],
    redactor: Redactor,
) -> Iterator[Evaluation]:
    fields = result.fields
    trace_id, span_id = otel_id(fields.get("trace_id"), 32), otel_id(fields.get("span_id"), 16)
    if trace_id is None or span_id is None:
        trace_id = span_id = None
    shared: dict[str, Any] = {"chatjudge.row_id": _clean(result.id, redactor)}
    response_id = fields.get("response_id")
    if isinstance(response_id, str) and response_id:
        shared["gen_ai.response.id"] = _clean(response_id, redactor)
    shown = kind.candidate_shown_as(result)  # which side of "Response A/B" was the candidate
    whole = _item_explanation(result, protocol)
    for name in protocol.score_names:
        attributes: dict[str, Any] = {"gen_ai.evaluation.name": name}
        if result.status == "failed":
            error = _clean(result.error or "the item failed", redactor)
            attributes["error.type"] = _error_type(error)
            attributes["chatjudge.error"] = error
        else:
            value = result.scores.get(name)
            if value is None:
                continue  # a score this item has none of (an optional one)
            if isinstance(value, str):
                attributes["gen_ai.evaluation.score.value"] = CHOICE_VALUES[value]
                attributes["gen_ai.evaluation.score.label"] = value
            else:
                attributes["gen_ai.evaluation.score.value"] = float(value)
            explanation = result.rationale.get(name, whole)
            if explanation:
                attributes["gen_ai.evaluation.explanation"] = _clean(explanation, redactor)
                if shown:
                    attributes["chatjudge.explanation.candidate_shown_as"] = shown
            if result.consistent is not None:
                attributes["chatjudge.consistent"] = result.consistent
            if result.agreement is not None:
                attributes["chatjudge.agreement"] = float(result.agreement)
        yield Evaluation({**attributes, **shared, **identity}, trace_id, span_id)


def _item_explanation(result: ResultRecord, protocol: Protocol) -> str | None:
    """A rationale keyed by none of the protocol's scores is the item's, and explains each
    of them: a deterministic scorer's (`tool-trajectory`: the calls matched, missed and
    extra), written once for the item."""
    rationale = result.rationale
    if not rationale or any(name in rationale for name in protocol.score_names):
        return None
    return "\n".join(text for text in rationale.values() if text) or None


def _error_type(message: str) -> str:
    """The error's class, low in cardinality as `error.type` must be (`ServerError`,
    `no_valid_verdict`), or the conventions' `_OTHER`."""
    found = _ERROR_CLASS.match(message)
    return found.group(1).strip().replace(" ", "_") if found else "_OTHER"


def _clean(text: str, redactor: Redactor) -> str:
    """No key (the keys the run masked, and any this process knows), no --redact match."""
    return redactor.text(secrets.mask(text))
