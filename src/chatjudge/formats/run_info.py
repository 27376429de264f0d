"""`run.json`: what `chatjudge run` ran (never a key), written before its first call."""

from __future__ import annotations

from typing import Any

from chatjudge.__about__ import __version__
from chatjudge.formats.provenance import Evaluator
from chatjudge.formats.shared import Versioned


def _from_0(data: dict[str, Any]) -> dict[str, Any]:
    """chatjudge 0.1 wrote run.json without `format`; its fields are version 1's."""
    return data


class RunInfo(Versioned):
    """`run.json`: what was run (never a key)."""

    WHAT = "run.json"
    UPGRADES = {0: _from_0}
    UNVERSIONED = 0

    format: int = 1
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
    # The protocol's hash (`chatjudge.protocols.protocol_sha256`): a protocol given for this
    # run later (`export -p`, `align -p`, `gate -p`, a resumed run) must have it. Runs of
    # older chatjudge versions lack it: unknown, never refused.
    protocol_sha256: str | None = None
    # The evaluator fingerprint and its parts (`chatjudge.verdicts.evaluator`): what decides
    # a verdict. Runs of older chatjudge versions lack it: shown as "—", never a change.
    evaluator: Evaluator | None = None
