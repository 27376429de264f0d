"""Turn a judge's reply into a verdict, tolerantly, or fail explicitly.

Fast path: the reply is the JSON object (structured output). Otherwise candidates
are tried in order: fenced ```json blocks, then the text from the first `{`,
repaired with json-repair (single quotes, trailing commas, truncation; a number
at the very end of a cut-off reply is dropped, as it may be cut short). Each
candidate must validate against the protocol's verdict model, so a repaired but
incomplete or out-of-range verdict is a failure, never a guess. For choice
protocols, a labelled line such as `Pairwise choice: **B**` is accepted last,
and only when the reply names one label unambiguously.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from chatjudge import jsoncodec
from chatjudge.errors import VerdictError
from chatjudge.protocols.spec import Protocol

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)(?:```|$)", re.DOTALL)
_CUT_NUMBER = re.compile(r"[-+]?\d[\d.eE+-]*$")


@dataclass(slots=True)
class Verdict:
    """A valid verdict: per-item scores (choices on the candidate's side) and rationales."""

    scores: dict[str, Any]
    rationale: dict[str, str] = field(default_factory=dict)
    label: str | None = None  # the choice label as the judge wrote it (A / SAME / B)


def parse_verdict(text: str, protocol: Protocol, *, flipped: bool = False) -> Verdict:
    """Parse `text` into a verdict of `protocol`; `flipped` means A and B were swapped."""
    errors: list[str] = []
    for candidate in _candidates(text):
        data = _validate(candidate, protocol, errors)
        if data is not None:
            return _verdict(data, protocol, flipped)
    if protocol.choice is not None and not protocol.scores:
        label = _labelled_choice(text, protocol)
        if label is not None:
            verdict = _verdict(
                _put(protocol.choice.path, label, {}), protocol, flipped, lenient=True
            )
            verdict.rationale[protocol.choice.name] = text.strip()
            return verdict
    reason = errors[-1] if errors else "no JSON object found in the reply"
    raise VerdictError(f"no valid verdict: {reason}")


def _candidates(text: str) -> Iterator[Any]:
    stripped = text.strip()
    try:
        yield jsoncodec.loads(stripped)
        return
    except ValueError:
        pass
    for block in _FENCE.findall(stripped):
        yield _loads_tolerant(block)
    start = stripped.find("{")
    if start >= 0:
        end = stripped.rfind("}")
        if end > start:
            yield _loads_tolerant(stripped[start : end + 1])
        yield _loads_tolerant(stripped[start:])


def _loads_tolerant(text: str) -> Any:
    try:
        return jsoncodec.loads(text)
    except ValueError:
        # A reply cut off right after a digit may have lost the rest of its number (10 -> 1):
        # the number is dropped, so the verdict fails validation instead of guessing.
        import json_repair  # here: well-formed replies, the usual case, never need it

        return json_repair.loads(_CUT_NUMBER.sub("", text.rstrip()))


def _validate(candidate: Any, protocol: Protocol, errors: list[str]) -> dict[str, Any] | None:
    if not isinstance(candidate, dict) or not candidate:
        return None
    try:
        return protocol.verdict_model.model_validate(candidate).model_dump()
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        errors.append(f"{where}: {first['msg']}")
        return None


def _labelled_choice(text: str, protocol: Protocol) -> str | None:
    """The one label a reply states as its choice (`Pairwise choice: **B**`), else None.

    The label must close its line (only markup may follow) and is matched in its own case,
    so `verdict: a tie`, `choice: A or B` and `choice: A tough one` are not read as `A`.
    """
    assert protocol.choice is not None
    labels = "|".join(re.escape(label) for label in sorted(protocol.choice.options, key=len)[::-1])
    name = re.escape(protocol.choice.name).replace("_", "[ _]")
    pattern = (
        rf"(?i:{name}|choice|winner|verdict)\W{{0,6}}[:=]\W{{0,6}}(?i:response\s+)?"
        rf"({labels})(?!\w)\W*$"
    )
    found = set(re.findall(pattern, text, flags=re.MULTILINE))
    return found.pop() if len(found) == 1 else None


def _put(path: str, value: Any, data: dict[str, Any]) -> dict[str, Any]:
    node = data
    *parents, last = path.split(".")
    for p in parents:
        node = node.setdefault(p, {})
    node[last] = value
    return data


def _get(path: str, data: dict[str, Any]) -> Any:
    node: Any = data
    for p in path.split("."):
        node = node[p]
    return node


def _verdict(
    data: dict[str, Any], protocol: Protocol, flipped: bool, *, lenient: bool = False
) -> Verdict:
    scores: dict[str, Any] = {}
    rationale: dict[str, str] = {}
    for s in protocol.scores:
        scores[s.name] = _get(s.path, data)
        if s.rationale:
            rationale[s.name] = _get(s.rationale, data)
    label = None
    choice = protocol.choice
    if choice is not None:
        label = str(_get(choice.path, data)).upper()
        if label not in choice.options:
            raise VerdictError(f"choice '{label}' is not one of {list(choice.options)}")
        shown = choice.flipped.get(label, label) if flipped else label
        scores[choice.name] = choice.options[shown]
        if choice.rationale:
            rationale[choice.name] = "" if lenient else _get(choice.rationale, data)
    return Verdict(scores=scores, rationale=rationale, label=label)
