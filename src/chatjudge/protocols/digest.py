"""A protocol's SHA-256 (`protocol_sha256` in run.json and in every exported record), and the
check that a protocol given for a finished run is the one it was judged with.

run.json once kept only a protocol's name, so an edited template of the same name passed
for the original. The hash is over what changes a verdict or its reading, in canonical JSON
(sorted keys, compact, UTF-8): the template and output instruction, the fields, the scores
(paths, ranges), the choice (labels and sides), the metrics, the swap and, for a
deterministic protocol, its scorer and what it scores (`tool-trajectory`'s match rules). The
name, the descriptions and an aligned protocol's provenance are words for people: a copy
under another name is the same evaluator.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from chatjudge.errors import UsageError
from chatjudge.formats.run_info import RunInfo
from chatjudge.protocols.spec import Protocol

VERSION = 1  # of what the hash covers: a change to it changes every protocol's hash
# Words for people, left out: the name, the descriptions, an aligned protocol's provenance.
_PEOPLE: dict[str, Any] = {
    "name": True,
    "description": True,
    "provenance": True,
    "fields": {"__all__": {"description"}},
    "metrics": {"__all__": {"description"}},
}


def protocol_sha256(protocol: Protocol) -> str:
    """The protocol's SHA-256 (lowercase hex): the same in every process, changed by any
    edit to its template, a parse rule, its scale or choices, or its metrics."""
    rules: dict[str, Any] = protocol.model_dump(mode="json", exclude=_PEOPLE)
    canonical = json.dumps(
        {"version": VERSION, **rules},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def check_recorded(protocol: Protocol, info: RunInfo, runs: str = "the run") -> Protocol:
    """`protocol`, given with `--protocol` for a finished run, when it is the one `runs`
    recorded: its name, and its hash where run.json has one (a run of an older chatjudge
    recorded none: unknown, not refused)."""
    if protocol.name != info.protocol:
        raise UsageError(
            f"--protocol is {protocol.name!r}, {runs} was judged with {info.protocol!r}"
        )
    given = protocol_sha256(protocol)
    if info.protocol_sha256 is not None and given != info.protocol_sha256:
        raise UsageError(
            f"--protocol {protocol.name!r} is not the one {runs} was judged with: its "
            f"sha256 is {given}, {runs} recorded {info.protocol_sha256} (the template, a "
            "parse rule, the scale or a metric was edited since)"
        )
    return protocol
