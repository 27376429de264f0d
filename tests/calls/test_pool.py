"""The worker pool: N workers pull jobs one at a time from one iterator; a fatal fault stops
the handing out, lets the jobs in flight finish, and is returned to the pool's owner."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from chatjudge.calls import Pool
from chatjudge.errors import AuthError


def test_every_job_runs_at_most_n_at_once_and_is_pulled_only_when_a_worker_is_free() -> None:
    pulled: list[int] = []
    done: list[int] = []
    running = 0
    most = 0

    def jobs() -> Iterator[int]:
        for i in range(50):
            assert len(pulled) - len(done) < 4  # made only when one of the 4 workers is free
            pulled.append(i)
            yield i

    async def work(i: int) -> None:
        nonlocal running, most
        running += 1
        most = max(most, running)
        await asyncio.sleep(0.001 * (i % 3))
        running -= 1
        done.append(i)

    fatal = asyncio.run(Pool[int](4).run(jobs(), work))
    assert fatal is None
    assert sorted(done) == list(range(50)) and pulled == list(range(50))
    assert most == 4


def test_a_fatal_fault_stops_new_jobs_lets_those_in_flight_finish_and_is_returned() -> None:
    started: list[int] = []
    finished: list[int] = []
    pool: Pool[int] = Pool(3)
    fault_seen: list[bool] = []

    def jobs() -> Iterator[int]:
        for i in range(100):
            fault_seen.append(pool.stopped is not None)  # the engine stops planning items on it
            yield i

    async def work(i: int) -> None:
        started.append(i)
        if i == 4:
            await asyncio.sleep(0.01)
            raise AuthError("key rejected")
        await asyncio.sleep(0.03 if i in (5, 6) else 0.001)
        finished.append(i)

    fatal = asyncio.run(pool.run(jobs(), work))
    assert isinstance(fatal, AuthError) and pool.stopped is fatal
    assert 5 in finished and 6 in finished  # in flight when job 4 failed: finished all the same
    assert max(started) <= 8 and len(started) < 100  # no job started after the fault
    assert 4 not in finished
    assert any(fault_seen)  # the jobs' maker can see the fault while the pool runs


def test_an_unexpected_exception_propagates_and_cancels_the_other_workers() -> None:
    cancelled: list[int] = []

    async def work(i: int) -> None:
        if i == 1:
            raise ValueError("a bug")
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.append(i)
            raise

    with pytest.raises(ValueError, match="a bug"):
        asyncio.run(Pool[int](3).run(iter(range(10)), work))
    assert sorted(cancelled) == [0, 2]
