"""A local Ray cluster for one test module: 2 CPUs, no dashboard, and workers that inherit
an OPENAI_API_KEY this process does not keep (as on a real cluster, the key lives in the
workers' environment only)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import ray


@contextlib.contextmanager
def local_cluster(key: str) -> Iterator[str]:
    """Start the cluster with `key` in its workers' environment; its GCS address."""
    before = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = key
    try:  # only the key is put back: what ray.init sets (its auth token) stays for the tests
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    finally:
        if before is None:
            del os.environ["OPENAI_API_KEY"]
        else:
            os.environ["OPENAI_API_KEY"] = before
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()
