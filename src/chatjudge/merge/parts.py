"""What merging run directories and produced files shares: the checks that the inputs are
the shards of one configuration, the joined store, the summed usage and cost, the shards'
lines checked and put back in input order, and the output written aside and moved into
place only when all of it is written."""

from __future__ import annotations

import fcntl
import glob
import os
import secrets
import shutil
import sqlite3
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from chatjudge.calls.prices import command_cost
from chatjudge.errors import UsageError
from chatjudge.formats.cost import BudgetRecord, Cost, RoleCostRecord
from chatjudge.options.shard import Shard
from chatjudge.outputs import check_not_linked, check_written
from chatjudge.rundir import prepare_output
from chatjudge.store import Store
from chatjudge.store.migrations import SCHEMA_VERSION
from chatjudge.store.reader import ReadOnly
from chatjudge.writing import refuse_link

ONLY_SHARD = frozenset({"shard"})  # the one option in which shards of one run differ
_CALLS = (
    "key, model, raw, input_tokens, output_tokens, latency, created, tool_calls, served_model, "
    "system_fingerprint"
)


def refuse(what: str, problems: Sequence[str]) -> UsageError:
    """The error that stops a merge: what is wrong, then every problem on its own line."""
    return UsageError(f"cannot merge: {what}:\n  " + "\n  ".join(problems))


def check_cover(shards: Sequence[tuple[str, str | None]]) -> int:
    """Check that `shards` ((where, `I/N`) pairs) are N shards of one split, each once, and
    return N; a missing, repeated or foreign shard is a usage error naming them all."""
    unsharded = [where for where, text in shards if text is None]
    if unsharded:
        raise refuse("not written with --shard", unsharded)
    parsed = [(where, Shard.parse(text)) for where, text in shards if text is not None]
    counts = sorted({shard.count for _, shard in parsed})
    if len(counts) > 1:
        raise refuse(
            f"shards of different N ({', '.join(map(str, counts))})",
            [f"{where}: shard {shard}" for where, shard in parsed],
        )
    n = counts[0]
    by_index: dict[int, list[str]] = defaultdict(list)
    for where, shard in parsed:
        by_index[shard.index].append(where)
    problems = [
        f"shard {index}/{n} is given {len(wheres)} times: {', '.join(wheres)}"
        for index, wheres in sorted(by_index.items())
        if len(wheres) > 1
    ]
    missing = [f"{index}/{n}" for index in range(n) if index not in by_index]
    if missing:
        problems.append(f"missing shard(s) {', '.join(missing)}: each of the {n} is needed once")
    if problems:
        raise refuse(f"the shards do not cover 0..{n - 1} once each", problems)
    return n


def data_differences(a: str | None, b: str | None) -> list[str]:
    """Two shards' data fingerprints (`data_sha256`), when they differ: shards of different
    data files, or of one file edited between the shards' commands."""
    if a == b:
        return []
    if a is None or b is None:
        return [
            "data: one shard has no data fingerprint (written by an older chatjudge): re-run "
            "its command with this chatjudge (nothing is sent) to record it"
        ]
    return [
        f"data: different data (SHA-256 {a[:12]}... vs {b[:12]}...): the shards must read the "
        "same, unchanged data"
    ]


def check_new(
    out: Path,
    files: Sequence[Path],
    inputs: Sequence[Path],
    *,
    overwrite: bool,
    run_files: bool = True,
) -> None:
    """The merge writes a new output: as every command, never over an input nor through a
    symbolic link (`chatjudge.outputs`), over a run's files only as a merged run
    (`run_files`), and over an earlier output only with `overwrite`."""
    if out.resolve() in {Path(p).resolve() for p in inputs}:
        raise UsageError(f"--out {out} is one of the shards: write the merge elsewhere")
    check_written(out, files, inputs, run_files=run_files)
    _check_absent(out, files, overwrite=overwrite)


def _check_absent(out: Path, files: Sequence[Path], *, overwrite: bool) -> None:
    check_not_linked(files)
    there = [str(f) for f in files if f.exists()]
    if there and not overwrite:
        raise UsageError(
            f"--out {out} already holds {', '.join(there)}: choose a new --out, or "
            "--overwrite to replace them"
        )


