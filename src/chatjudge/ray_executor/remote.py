"""A model whose calls run on Ray workers, as the driver's engine sees it.

It stands in for the model built on the driver: same name, identity and abilities, so
the cache keys, the requests and the verdicts are those of a run on one machine. Each
call goes to the live worker with the fewest calls in flight. A worker that dies costs
the calls it had in flight: they fail as `WorkerLostError`, which the driver's policy
retries on the other workers.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING, Any

import ray

from chatjudge.chat.types import ModelRequest, Reply
from chatjudge.errors import ChatJudgeError, ClusterLostError
from chatjudge.models import Model
from chatjudge.ray_executor.actor import ModelActor
from chatjudge.ray_executor.channel import Channel
from chatjudge.ray_executor.worker_spec import WorkerSpec

if TYPE_CHECKING:
    from chatjudge.models.tokens import Tokenizer

ACTOR_PREFIX = "chatjudge"  # named `chatjudge:<run>:<model>:<i>`, so operators can find them
_RemoteActor: Any = ray.remote(ModelActor)  # Ray's typing of actor classes is partial


class RemoteModel(Model):
    provider = "ray"

    def __init__(self, inner: Model, actors: list[Any], caps: list[int | None]) -> None:
        self.inner = inner
        self.actors = actors
        self.workers = [
            Channel(actor, f"Ray worker {i} of {inner.name}") for i, actor in enumerate(actors)
        ]
        self._live = list(self.workers)
        # A capped model (local llama.cpp workers) is capped by the sum of its workers' caps.
        self.max_concurrency = None if None in caps else sum(c or 0 for c in caps)

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def unwrapped(self) -> Model:
        return self.inner.unwrapped

    def identity(self) -> dict[str, Any]:
        return self.inner.identity()

    def tokenizer(self) -> Tokenizer:
        """The model's own (`--dry-run` and budgets count tokens on the driver)."""
        return self.inner.tokenizer()

    async def generate(self, request: ModelRequest) -> Reply:
        live = self._live
        if any(w.lost is not None for w in live):
            live = self._live = [w for w in live if w.lost is None]
        if not live:
            raise ClusterLostError(f"every Ray worker of {self.name} is gone; re-run to resume")
        worker = min(live, key=_load)
        return await worker.call(request)

    async def aclose(self) -> None:
        """Close every live worker's model (a local model's llama.cpp processes would
        outlive a killed actor), all at once, then kill the actors."""
        live = [w for w in self.workers if w.lost is None]
        for worker in self.workers:
            await worker.close()
        # A worker lost meanwhile, or a model failing to close, leaves nothing to undo.
        await asyncio.gather(*(w.actor.aclose.remote() for w in live), return_exceptions=True)
        for actor in self.actors:
            ray.kill(actor)
        self._live = []
        await self.inner.aclose()


def _load(worker: Channel) -> int:
    return worker.in_flight


def start(inner: Model, spec: WorkerSpec, workers: int, concurrency: int) -> RemoteModel:
    """Start `workers` actors holding `spec`'s model and wait until each has built it;
    a worker that cannot (no key in its environment) stops everything before any call."""
    local = inner.runs_locally
    run = uuid.uuid4().hex[:8]
    actors = [
        _RemoteActor.options(
            name=f"{ACTOR_PREFIX}:{run}:{inner.name}:{i}",
            num_cpus=1 if local else 0,  # llama.cpp computes; a remote model's worker waits
            scheduling_strategy="SPREAD",
            max_concurrency=max(1000, concurrency),
            max_restarts=0,  # the driver retries a lost worker's calls on the others
        ).remote(spec)
        for i in range(workers)
    ]
    answers = ray.get([a.ready.remote() for a in actors])
    problems = [a for a in answers if isinstance(a, ChatJudgeError)]
    if problems:
        for actor in actors:
            ray.kill(actor)
        raise problems[0]
    caps = [cap for _, cap in answers]
    return _kind_of(inner)(inner, actors, caps)


def _kind_of(inner: Model) -> type[RemoteModel]:
    """A remote model class of the same kind as `inner`: the engine reads what a model can
    do (`supports_schema`, ...) from its class."""
    cls = type(inner)
    attrs = {
        "provider": cls.provider,
        "supports_schema": cls.supports_schema,
        "supports_tools": cls.supports_tools,
        "honours": cls.honours,
    }
    return type(f"Remote{cls.__name__}", (RemoteModel,), attrs)
