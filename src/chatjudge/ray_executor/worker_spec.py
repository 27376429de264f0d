"""What a Ray worker needs to build its model: a name and options, never a live object.

A model named by a string (`openai/MODEL`, `local`, ...) is rebuilt in the worker from
its name and its client options, so no session and no key travels: keys are read from
each worker's own environment, as on one machine. Only a model defined in Python (a
callable judge, a `Model` instance) is shipped as the object it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from chatjudge.models import Model, get_model, registry
from chatjudge.options import ClientOptions


@dataclass(frozen=True)
class WorkerSpec:
    name: str | None  # `provider/model`, rebuilt by the worker; None: `obj` is shipped
    client: ClientOptions
    call_with: str = "prompt"
    obj: Model | None = None

    @classmethod
    def of(cls, model: Model, *, call_with: str = "prompt") -> WorkerSpec:
        """The spec of a model built on the driver; a local model gets one single-threaded
        llama.cpp process per Ray worker (the one CPU Ray reserved for it)."""
        if not _named(model):
            return cls(None, ClientOptions(), call_with, model)
        client = model.client
        if model.runs_locally:
            client = client.model_copy(update={"local_workers": 1})
        return cls(model.name, client, call_with)

    def build(self) -> Model:
        """The model, built where this runs (a key missing here is an `AuthError` here)."""
        if self.obj is not None:
            return self.obj
        assert self.name is not None
        return get_model(self.name, self.client, call_with=self.call_with)


def _named(model: Model) -> bool:
    """Whether `model` is a provider's class, built by `get_model` from a name."""
    provider = getattr(model, "provider", "")
    return provider in registry.names() and type(model) is registry.load(provider)
