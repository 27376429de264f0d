"""The worker pool every command's calls run in: N asyncio workers pulling from one iterator.

Pulling, not queueing: the iterator is advanced only when a worker is free, so jobs are
made (items read, planned) as they can be sent and memory holds the jobs in flight, not
the dataset. A job records its own ordinary failures; a `ModelError` it lets out is
fatal (rejected credentials, a crashed local model): it stops the handing out of work,
the jobs in flight finish, and the pool's owner learns of the fault from `run`'s result
(and, while the pool runs, from `stopped`, to stop making jobs). A job that the budget
refuses (`BudgetReached`) stops the pool the same way.
Per job the pool costs one loop step and one check: nothing is allocated.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from typing import Generic, TypeVar

from chatjudge.errors import BudgetReached, ModelError

Job = TypeVar("Job")


class Pool(Generic[Job]):
    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.stopped: ModelError | BudgetReached | None = None

    async def run(
        self, jobs: Iterator[Job], work: Callable[[Job], Awaitable[object]]
    ) -> ModelError | BudgetReached | None:
        """Run `work` on every job, `workers` at a time; the fault or the budget that
        stopped them."""
        tasks = [asyncio.create_task(self._worker(jobs, work)) for _ in range(self.workers)]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        return self.stopped

    async def _worker(self, jobs: Iterator[Job], work: Callable[[Job], Awaitable[object]]) -> None:
        for job in jobs:
            if self.stopped is not None:
                return
            try:
                await work(job)
            except (ModelError, BudgetReached) as exc:  # stop handing out work; finished stay
                if self.stopped is None:
                    self.stopped = exc
                return
