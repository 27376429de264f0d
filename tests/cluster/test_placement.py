"""How `--executor ray` places models on the cluster's CPUs, read from what a model declares
(`runs_locally`) and from the provider registry, never from a provider's name. No cluster
is started: the actors' start is replaced by a recorder."""

from __future__ import annotations

from typing import Any

import pytest

import chatjudge.cluster.remote
from chatjudge.cluster import _start_all
from chatjudge.cluster.spec import WorkerSpec
from chatjudge.errors import UsageError
from chatjudge.models import Model
from chatjudge.models.base import GENERATION
from chatjudge.models.registry import PROVIDERS, Provider
from chatjudge.options import ClientOptions, RunConfig
from chatjudge.types import ModelRequest, Reply


class Burner(Model):
    """A provider that computes on this machine's CPUs, as llama.cpp does."""

    provider = "burner"
    runs_locally = True
    honours = GENERATION | {"local_workers"}

    async def generate(self, request: ModelRequest) -> Reply:
        return Reply("")


class Caller(Model):
    """A provider that waits on a network."""

    provider = "caller"

    async def generate(self, request: ModelRequest) -> Reply:
        return Reply("")


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Workers given to each model (by name) instead of starting Ray actors."""
    workers: dict[str, int] = {}

    def start(inner: Model, spec: WorkerSpec, n: int, concurrency: int) -> Any:
        workers[inner.name] = n
        return inner

    monkeypatch.setattr(chatjudge.cluster.remote, "start", start)
    return workers


def place(models: list[Model], cpus: int, **run: Any) -> None:
    config = RunConfig.from_options({"executor": "ray", **run})
    _start_all(models, config, "prompt", cpus, {})


def test_local_models_share_the_cpus_and_remote_ones_get_one_worker_per_cpu(
    started: dict[str, int],
) -> None:
    client = ClientOptions()
    place([Burner("a", client), Burner("b", client), Caller("c", client)], cpus=8)
    assert started == {"burner/a": 4, "burner/b": 4, "caller/c": 8}


def test_more_local_workers_than_cpus_is_refused(started: dict[str, int]) -> None:
    client = ClientOptions()
    with pytest.raises(UsageError, match="5 workers for each of 2 local model"):
        place([Burner("a", client), Burner("b", client), Caller("c", client)], cpus=8, workers=5)
    place([Caller("c", client), Caller("d", client)], cpus=8, workers=5)  # remote: no limit
    assert started == {"caller/c": 5, "caller/d": 5}


def test_a_named_local_model_gets_one_process_per_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """A model built from its registry row is rebuilt by name on the worker; a local one
    with one llama.cpp process there, since Ray gave that worker one CPU."""
    monkeypatch.setitem(PROVIDERS, "burner", Provider("burner", __name__, "Burner", local=True))
    monkeypatch.setitem(PROVIDERS, "caller", Provider("caller", __name__, "Caller"))
    client = ClientOptions(local_workers=3)

    local = WorkerSpec.of(Burner("m", client))
    remote = WorkerSpec.of(Caller("m", client))

    assert (local.name, local.obj, local.client.local_workers) == ("burner/m", None, 1)
    assert (remote.name, remote.obj, remote.client.local_workers) == ("caller/m", None, 3)
    assert type(local.build()) is Burner


def test_a_model_without_a_row_is_shipped_as_it_is() -> None:
    model = Burner("m", ClientOptions(local_workers=3))
    spec = WorkerSpec.of(model)
    assert spec.name is None and spec.obj is model and spec.build() is model
