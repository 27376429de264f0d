"""Who judged a run: the evaluator fingerprint and its parts (in `run.json`, `summary.json`
and `gate.json`), and what the provider said it served each judge's replies with."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from chatjudge.formats.shared import Record

SHORT = 12  # characters of the fingerprint on the report's header and the terminal table
UNKNOWN = "—"  # a run written before the fingerprint: unknown, never a change


class Evaluator(Record):
    """The evaluator fingerprint: SHA-256 over canonical JSON of its parts, which say what
    decides a verdict (`chatjudge.verdicts.evaluator`)."""

    fingerprint: str
    protocol_sha256: str
    judges: list[dict[str, Any]]  # each judge's identity, but where it is reached
    options: dict[str, Any]  # the options that change replies, by name
    verdict_parsing: int  # the version of chatjudge's reading of a reply

    @property
    def short(self) -> str:
        return self.fingerprint[:SHORT]


class Served(Record):
    """One judge's replies, counted by the model name and `system_fingerprint` the provider
    reported in them: the only sign of a change behind the same name."""

    models: dict[str, int] = {}
    system_fingerprints: dict[str, int] = {}
    unreported: int = 0  # replies that named no model (a provider that does not say)

    def varies(self) -> bool:
        """More than one model or system fingerprint among the replies."""
        return len(self.models) > 1 or len(self.system_fingerprints) > 1


def short(evaluator: Evaluator | None) -> str:
    """The fingerprint as people read it: 12 characters, or "—" for a run without one."""
    return UNKNOWN if evaluator is None else evaluator.short


def sum_served(parts: Iterable[dict[str, Served] | None]) -> dict[str, Served] | None:
    """Several runs' served counts added up by judge (shards merged); None where none has any."""
    total: dict[str, Served] = {}
    for part in parts:
        for judge, served in (part or {}).items():
            old = total.get(judge, Served())
            total[judge] = Served(
                models=_add(old.models, served.models),
                system_fingerprints=_add(old.system_fingerprints, served.system_fingerprints),
                unreported=old.unreported + served.unreported,
            )
    return dict(sorted(total.items())) or None


def _add(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return {k: a.get(k, 0) + b.get(k, 0) for k in sorted(a.keys() | b.keys())}


class JudgeCheck(Record):
    """`summary.json`'s `judge_check`: the run's judges on a fixed check set (`run
    --judge-check FILE`), each item asked `samples` times, beside the data."""

    file: str  # the check file's name
    file_sha256: str  # the SHA-256 of its bytes: two runs' checks pair only on the same file
    n: int  # check items with a verdict
    samples: int  # times each item was asked (`--judge-check-samples`)
    agreement: float | None  # share of verdicts equal to the reference label
    ci95: list[float] | None  # for the mean over items (betting interval, valid at every n)
    disagreement: float | None  # within-run: share of an item's pairs of verdicts that differ
    cost_usd: float | None  # what the check's calls cost (apart from the data's)


class GateJudgeCheck(Record):
    """`gate.json`'s `judge_check`: whether the judge's verdicts on the check items both
    runs were judged with changed beyond its within-run disagreement."""

    file_sha256: str
    n_items: int  # check items with verdicts in both runs
    level: float  # `--judge-check-level`, split over the components (Bonferroni)
    p_values: dict[str, float]  # per verdict component
    changed: bool
    allowed: bool  # changed, and gated anyway (`--allow-judge-change`)
    agreement: dict[str, float | None]  # per role: the check's agreement with the reference
