"""The process that runs llama.cpp for the `local` judge: `python -m chatjudge.models.llama_worker`.

llama.cpp is native code: a crash in it (SIGSEGV in AMX kernels, SIGILL on a CPU
without the instructions it was built for, an abort) kills the process it runs in.
Running it here, one model per process, turns such a crash into an error the run
can report instead of the end of chatjudge itself.

Protocol, one JSON object per line: the parent writes the settings line first, the
worker answers `{"ready": ...}` (or `{"error": ...}` and exits), then each request
line `{"id", "messages", "schema", "settings"}` gets one reply line with the same id.
The worker's stdout carries only these lines: fd 1 is moved aside at start-up and
pointed at stderr, so whatever llama.cpp prints cannot corrupt the protocol.
Closing the worker's stdin ends it.
"""

from __future__ import annotations

import faulthandler
import math
import os
import sys
from functools import lru_cache
from typing import Any, BinaryIO

import orjson

MAX_STRING_CHARS = 300  # cap on every free-text verdict field (rationales)
# llama.cpp's usual default: without it SmolLM2 loops ("A: A: A: ...") until the cap.
REPEAT_PENALTY = 1.1


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


def has_amx(system_info: str) -> bool:
    """Whether a llama.cpp build reports AMX kernels (`AMX_INT8 = 1`) in its system info."""
    return any(
        part.strip().startswith("AMX") and part.strip().endswith("= 1")
        for part in system_info.split("|")
    )


class Worker:
    """One loaded model answering requests in order."""

    def __init__(self, config: dict[str, Any]) -> None:
        import llama_cpp

        self._llama_cpp = llama_cpp
        self.llm: Any = llama_cpp.Llama(
            model_path=config["model_path"],
            n_ctx=config["n_ctx"],
            n_threads=config["n_threads"],
            n_threads_batch=config["n_threads_batch"],
            verbose=False,
        )
        self.system_info = llama_cpp.llama_print_system_info().decode("utf-8", "replace")
        self.model_name = os.path.basename(config["model_path"])

    @lru_cache(maxsize=32)  # noqa: B019 - one worker per process, living as long as it
    def grammar(self, schema_json: bytes) -> Any:
        """The GBNF grammar of a JSON schema, built once per schema."""
        schema = bounded_schema(orjson.loads(schema_json))
        return self._llama_cpp.LlamaGrammar.from_json_schema(
            orjson.dumps(schema).decode(), verbose=False
        )

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        settings = request["settings"]
        messages = request["messages"]
        llm = self.llm
        n_ctx = llm.n_ctx()
        text = "\n".join(m["content"] for m in messages)
        n_prompt = len(llm.tokenize(text.encode("utf-8"), add_bos=False))
        if n_prompt >= n_ctx:
            return _error("BadRequestError", self._too_long(n_prompt, n_ctx))
        schema = request.get("schema")
        grammar = self.grammar(orjson.dumps(schema)) if schema is not None else None
        perf_ctx = llm._ctx.ctx
        self._llama_cpp.llama_perf_context_reset(perf_ctx)
        try:
            out = llm.create_chat_completion(
                messages=messages,
                grammar=grammar,
                temperature=settings["temperature"],
                max_tokens=settings["max_tokens"],
                seed=settings["seed"],
                repeat_penalty=REPEAT_PENALTY,
            )
        except ValueError as exc:
            if "context window" in str(exc):  # the chat template pushed it over the window
                return _error("BadRequestError", f"{self._too_long(n_prompt, n_ctx)} ({exc})")
            return _error("ModelError", f"llama.cpp failed: {exc}")
        except RuntimeError as exc:
            return _error("ModelError", f"llama.cpp failed: {exc}")
        perf = self._llama_cpp.llama_perf_context(perf_ctx)
        usage = out.get("usage") or {}
        return {
            "text": out["choices"][0]["message"]["content"] or "",
            "input_tokens": usage.get("prompt_tokens"),
            "output_tokens": usage.get("completion_tokens"),
            # Where the time went, for benchmarks: prompt tokens actually evaluated (the rest
            # came from the KV cache of the previous call) and milliseconds per phase.
            "timings": {
                "prompt_evaluated": perf.n_p_eval,
                "prompt_ms": perf.t_p_eval_ms,
                "generated": perf.n_eval,
                "generation_ms": perf.t_eval_ms,
            },
        }

    def _too_long(self, n_prompt: int, n_ctx: int) -> str:
        return (
            f"the prompt has {n_prompt} tokens; {self.model_name}'s context window is "
            f"{n_ctx} tokens (prompt and reply must fit in it)"
        )


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"error": {"type": kind, "message": message}}


def _send(out: BinaryIO, message: dict[str, Any]) -> None:
    out.write(orjson.dumps(message) + b"\n")
    out.flush()


def main() -> None:
    faulthandler.enable()  # a native crash prints the Python stack into the crash report
    proto = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # llama.cpp's own prints go to stderr, never into the protocol
    sys.stdout = sys.stderr
    stdin = sys.stdin.buffer
    config = orjson.loads(stdin.readline())
    try:
        worker = Worker(config)
    except (ValueError, RuntimeError, OSError) as exc:
        _send(proto, _error("ModelLoadError", f"cannot load {config['model_path']}: {exc}"))
        return
    _send(proto, {"ready": True, "system_info": worker.system_info, "pid": os.getpid()})
    for line in stdin:
        request = orjson.loads(line)
        reply = worker.answer(request)
        reply["id"] = request["id"]
        _send(proto, reply)


if __name__ == "__main__":
    main()