def merge_stores(stores: Sequence[Path], target: Path) -> None:
    """Write every call of the shards' stores into a new store at `target` (the current
    schema, as a run makes it), so that the merged output resumes as an unsharded one
    would: the same command sends nothing. The shards' stores are only read."""
    Store(target).close()  # created, migrated and checked as a run does it
    db = sqlite3.connect(f"file:{quote(str(target.resolve()))}", uri=True, isolation_level=None)
    try:
        for path in stores:
            _absorb(db, path)
    finally:
        db.close()


def _absorb(db: sqlite3.Connection, path: Path) -> None:
    if not path.is_file():
        raise UsageError(f"{path} is missing: merge needs every shard's store")
    shard = ReadOnly.of(path)
    try:
        db.execute("ATTACH DATABASE ? AS shard", (shard.uri,))
    except sqlite3.Error as exc:
        shard.done()
        raise UsageError(f"{path} cannot be read ({exc})") from exc
    try:
        (version,) = db.execute("PRAGMA shard.user_version").fetchone()
        columns = _CALLS
        if version in (2, 3):  # before what served a reply: not reported
            columns = _CALLS.replace(", served_model, system_fingerprint", "")
        if version == 2:  # before tool calls: a schema-2 shard's calls call none
            columns = columns.replace(", tool_calls", "")
        elif version != SCHEMA_VERSION:
            raise UsageError(
                f"{path} has store schema {version}, this chatjudge writes {SCHEMA_VERSION}: "
                "re-run that shard's command with this chatjudge first (it migrates the store)"
            )
        db.execute("BEGIN")
        db.execute(
            f"INSERT OR IGNORE INTO main.calls ({columns}) SELECT {columns} FROM shard.calls"
        )
        db.execute(
            "INSERT OR IGNORE INTO main.meta (name, value) SELECT name, value FROM shard.meta"
        )
        db.execute("COMMIT")
    except sqlite3.DatabaseError as exc:
        raise UsageError(f"{path} is not a readable chatjudge store ({exc})") from exc
    finally:
        if db.in_transaction:
            db.execute("ROLLBACK")
        db.execute("DETACH DATABASE shard")
        shard.done()


def sum_usage(usages: Iterable[Mapping[str, int]]) -> dict[str, int]:
    """Token and call counts, key by key."""
    total: dict[str, int] = {}
    for usage in usages:
        for key, value in usage.items():
            total[key] = total.get(key, 0) + value
    return total


def sum_costs(costs: Iterable[Cost | None]) -> Cost | None:
    """The shards' costs summed by role (unknown where any shard's is); each shard's budget
    (`--max-cost-usd`) adds up too: limits, spending and progress."""
    present = [c for c in costs if c is not None]
    if not present:
        return None
    roles: dict[str, RoleCostRecord] = {}
    for name in dict.fromkeys(n for c in present for n in c.roles):
        parts = [c.roles[name] for c in present if name in c.roles]
        usd = (
            None if any(p.usd is None for p in parts) else round(sum(p.usd or 0 for p in parts), 6)
        )
        sources = sorted({s for p in parts for s in p.source.split(", ") if s})
        spent = [p.invocation_usd for p in parts]
        roles[name] = RoleCostRecord(
            usd=usd,
            priced=usd is not None,
            source=", ".join(sources),
            over_cap_replies=sum(p.over_cap_replies for p in parts),
            invocation_usd=None if None in spent else round(sum(u or 0 for u in spent), 6),
        )
    budgets = [c.budget for c in present if c.budget is not None]
    budget = None
    if budgets:
        budget = BudgetRecord(
            max_usd=round(sum(b.max_usd for b in budgets), 6),
            spent_usd=round(sum(b.spent_usd for b in budgets), 6),
            reached=any(b.reached for b in budgets),
            done=sum(b.done for b in budgets),
            total=sum(b.total for b in budgets),
        )
    return command_cost(roles, budget)


@dataclass(frozen=True, slots=True)
class Line:
    """Where a shard's line is: its position among all rows, its file and line number (from
    1), and its offset in the file."""

    position: int
    file: int
    number: int
    offset: int


