"""`chatjudge import`: trace and log files in, rows for a pairwise replay out.

Files are read one record at a time into compact calls; every problem is collected with
its file and line or span id, and with any problem nothing is written unless
`skip_invalid` (then the bad calls, and conversations that contradict themselves, are left
out and listed). Calls are then grouped into conversations, ordered, cut into turns, a
reproducible sample of conversations taken, and one row written per turn (`all`) or per
conversation (`last`).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from chatjudge.errors import ChatJudgeError, UsageError
from chatjudge.formats.io import write_json
from chatjudge.formats.produced import ProducedInfo
from chatjudge.options import ImportOptions
from chatjudge.outputs import check_produced_output
from chatjudge.rundir import Produced, prepare_output
from chatjudge.traces.completions_log import call_of_record, is_completions_log
from chatjudge.traces.conversations import contradiction, group, order, turns
from chatjudge.traces.otlp import OtlpReader, is_otlp, records
from chatjudge.traces.redact import Redactor
from chatjudge.traces.rows import FIELDS, ImportedRow, row_of_turn, write_rows
from chatjudge.traces.tables import read_table
from chatjudge.traces.traced_calls import (
    Call,
    DuplicateSpan,
    FailedCall,
    Interner,
    TraceProblem,
    Where,
)

MAX_PROBLEMS_SHOWN = 200
TABLE_SUFFIXES = (".parquet", ".pq", ".csv")


class TraceError(ChatJudgeError):
    """Input that would make a wrong conversation; every problem listed, nothing written."""

    def __init__(self, problems: list[TraceProblem], total: int) -> None:
        self.problems = problems
        shown = "\n".join(f"  {p}" for p in problems)
        more = f"\n  ... and {total - len(problems)} more" if total > len(problems) else ""
        super().__init__(f"invalid traces ({total} problem(s)):\n{shown}{more}")


@dataclass(slots=True)
class Imported:
    """What an import did: counts, and the problems left out with --skip-invalid."""

    n_calls: int = 0
    n_failed_calls: int = 0  # calls that failed in production, passed over
    n_conversations: int = 0
    n_rows: int = 0
    skipped: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)  # spans under a taken id, left out


def import_traces(paths: Sequence[Path], out: Path, options: ImportOptions) -> Imported:
    """Read `paths`, write the rows to `out`; TraceError (nothing written) on bad input
    unless `options.skip_invalid`."""
    _check(paths, options)
    redactor = Redactor(options.redact)
    produced, made = Produced(out), _record(options, paths)
    check_produced_output(produced, made, paths, overwrite=options.overwrite)
    # An unwritable --out: said now, not after the reading.
    prepare_output(out.parent, (out, produced.record))
    problems: list[TraceProblem] = []
    calls: list[Call] = []
    failed = 0
    duplicates: list[str] = []
    for found in read_calls(paths, options.keep, Interner()):
        if isinstance(found, Call):
            calls.append(found)
        elif isinstance(found, FailedCall):
            failed += 1
        elif isinstance(found, DuplicateSpan):
            duplicates.append(str(found))
        else:
            problems.append(found)
    done = Imported(n_calls=len(calls), n_failed_calls=failed, duplicates=duplicates)
    conversations = group(order(calls))
    del calls  # the conversations hold them now
    by_turn: dict[str, list[list[Call]]] = {}
    for conversation in conversations:
        cut = turns(conversation)
        problem = conversation.calls[0].conversation is not None and contradiction(
            conversation, cut, redactor
        )
        if problem:
            problems.append(problem)
        else:
            by_turn[conversation.id] = cut
    if problems and not options.skip_invalid:  # before a row is made
        raise TraceError(problems[:MAX_PROBLEMS_SHOWN], len(problems))
    chosen = _sample(sorted(by_turn), options.sample, options.seed)

    def rows() -> Iterator[ImportedRow]:
        """Rows as they are made, so that only one is held at a time; a problem found on
        the way stops the writing (and nothing is kept) unless skip_invalid."""
        made = 0
        for conversation in conversations:
            if conversation.id not in chosen:
                continue
            cut = by_turn[conversation.id]
            numbers = range(1, len(cut) + 1) if options.turns == "all" else [len(cut)]
            for number in numbers:
                try:
                    row = row_of_turn(conversation.id, number, cut[number - 1], redactor)
                except TraceProblem as problem:
                    problems.append(problem)
                    continue
                made += 1
                yield row
        if problems and not options.skip_invalid:
            raise TraceError(problems[:MAX_PROBLEMS_SHOWN], len(problems))
        if not made:
            why = "every call was invalid" if problems else "no chat calls were found"
            raise TraceError([TraceProblem(", ".join(p.name for p in paths), why)], 1)

    done.n_rows = write_rows(rows(), out)
    write_json(produced.record, made)  # once the rows are in place
    done.n_conversations = len(chosen)
    done.skipped = [str(p) for p in problems]
    return done


def _record(options: ImportOptions, paths: Sequence[Path]) -> ProducedInfo:
    """What an import writes beside its rows: the files' names (in any order: the rows do
    not depend on it) and the options that change the rows."""
    return ProducedInfo(
        command="import",
        models={},
        data=", ".join(sorted(path.name for path in paths)),
        options={
            "turns": options.turns,
            "sample": options.sample,
            "seed": options.seed,
            "redact": list(options.redact),
            "keep": list(options.keep),
        },
    )


def _check(paths: Sequence[Path], options: ImportOptions) -> None:
    for path in paths:
        if not path.is_file():
            raise UsageError(f"file not found: {path}")
    if options.turns not in ("last", "all"):
        raise UsageError(f"--turns takes last or all, got {options.turns!r}")
    if options.sample is not None and options.sample < 1:
        raise UsageError(
            f"--sample takes a number of conversations (1 or more), got {options.sample}"
        )
    clash = sorted(FIELDS.intersection(options.keep))
    if clash:
        raise UsageError(f"--keep {clash[0]}: the rows already have a column of that name")


def _sample(ids: list[str], n: int | None, seed: int) -> set[str]:
    """N conversations drawn with `seed`, the same whatever the order of the files."""
    if n is None or n >= len(ids):
        return set(ids)
    return set(random.Random(seed).sample(ids, n))


def read_calls(
    paths: Sequence[Path], keep: tuple[str, ...], intern: Interner
) -> Iterator[Call | FailedCall | TraceProblem | DuplicateSpan]:
    """Every call of every file (OTLP JSON, chat-completions logs, span tables), and every
    problem and duplicate span id found on the way, one at a time."""
    otlp = OtlpReader(keep, intern)
    for path in paths:
        if path.suffix.lower() in TABLE_SUFFIXES:
            yield from read_table(path, keep, intern)
            continue
        kind = None
        for number, record in records(path):
            if isinstance(record, TraceProblem):
                yield record
                continue
            kind = kind or _kind(record)
            where = Where(path.name, number)
            if kind == "otlp" and is_otlp(record):
                yield from otlp.read(path, number, record)
            elif kind == "log":
                try:
                    yield call_of_record(record, where, keep=keep, intern=intern)
                except TraceProblem as problem:
                    yield problem
            else:
                yield TraceProblem(
                    where,
                    "unknown layout: expected OTLP JSON (resourceSpans / resourceLogs) or a "
                    "chat-completions log record (request messages and response choices)",
                )
    yield from otlp.finish()


def _kind(record: object) -> str | None:
    if is_otlp(record):
        return "otlp"
    if is_completions_log(record):
        return "log"
    return None
