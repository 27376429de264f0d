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

import atexit
import contextlib
import logging
import os
import socket
import threading
from collections.abc import Sequence
from typing import Any

from chatjudge.calls import run_sync as sync
from chatjudge.errors import UsageError
from chatjudge.models import Model
from chatjudge.options import RunConfig

PROBE_TIMEOUT = 10.0  # seconds for the cluster's port to accept a connection
CONNECT_TIMEOUT = 45.0  # seconds for Ray to join it (Ray itself retries for minutes)
LOOPBACK = "127.0.0.1"  # the one node address on which Ray binds its services to loopback


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
        _join(ray, address)
    else:
        _start_local(ray)
        atexit.register(_stop_local, ray)  # runs before Ray's own exit hook (registered first)


def _start_local(ray: Any) -> None:
    """Start a one-machine cluster that listens on loopback only (no one else can reach it).

    Ray binds its services (GCS, raylet, agents, workers, the driver's) to loopback only when
    the node's address is exactly 127.0.0.1, but turns a 127.0.0.1 given to `ray.init` into
    the machine's outward address unless multi-node clusters are off. That switch,
    `RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER`, is read once, when Ray is imported: its value is set
    off for this start only, and put back. A Ray that starts elsewhere all the same is stopped.
    """
    from ray._private import ray_constants

    allowed = ray_constants.ENABLE_RAY_CLUSTER
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        ray.init(_node_ip_address=LOOPBACK, include_dashboard=False, log_to_driver=False)
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = allowed
    gcs = ray.get_runtime_context().gcs_address
    if gcs.rpartition(":")[0] != LOOPBACK:
        _stop_local(ray)
        raise UsageError(
            f"Ray {ray.__version__} started the local cluster at {gcs}, not on loopback "
            "only, so chatjudge stopped it: start a cluster on a private network yourself "
            "and set RAY_ADDRESS (docs/scaling.md), or run without --executor ray"
        )


def _stop_local(ray: Any) -> None:
    """Stop the cluster this process started, sooner than Ray's exit hook, which first
    sleeps and then gives the autoscaler's monitor (of no use to a one-machine cluster)
    time to honour SIGTERM before it kills it."""
    node = getattr(getattr(ray, "_private", None), "worker", None)
    node = getattr(node, "_global_node", None)
    processes = getattr(node, "all_processes", {}) or {}
    for info in processes.get("monitor", ()):
        with contextlib.suppress(OSError):
            info.process.kill()
    ray.shutdown()


def _join(ray: Any, address: str) -> None:
    """Join the cluster at `address` within a bounded time, or say why not.

    Ray retries an unreachable address for minutes, printing only its own warnings: its
    port is tried first (`PROBE_TIMEOUT`), then Ray's own join runs on a helper thread
    given `CONNECT_TIMEOUT` seconds; a join that has not returned by then is abandoned.
    """
    fix = (
        "check that the cluster is up and that RAY_ADDRESS is its head's address (host:port, "
        "or ray://host:10001 for Ray Client), or unset RAY_ADDRESS to start a local cluster"
    )
    target = _host_port(address)
    if target is not None:
        try:
            socket.create_connection(target, timeout=PROBE_TIMEOUT).close()
        except OSError as exc:
            raise UsageError(
                f"cannot reach the Ray cluster at RAY_ADDRESS={address} ({exc}): {fix}"
            ) from exc
    failure: list[BaseException] = []
    joined = threading.Event()

    def join() -> None:
        try:
            ray.init(log_to_driver=False, logging_level=logging.ERROR)
        except Exception as exc:  # told on the caller's thread
            failure.append(exc)
        finally:
            joined.set()

    threading.Thread(target=join, name="chatjudge-ray-join", daemon=True).start()
    if not joined.wait(CONNECT_TIMEOUT):
        raise UsageError(
            f"the Ray cluster at RAY_ADDRESS={address} did not answer within "
            f"{CONNECT_TIMEOUT:g} s: {fix}"
        )
    if failure:
        raise UsageError(
            f"cannot join the Ray cluster at RAY_ADDRESS={address} ({failure[0]}): {fix}"
        ) from failure[0]


def _host_port(address: str) -> tuple[str, int] | None:
    """The host and port to probe in a Ray address (`host:port`, `ray://host:port`); None
    for `auto`/`local` and anything else Ray resolves itself."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        return None
    return host.strip("[]") or "127.0.0.1", int(port)


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
    from chatjudge.ray_executor.remote import start
    from chatjudge.ray_executor.worker_spec import WorkerSpec

    n_local = sum(1 for m in {id(m): m for m in models}.values() if m.runs_locally)
    for model in models:
        if id(model) in started:
            continue
        local = model.runs_locally
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