def order_lines(files: Sequence[Path], position: Callable[[int, int, bytes], int]) -> list[Line]:
    """Every line of `files` (blank lines aside), checked and in the order of their positions
    among all rows; `position(file number, row number, line)` says where the row (the
    row-th line of that file, from 0) stands, and raises ValueError saying what is wrong with
    a line that is not one. A bad line, or two rows at one position, is a usage error naming
    them. Only where the lines are is kept in memory."""
    where: list[Line] = []
    for number, path in enumerate(files):
        offset, row = 0, 0
        with path.open("rb") as lines:
            for line_number, line in enumerate(lines, 1):
                if line.strip():
                    try:
                        place = position(number, row, line)
                    except ValueError as exc:
                        raise UsageError(f"{path}, line {line_number}, {exc}") from None
                    where.append(Line(place, number, line_number, offset))
                    row += 1
                offset += len(line)
    where.sort(key=lambda line: line.position)
    repeated = [
        f"{files[a.file]}, line {a.number} and {files[b.file]}, line {b.number}"
        for a, b in zip(where, where[1:], strict=False)
        if a.position == b.position
    ]
    if repeated:
        raise refuse(
            "two shards hold the same row (were they split from the same data?)", repeated[:10]
        )
    return where


def read_lines(files: Sequence[Path], lines: Sequence[Line]) -> Iterator[tuple[Line, bytes]]:
    """The lines `order_lines` found, in its order, each ending with a newline."""
    handles = [path.open("rb") for path in files]
    try:
        for where in lines:
            handle = handles[where.file]
            handle.seek(where.offset)
            line = handle.readline()
            yield where, line if line.endswith(b"\n") else line + b"\n"
    finally:
        for handle in handles:
            handle.close()


def count_rows(path: Path) -> int:
    """The lines of a JSONL file, blank lines aside."""
    with path.open("rb") as lines:
        return sum(1 for line in lines if line.strip())


@contextmanager
def staged(
    out: Path, files: Sequence[Path], *, overwrite: bool, beside: bool = False
) -> Iterator[Path]:
    """A new directory to write the merge in, moved into place at the end: its files go into
    the directory `out` (made if missing), or `beside` the file `out` (a JSONL output with its
    store and summary). A merge that fails leaves nothing behind, so the corrected merge can
    be written to the same place.

    One merge at a time writes to one `out` (a lock file where it stages): another one then
    is refused (in use), and one that finds `files` there now (a merge into `out` that has
    just finished) is refused as `check_new` refuses it, unless `overwrite`. The staging
    folders of a merge into `out` killed before its end are removed: no merge writes them."""
    target = out.parent if beside else out
    if target.exists() and not target.is_dir():
        raise UsageError(f"--out {target} is a file, not a directory: choose a new --out")
    there = target.is_dir()
    parent = target if there else target.parent
    prepare_output(parent)
    name = f".{out.name or 'merge'}"
    with _claimed(out, parent / f"{name}.merge.lock"):
        _check_absent(out, files, overwrite=overwrite)
        for folder in {parent, target.parent}:  # where it stages, had `target` been missing
            for leftover in folder.glob(f"{glob.escape(name)}.merging-*"):
                shutil.rmtree(leftover, ignore_errors=True)
        temporary = parent / f"{name}.merging-{secrets.token_hex(4)}"
        temporary.mkdir()  # as mkdir makes directories (with the umask), unlike mkdtemp
        try:
            yield temporary
            if there:
                made = list(temporary.iterdir())
                for path in made:  # a link made since the checks: refused, never replaced
                    refuse_link(target / path.name)
                for path in made:
                    for journal in ("-wal", "-shm"):  # a replaced store's, never applied to this
                        (target / f"{path.name}{journal}").unlink(missing_ok=True)
                    os.replace(path, target / path.name)
                temporary.rmdir()
            else:
                temporary.rename(target)
        except BaseException:
            shutil.rmtree(temporary, ignore_errors=True)
            raise


@contextmanager
def _claimed(out: Path, lock: Path) -> Iterator[None]:
    """Hold `lock`, the hidden file that says a merge is writing `out`, or refuse (in use).

    An advisory lock (flock) ends with the process that holds it, so a killed merge never
    leaves `out` locked; the file is removed before it is released, and a merge that has
    locked a file removed meanwhile (the previous merge's) takes the new one instead."""
    while True:
        handle = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            held = os.fstat(handle)
            current = os.stat(lock)
        except BlockingIOError:
            os.close(handle)
            raise UsageError(
                f"--out {out} is in use by another merge: wait for it to end, or choose "
                "another --out"
            ) from None
        except FileNotFoundError:  # removed by the merge that held it: take a new one
            os.close(handle)
            continue
        if (held.st_dev, held.st_ino) == (current.st_dev, current.st_ino):
            break
        os.close(handle)
    try:
        yield
    finally:
        with suppress(FileNotFoundError):
            lock.unlink()
        os.close(handle)
