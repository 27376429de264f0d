"""A plain Python callable as a model, sync or async.

As a judge it is called `fn(prompt)` or `fn(prompt, schema)`: it cannot be made to
follow the verdict schema, so the prompt carries the protocol's output-format
instruction (the runner appends it, as for every model that does not
`supports_schema`), and `schema` (the verdict JSON schema) is passed when its
signature takes a second positional parameter. As a model under test it is called
`fn(messages)` with OpenAI-style messages. It returns the reply text, a dict (sent on
as JSON, NaN and infinity as null) or a `Reply` (to report token usage). Sync callables
run in a worker thread so that a slow one does not block the event loop.

Tools: a model under test whose signature takes a `tools` keyword (or `**kwargs`) is a
`ToolFunctionModel`, which `supports_tools`: when a row offers tools it is called
`fn(messages, tools=TOOLS)` (OpenAI's definitions; the messages hold the turn's earlier
calls and results in OpenAI's format) and calls them by returning a `Reply` with
`tool_calls`. A function without that keyword cannot see tools, so it does not support
them: set-up refuses it for a row with tools, as it refuses the local model.

Errors: a `chatjudge.errors.ModelError` raised by the callable passes through with its
retry policy (raise `RateLimitError` or `ServerError` to be retried); any other
exception, `SystemExit` too, becomes a non-retryable `ModelError` carrying the exception's
text, so the item is recorded as failed and the run goes on.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import inspect
import json
from collections.abc import Callable
from typing import Any

from chatjudge.chat.types import ModelRequest, Reply
from chatjudge.errors import ModelError, UsageError
from chatjudge.jsoncodec import finite
from chatjudge.models.base import Model
from chatjudge.models.tool_wire import refuse_tools
from chatjudge.options import ClientOptions


class FunctionModel(Model):
    provider = "python"
    supports_schema = False
    honours = frozenset()  # it gets no generation settings

    def __init__(self, fn: Callable[..., Any], *, call_with: str = "prompt") -> None:
        self.fn = fn
        self.qualname = _qualname(fn)
        super().__init__(
            f"{getattr(fn, '__module__', None) or '?'}.{self.qualname}", ClientOptions()
        )
        self.is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
            type(fn).__call__  # an object with `async def __call__`
        )
        self.call_with = call_with
        self.takes_schema = call_with == "prompt" and _positional_arity(fn) >= 2

    @property
    def name(self) -> str:
        return f"{self.provider}/{self.qualname}"

    async def generate(self, request: ModelRequest) -> Reply:
        args: tuple[Any, ...]
        kwargs: dict[str, Any] = {}
        if request.tools:
            refuse_tools(self, request)
            kwargs["tools"] = copy.deepcopy(request.tools)
        if self.call_with == "messages":
            args = (copy.deepcopy(request.messages),)
        else:
            args = ("\n\n".join(m["content"] for m in request.messages),)
            if self.takes_schema:
                args += (request.schema.schema if request.schema else None,)
        try:
            if self.is_async:
                result = await self.fn(*args, **kwargs)
            else:
                result = await asyncio.to_thread(self.fn, *args, **kwargs)
                if inspect.isawaitable(result):
                    result = await result
        except ModelError:
            raise
        except (Exception, SystemExit) as exc:  # the function's sys.exit() ends its call only
            raise ModelError(f"{self.name} raised {type(exc).__name__}: {exc}") from exc
        return _reply(result, self.name)


class ToolFunctionModel(FunctionModel):
    """A model under test whose function takes `tools`: it may be offered them."""

    supports_tools = True


def function_model(fn: Callable[..., Any], *, call_with: str = "prompt") -> FunctionModel:
    """`fn` as a model: one that can be offered tools when it takes them (module doc)."""
    takes_tools = call_with == "messages" and _takes_keyword(fn, "tools")
    return (ToolFunctionModel if takes_tools else FunctionModel)(fn, call_with=call_with)


def _qualname(fn: Callable[..., Any]) -> str:
    if isinstance(fn, functools.partial):
        return _qualname(fn.func)
    return getattr(fn, "__qualname__", None) or type(fn).__qualname__


def _takes_keyword(fn: Callable[..., Any], name: str) -> bool:
    """Whether `fn` can be passed the keyword `name` (by name or as `**kwargs`)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    keyword = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return any(
        (p.name == name and p.kind in keyword) or p.kind is inspect.Parameter.VAR_KEYWORD
        for p in params
    )


def _positional_arity(fn: Callable[..., Any]) -> int:
    """How many positional arguments `fn` accepts (2 for `*args`), checked once up front."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # some builtins have no signature: give them the prompt
        return 1
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    required_kw = [
        p.name
        for p in params
        if p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is inspect.Parameter.empty
    ]
    if required_kw:
        raise UsageError(
            f"a judge function is called as fn(prompt[, schema]); it requires {required_kw}"
        )
    if sum(1 for p in params if p.kind in positional and p.default is p.empty) > 2:
        raise UsageError("a judge function is called as fn(prompt[, schema]); it requires more")
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
        return 2
    arity = sum(1 for p in params if p.kind in positional)
    if arity == 0:
        raise UsageError("a judge function must take the prompt as its first argument")
    return arity


def _reply(result: Any, name: str) -> Reply:
    if isinstance(result, Reply):
        return result
    if isinstance(result, str):
        return Reply(result)
    if isinstance(result, dict):
        return Reply(json.dumps(finite(result), ensure_ascii=False, allow_nan=False))
    raise ModelError(f"{name} returned {type(result).__name__}; expected str, dict or Reply")
