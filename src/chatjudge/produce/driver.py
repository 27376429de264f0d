"""What `generate` and `simulate` share: rows in, one task per row (and sample) in their
session's pool, rows out in input order, and a fatal fault that stops everything.

Rows are written in input order although they finish in any order: a finished row waits
in memory until every row before it is written. On a stop, the rows waiting are written
too (the file then has gaps), so nothing finished is lost; the store holds every call,
and running the same command again rewrites the whole file, in order, without gaps.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Iterator
from typing import IO, Any, TypeVar

from chatjudge import jsoncodec
from chatjudge.calls.session import CostEstimate, Session
from chatjudge.data import Source, Validation
from chatjudge.data.shard_rows import fingerprint
from chatjudge.errors import BudgetReached, FatalModelError
from chatjudge.formats.io import write_json
from chatjudge.formats.produced import ProducedInfo
from chatjudge.formats.shard_record import ShardRecord
from chatjudge.rundir import Produced
from chatjudge.writing import open_write

Job = TypeVar("Job")
Done = TypeVar("Done")
Loop = Callable[[Session, IO[bytes]], Awaitable[Done]]  # a command's one loop, dry or not


async def estimated(session: Session, loop: Loop[Any], command: str, n_rows: int) -> CostEstimate:
    """`--dry-run`: the command's own loop through a dry `session`, its rows written nowhere;
    what the session counted as it went."""
    async with session:
        with open(os.devnull, "wb") as nowhere:
            await loop(session, nowhere)
    return session.estimate(command, n_rows)


async def produced(
    session: Session, output: Produced, made: ProducedInfo, loop: Loop[Done]
) -> Done:
    """The command's loop through `session`, writing its rows to `output` after its record
    (`<out>.run.json`, before the first call), with the progress bar shown."""
    async with session:
        write_json(output.record, made)
        with open_write(output.rows) as out, session.progress:
            return await loop(session, out)


class OrderedWriter:
    def __init__(self, out: IO[bytes]) -> None:
        self.out = out
        self.written = 0
        self._next = 0
        self._waiting: dict[int, bytes] = {}

    def put(self, index: int, row: dict[str, Any]) -> None:
        self._waiting[index] = jsoncodec.dumps(row) + b"\n"
        while self._next in self._waiting:
            self.out.write(self._waiting.pop(self._next))
            self._next += 1
            self.written += 1

    def flush_waiting(self) -> None:
        """After a stop: write the finished rows still waiting for an earlier one."""
        for index in sorted(self._waiting):
            self.out.write(self._waiting.pop(index))
            self.written += 1


async def drive(
    session: Session,
    jobs: Iterator[tuple[int, Job]],
    work: Callable[[Job], Awaitable[tuple[dict[str, Any], bool]]],
    writer: OrderedWriter,
) -> BudgetReached | None:
    """Run `work` on every job in the session's pool, writing each row by its index.

    `work` returns the row and whether it failed. A fatal `ModelError` (rejected
    credentials, a crashed local model) stops handing out jobs and is raised as
    `FatalModelError` once the jobs in flight have finished; the budget stops them the
    same way and is returned (the rows it cut short are not written: the same command
    resumes them from the store).
    """
    progress = session.progress

    async def one(indexed: tuple[int, Job]) -> None:
        index, job = indexed
        row, failed = await work(job)
        writer.put(index, row)
        progress.advance(failed=failed, tokens=0)

    stopped = await session.run(jobs, one)
    if stopped is not None:
        writer.flush_waiting()
    if isinstance(stopped, BudgetReached) or stopped is None:
        return stopped
    raise FatalModelError(f"stopped: {stopped}", finished=writer.written) from stopped


def summary_extras(
    source: Source, validation: Validation, shard: str | None, indexes: list[int]
) -> dict[str, Any]:
    """The summary's optional fields: the rows `--skip-invalid` left out, and with
    `--shard` the shard's record (each written row's index among all rows, for `merge`)."""
    extras: dict[str, Any] = {}
    if validation.skipped_rows:
        extras.update(n_skipped=len(validation.skipped_rows), skipped=validation.skipped())
    if shard is not None:
        extras["shard"] = ShardRecord(
            shard=shard, data=source.name, indexes=indexes, data_sha256=fingerprint(source)
        )
    return extras
