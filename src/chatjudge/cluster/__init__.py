"""`--executor ray`: a run's model calls on a Ray cluster, its ledger on the driver.

The driver keeps everything that makes a run trustworthy on one machine: planning and
resume against the one SQLite store, the retry and rate-limit policy (so `--rpm` and
`--tpm` hold for the whole cluster), the verdicts, `results.jsonl` and the report.
Ray runs only the calls: each model becomes `--workers` actors that build it from a
`WorkerSpec` (a name and options; keys from each worker's environment) and run
chatjudge's own provider code. A run on Ray and one on one machine share their store,
so either resumes the other.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from chatjudge import sync
from chatjudge.errors import UsageError
from chatjudge.models import Model
from chatjudge.options import RunConfig


def connect() -> None:
    """Join the cluster at `RAY_ADDRESS`, or start a local one (once per process)."""
    try:
        import ray
    except ImportError as exc:
        raise UsageError("--executor ray needs Ray: pip install 'chatjudge[ray]'") from exc
    if ray.is_initialized():
        return
    address = os.environ.get("RAY_ADDRESS")
    if address:
        try:
            ray.init(log_to_driver=False)
        except ConnectionError as exc:
            raise UsageError(
                f"cannot join the Ray cluster at RAY_ADDRESS={address}: {exc}"
            ) from exc
    else:
        ray.init(include_dashboard=False, log_to_driver=False)


def distribute(
    models: Sequence[Model], config: RunConfig, *, call_with: str = "prompt"
) -> list[Model]:
    """`models` as the executor runs them: as they are, or on Ray workers. A model given
    twice (one model in two roles) stays one set of workers."""
    if config.run.executor != "ray":
        if config.run.workers is not None:
            raise UsageError("--workers applies with --executor ray only")
        return list(models)
    connect()
    import ray

    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    started: dict[int, Model] = {}
    try:
        _start_all(models, config, call_with, cpus, started)
    except BaseException:  # a model that cannot start leaves no worker of the others behind
        for remote in started.values():
            sync.run_sync(remote.aclose())
        raise
    return [started[id(m)] for m in models]


def _start_all(
    models: Sequence[Model], config: RunConfig, call_with: str, cpus: int, started: dict[int, Model]
) -> None:
    from chatjudge.cluster.remote import start
    from chatjudge.cluster.spec import WorkerSpec

    n_local = sum(1 for m in {id(m): m for m in models}.values() if m.provider == "local")
    for model in models:
        if id(model) in started:
            continue
        local = model.provider == "local"
        # One worker per CPU: a remote model's worker is one event loop; a local one is
        # one llama.cpp process, and the CPUs are shared between the local models.
        default = max(1, cpus // n_local) if local else cpus
        workers = config.run.workers or default
        if local and workers * n_local > cpus:
            raise UsageError(
                f"{workers} workers for each of {n_local} local model(s) need "
                f"{workers * n_local} CPUs; the Ray cluster has {cpus}"
            )
        spec = WorkerSpec.of(model, call_with=call_with)
        started[id(model)] = start(model, spec, workers, config.run.concurrency)


def key_checked_here(config: RunConfig) -> bool:
    """Whether the driver checks model keys: on Ray each worker checks its own."""
    return config.run.executor != "ray"
