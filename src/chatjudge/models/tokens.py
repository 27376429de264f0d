"""Counting a request's input tokens without sending it: `--dry-run`'s estimate.

Each model says how its input is counted (`Model.tokenizer`): OpenAI's models with their
own tiktoken encoding, whose files ship in `tiktoken_cache/` (tiktoken would download them
at first use from a host that is not a package registry, which fails offline); a local
GGUF model with its own vocabulary and chat template, as llama.cpp formats the call;
any other model with a stated approximation (4 characters a token).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any, cast

from chatjudge.chat.types import Message

TIKTOKEN_CACHE = Path(__file__).resolve().parent / "tiktoken_cache"


class Tokenizer:
    """A stated approximation: 4 characters a token, 4 tokens of framing a message."""

    name = "approximation (4 characters a token)"
    exact = False

    def count(self, messages: list[Message]) -> int:
        return sum(-(-len(m["content"]) // 4) + 4 for m in messages) + 3


class Tiktoken(Tokenizer):
    """An OpenAI model's encoding, with OpenAI's chat framing (3 tokens a message and 3
    that open the reply)."""

    exact = True

    def __init__(self, encoding: str) -> None:
        self.name = f"tiktoken {encoding}"
        self.encoding = _encoding(encoding)

    def count(self, messages: list[Message]) -> int:
        encode = self.encoding.encode_ordinary
        return sum(3 + len(encode(m["role"])) + len(encode(m["content"])) for m in messages) + 3


def tiktoken_for(model: str) -> Tokenizer:
    """`model`'s tiktoken encoding, or the approximation for a name tiktoken does not know
    (a model served by vLLM or Ollama behind `--base-url`)."""
    import tiktoken

    try:
        return Tiktoken(tiktoken.encoding_name_for_model(model))
    except KeyError:
        return Tokenizer()


@lru_cache(maxsize=4)
def _encoding(name: str) -> Any:
    """The encoding, read from the files chatjudge ships: tiktoken reads its files from
    TIKTOKEN_CACHE_DIR, which points at them while it loads one."""
    import tiktoken

    before = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(TIKTOKEN_CACHE)
    try:
        return tiktoken.get_encoding(name)
    finally:  # only this variable is put back, whatever else changed meanwhile
        if before is None:
            del os.environ["TIKTOKEN_CACHE_DIR"]
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = before


class LlamaVocab(Tokenizer):
    """A GGUF model's own tokenizer and chat template (its vocabulary only is loaded)."""

    exact = True

    def __init__(self, path: Path) -> None:
        import llama_cpp
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        self.name = f"llama.cpp vocabulary of {path.name}"
        with _quiet_stderr():  # llama.cpp prints a context warning even when not verbose
            self.llm = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
        template = self.llm.metadata.get("tokenizer.chat_template")
        model = self.llm._model
        self.formatter = template and Jinja2ChatFormatter(
            template=template,
            eos_token=model.token_get_text(self.llm.token_eos()),
            bos_token=model.token_get_text(self.llm.token_bos()),
        )

    def count(self, messages: list[Message]) -> int:
        if not self.formatter:
            return super().count(messages)
        formatted = self.formatter(messages=cast(Any, messages))
        tokens = self.llm.tokenize(
            formatted.prompt.encode("utf-8"), add_bos=not formatted.added_special, special=True
        )
        return len(tokens)


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Native code's writes to stderr (file descriptor 2) go nowhere for a moment."""
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
