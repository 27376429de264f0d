"""llama-cpp-python's own OpenAI-compatible server, run as a subprocess for tests.

A real server on loopback serving the bundled SmolLM2 model, so the OpenAI judge
is tested over real HTTP against a real implementation of the wire format.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from chatjudge.models.local import default_model_path

MODEL_ALIAS = "smollm2-135m-instruct"


@dataclass(frozen=True)
class LlamaServer:
    base_url: str  # e.g. http://127.0.0.1:PORT/v1
    model: str  # the model id the server reports in /v1/models


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tail(log: Path, lines: int = 40) -> str:
    return "\n".join(log.read_text("utf-8", "replace").splitlines()[-lines:])


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# Tries at a free port: between `_free_port` and the server's bind, a test running beside
# this one (pytest-xdist) may take the same port for a server of its own.
BIND_TRIES = 3


class _PortTaken(Exception):
    pass


@contextmanager
def run_llama_server(
    model: Path | None = None, *, n_ctx: int = 4096, timeout: float = 120.0
) -> Iterator[LlamaServer]:
    """Start the server on a free loopback port, wait until `/v1/models` answers, stop it."""
    env = {k: v for k, v in os.environ.items() if k not in ("HOST", "PORT", "CONFIG_FILE")}
    for attempt in range(1, BIND_TRIES + 1):
        port = _free_port()
        cmd = [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(model or default_model_path()),
            "--model_alias", MODEL_ALIAS,
            "--host", "127.0.0.1", "--port", str(port),
            "--n_ctx", str(n_ctx),
            # one thread, as the local judge's workers: a second one mostly spins waiting
            # (CPU spent for nothing when the tests beside it keep the cores busy)
            "--n_threads", "1", "--n_threads_batch", "1",
            "--seed", "0",
            "--logits_all", "false",  # only needed for logprobs; costs time on every prompt
            "--use_mlock", "false",  # mlock needs a raised RLIMIT_MEMLOCK in containers
            "--verbose", "false",
        ]  # fmt: skip
        with tempfile.TemporaryDirectory(prefix="llama-server-") as tmp:
            log = Path(tmp) / "server.log"
            with log.open("wb") as out:
                proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
            try:
                base_url = f"http://127.0.0.1:{port}/v1"
                model_id = _wait_ready(proc, base_url, log, timeout, last=attempt == BIND_TRIES)
            except _PortTaken:
                continue
            try:
                yield LlamaServer(base_url=base_url, model=model_id)
            finally:
                _stop(proc)
            return


def _wait_ready(
    proc: subprocess.Popen[bytes], base_url: str, log: Path, timeout: float, *, last: bool
) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            if not last and "address already in use" in _tail(log).lower():
                raise _PortTaken
            raise RuntimeError(
                f"llama.cpp server exited with status {proc.returncode}:\n{_tail(log)}"
            )
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=2) as resp:
                model_id = str(json.load(resp)["data"][0]["id"])
            if model_id == MODEL_ALIAS:  # not another test's server on a port taken first
                return model_id
        except (urllib.error.URLError, ConnectionError, TimeoutError, ValueError, LookupError):
            pass
        time.sleep(0.2)
    _stop(proc)
    raise RuntimeError(f"llama.cpp server not ready after {timeout:.0f} s:\n{_tail(log)}")
