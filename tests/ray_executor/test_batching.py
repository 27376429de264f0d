"""Batched dispatch to Ray workers (`chatjudge.ray_executor.channel`), on a local Ray cluster
(2 CPUs, no dashboard) against the stand-in server on loopback: calls travel several to
a round trip, a worker killed while it holds a batch fails only that batch's calls, and
a model keeps working from one event loop to the next."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator

import pytest
import ray

from chatjudge import secrets
from chatjudge.chat.types import ModelRequest, Reply
from chatjudge.errors import ClusterLostError, WorkerLostError
from chatjudge.models import Model, get_model
from chatjudge.options import ClientOptions
from chatjudge.ray_executor.remote import RemoteModel, start
from chatjudge.ray_executor.worker_spec import WorkerSpec
from tests.ray_executor.local import local_cluster
from tests.support.stub_openai import StubServer


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    with local_cluster("sk-test-batching"):
        yield


def _remote(stub: StubServer, workers: int = 2) -> RemoteModel:
    model = get_model("openai/stub", ClientOptions(base_url=(stub.base_url,)), check_key=False)
    return start(model, WorkerSpec.of(model), workers, 100)


def _request(i: int) -> ModelRequest:
    return ModelRequest([{"role": "user", "content": f"Question {i}?"}])


def test_calls_travel_several_to_a_round_trip_with_the_same_replies(
    cluster: None, stub: StubServer
) -> None:
    remote = _remote(stub)
    direct = get_model("openai/stub", ClientOptions(base_url=(stub.base_url,)), check_key=False)

    async def main() -> tuple[list[Reply], list[Reply]]:
        try:
            on_ray = await asyncio.gather(*(remote.generate(_request(i)) for i in range(60)))
            here = await asyncio.gather(*(direct.generate(_request(i)) for i in range(60)))
            return on_ray, here
        finally:
            await remote.aclose()
            await direct.aclose()

    on_ray, here = asyncio.run(main())
    assert [r.text for r in on_ray] == [r.text for r in here]
    assert all(r.output_tokens for r in on_ray)
    trips = sum(w.round_trips for w in remote.workers)
    # 60 calls made at once: one submit per worker and a few pulls, not 60 tasks.
    assert trips <= 12, trips
    assert all(w.in_flight == 0 for w in remote.workers)


def test_a_worker_killed_holding_a_batch_fails_only_that_batch(
    cluster: None, stub: StubServer
) -> None:
    stub.configure(latency=3.0)  # the 20 calls still held when the last one arrives, on a
    remote = _remote(stub)  # busy machine too (0.5 s was not always enough under xdist)

    async def main() -> list[Reply | BaseException]:
        calls = [asyncio.ensure_future(remote.generate(_request(i))) for i in range(20)]
        deadline = time.monotonic() + 30
        while stub.stats.requests < 20 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert [w.in_flight for w in remote.workers] == [10, 10]  # least-loaded: 10 each
        ray.kill(remote.workers[0].actor)
        return await asyncio.gather(*calls, return_exceptions=True)

    outcomes = asyncio.run(main())
    lost = [o for o in outcomes if isinstance(o, WorkerLostError)]
    assert len(lost) == 10 and "Ray worker 0 of openai/stub was lost" in str(lost[0])
    assert sum(isinstance(o, Reply) for o in outcomes) == 10

    async def after() -> Reply:
        try:
            return await remote.generate(_request(99))  # the other worker takes it
        finally:
            for worker in remote.workers[1:]:
                ray.kill(worker.actor)
            with pytest.raises(WorkerLostError):
                await remote.generate(_request(100))  # sent before the loss is known
            with pytest.raises(ClusterLostError, match="every Ray worker of openai/stub"):
                await remote.generate(_request(101))
            await remote.aclose()

    assert asyncio.run(after()).text
    # 20, then 1 on the other worker, and the call sent to it as it was killed may have left.
    assert stub.stats.requests in (21, 22)


def test_a_model_serves_one_event_loop_after_another(cluster: None, stub: StubServer) -> None:
    """`sync.run_sync` gives each command its own loop: the worker's pull left open by the
    first loop gives way to the second's, and no reply is lost to the first."""
    remote = _remote(stub, workers=1)

    async def batch(start: int) -> list[str]:
        replies = await asyncio.gather(
            *(remote.generate(_request(i)) for i in range(start, start + 5))
        )
        return [r.text for r in replies]

    first = asyncio.run(batch(0))
    second = asyncio.run(asyncio.wait_for(batch(5), timeout=30))
    asyncio.run(remote.aclose())
    assert len(set(first + second)) == 10


class Faulty(Model):
    """A provider whose code fails in a way chatjudge does not know (not a ModelError)."""

    provider = "faulty"
    secret_env_vars = ("OPENAI_API_KEY",)

    def __init__(self) -> None:
        super().__init__("faulty", ClientOptions())

    async def generate(self, request: ModelRequest) -> Reply:
        secrets.remember_env(*self.secret_env_vars)  # as a provider built on the worker does
        raise KeyError(f"no route for {os.environ['OPENAI_API_KEY']}")


def test_an_unknown_fault_of_a_worker_is_raised_on_the_driver_masked(cluster: None) -> None:
    ray.cloudpickle.register_pickle_by_value(__import__(__name__))  # workers cannot import tests
    model = Faulty()
    remote = start(model, WorkerSpec.of(model), 1, 4)

    async def main() -> None:
        try:
            with pytest.raises(RuntimeError, match="KeyError in a Ray worker") as raised:
                await remote.generate(_request(0))
            assert "sk-test-batching" not in str(raised.value)
            assert "[OPENAI_API_KEY]" in str(raised.value)
        finally:
            await remote.aclose()

    asyncio.run(main())
