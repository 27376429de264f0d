"""The local Ray cluster chatjudge starts itself (no RAY_ADDRESS): stopped with the process,
quicker than Ray's own exit hook, and nothing of it left behind."""

from __future__ import annotations

import os
import subprocess
import sys
import time

SCRIPT = """
import ray
from chatjudge.cluster import connect
connect()
node = ray._private.worker._global_node
pids = [i.process.pid for infos in node.all_processes.values() for i in infos]
print(" ".join(map(str, pids)), flush=True)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_cluster_started_here_stops_with_the_process_at_once() -> None:
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()
    started = time.monotonic()
    _, err = proc.communicate(timeout=60)
    took = time.monotonic() - started
    pids = [int(p) for p in line.split()]
    assert proc.returncode == 0 and len(pids) >= 4, err.decode()[-2000:]
    # Ray's own exit hook sleeps 0.5 s, then waits 1 s for the autoscaler's monitor.
    assert took < 1.4, took
    deadline = time.monotonic() + 10
    while any(map(_alive, pids)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(map(_alive, pids))
