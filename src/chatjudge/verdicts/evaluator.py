"""The evaluator fingerprint: one hash of everything that decides a verdict, so that a
result says which judge, reading which way, gave it, and a gate names what changed.

It hashes, in canonical JSON (sorted keys, compact, UTF-8): the protocol's
`protocol_sha256`, the judges' identities without their endpoints (a replica serves the
same model), every option declared `fingerprint=True` that changes replies (not `limit`
or `shard`, which choose rows, nor the endpoints), and `VERDICT_PARSING`, bumped by hand
whenever `chatjudge.verdicts.parse` reads a reply differently.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from chatjudge.formats.provenance import Evaluator
from chatjudge.formats.run_info import RunInfo
from chatjudge.options import RunConfig
from chatjudge.protocols.digest import protocol_sha256
from chatjudge.protocols.spec import Protocol

VERDICT_PARSING = 1  # bump with any change to how a reply is read into a verdict
# Fingerprint options that choose rows or where a judge is reached, not what it replies.
NOT_THE_JUDGE = frozenset({"limit", "shard", "base_urls"})
_ENDPOINT = frozenset({"base_url", "base_urls"})


def evaluator(
    protocol: Protocol, judges: Sequence[Mapping[str, Any]], config: RunConfig
) -> Evaluator:
    """The evaluator of a run of `protocol` by `judges` (their `identity()`) with `config`."""
    options = {k: v for k, v in config.fingerprint("run").items() if k not in NOT_THE_JUDGE}
    return fingerprinted(protocol_sha256(protocol), judges, options)


def fingerprinted(
    protocol_sha: str,
    judges: Sequence[Mapping[str, Any]],
    options: Mapping[str, Any],
    verdict_parsing: int = VERDICT_PARSING,
) -> Evaluator:
    """The evaluator of these parts, its fingerprint computed (a panel in any order is one)."""
    who = sorted(
        ({k: v for k, v in judge.items() if k not in _ENDPOINT} for judge in judges),
        key=_canonical,
    )
    parts: dict[str, Any] = {
        "protocol_sha256": protocol_sha,
        "judges": who,
        "options": json.loads(_canonical(options)),  # tuples as lists, as read back
        "verdict_parsing": verdict_parsing,
    }
    digest = hashlib.sha256(_canonical(parts).encode("utf-8")).hexdigest()
    return Evaluator(fingerprint=digest, **parts)


def differences(old: RunInfo, new: RunInfo) -> list[str] | None:
    """The parts of two runs' evaluators that differ, named; None when either run was
    written before the fingerprint (unknown: the caller checks what run.json has)."""
    a, b = old.evaluator, new.evaluator
    if a is None or b is None:
        return None
    if a.fingerprint == b.fingerprint:
        return []
    found = []
    if a.protocol_sha256 != b.protocol_sha256 and old.protocol != new.protocol:
        found.append(f"protocol: {old.protocol} vs {new.protocol}")
    elif a.protocol_sha256 != b.protocol_sha256:  # the same name, another template or rule
        found.append(f"protocol {new.protocol} sha256: {a.protocol_sha256} vs {b.protocol_sha256}")
    if a.judges != b.judges:
        names = [_names(old), _names(new)]
        if names[0] == names[1]:  # the same names, another identity (a local model's file)
            names = ["+".join(_canonical(j) for j in e.judges) for e in (a, b)]
        found.append(f"judges: {names[0]} vs {names[1]}")
    for name in sorted(a.options.keys() | b.options.keys()):
        x, y = a.options.get(name, "(default)"), b.options.get(name, "(default)")
        if x != y:
            found.append(f"option {name}: {x!r} vs {y!r}")
    if a.verdict_parsing != b.verdict_parsing:
        found.append(f"verdict parsing: version {a.verdict_parsing} vs {b.verdict_parsing}")
    return [*found, f"evaluator fingerprint: {a.short} vs {b.short}"]


def _names(info: RunInfo) -> str:
    return "+".join(str(j.get("name")) for j in info.judges)


def _canonical(value: Any) -> str:
    return json.dumps(
        value,
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
        default=str,
    )
