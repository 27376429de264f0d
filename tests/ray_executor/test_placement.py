"""How `--executor ray` places models on the cluster's CPUs, read from what a model declares
(`runs_locally`) and from the provider registry, never from a provider's name. No cluster
is started: the actors' start is replaced by a recorder."""

from __future__ import annotations

from typing import Any

import pytest

import chatjudge.ray_executor.remote
from chatjudge.calls.prices import Price, price_of
from chatjudge.chat.types import ModelRequest, Reply
from chatjudge.errors import UsageError
from chatjudge.models import Model, get_model
from chatjudge.models.base import GENERATION
from chatjudge.models.registry import BUILTIN
from chatjudge.options import ClientOptions, PricingOptions, RunConfig
from chatjudge.ray_executor import _start_all
from chatjudge.ray_executor.remote import RemoteModel, _kind_of
from chatjudge.ray_executor.worker_spec import WorkerSpec


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

    monkeypatch.setattr(chatjudge.ray_executor.remote, "start", start)
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
    monkeypatch.setitem(BUILTIN, "burner", f"{__name__}:Burner")
    monkeypatch.setitem(BUILTIN, "caller", f"{__name__}:Caller")
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


def test_a_remote_model_is_priced_and_counted_as_the_model_it_runs() -> None:
    """Prices and budgets read the model behind Ray's stand-in (`unwrapped`), not the
    stand-in, whose own provider (`ray`) has no price."""
    inner = Burner("m", ClientOptions())
    remote = _kind_of(inner)(inner, [], [])
    assert remote.unwrapped is inner and inner.unwrapped is inner
    assert price_of(remote, PricingOptions()) == Price(0.0, 0.0, "local")
    assert price_of(RemoteModel(inner, [], []), PricingOptions()).source == "local"


def test_a_remote_model_can_call_tools_where_the_model_it_runs_can() -> None:
    """Set-up reads `supports_tools` from the stand-in to refuse rows with tools early."""
    agent = get_model(lambda messages, tools=None: "ok", call_with="messages")
    plain = get_model(lambda messages: "ok", call_with="messages")
    assert _kind_of(agent)(agent, [], []).supports_tools
    assert not _kind_of(plain)(plain, [], []).supports_tools
