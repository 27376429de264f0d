"""Who answers the tool calls of a model under test: the row's recording (`--tool-replay`)
or the user's Python functions (`--tools MODULE:OBJECT`).

Replay answers a call with the recorded result of a call to the same tool with equal
arguments (canonical JSON: key order and spacing do not matter; arguments that are not JSON
compare as the recorded text) anywhere in the row's conversation fields or its
`baseline_trajectory`. Where several recorded calls are equal, the k-th equal call of a turn
gets the k-th recorded result (a tool polled until it changes), and later ones the last. A
call with no recorded result gets a tool message saying so, and is counted.

The user's functions are a dict of tool name to callable, sync or async, called with the
call's arguments (a JSON object) as keywords, each limited to `--tool-timeout` seconds. Each
call runs in a daemon thread of its own (an async function in an event loop of its own
there), so that one that blocks, async or not, is held to its timeout too: one that hangs
past it is left behind (Python cannot stop a thread) without keeping the command from
exiting. What a function returns is the result (a string as it is, anything else as JSON,
NaN and infinity as null, as in every file chatjudge writes); anything it raises
(`SystemExit` too), a timeout, arguments that are not a JSON object or a name the dict does
not hold go back to the model as the tool's error text, and are counted. A function may
return anything it can read, the environment's keys among them: its answers are masked as
the models' replies are (`chatjudge.secrets`), with the keys of every built-in provider, so
that none reaches the model, the output or the store.

With `--tools`, a row without tools of its own is offered the functions (definitions made
from them, `definitions_of`); with `--tool-replay` it has nothing to replay, and is
answered without tools.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import json
import os
import sys
import threading
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import orjson

from chatjudge import jsoncodec, secrets
from chatjudge.chat.messages import canonical_arguments
from chatjudge.chat.toolcalls.call_ids import CallIds
from chatjudge.chat.toolcalls.definitions import tool
from chatjudge.chat.types import ToolUse
from chatjudge.errors import UsageError
from chatjudge.models import Model, registry
from chatjudge.options import ToolOptions

Miss = Literal["unmatched", "error"]  # how an answer that is not a result is counted


@dataclass(frozen=True, slots=True)
class ToolAnswer:
    """The text a tool message carries back to the model, and how it counts when it is not
    a result (`unmatched`: replay held none; `error`: the function failed)."""

    text: str
    miss: Miss | None = None


class Answers(Protocol):
    """What answers one turn's tool calls (a fresh one per turn: replay counts repeats)."""

    async def answer(self, call: ToolUse) -> ToolAnswer: ...


# --- --tool-replay -------------------------------------------------------------------------


Signature = tuple[str, str | bytes]  # a call's tool, and its arguments' key


def _signature(name: str, arguments: str) -> Signature:
    """A call's tool, and a key of its arguments equal exactly where their canonical texts
    (`canonical_arguments`) are, and cheaper to make: orjson's sorted JSON of them where
    it writes what it read (it writes NaN and infinity as null), their text otherwise."""
    try:
        value = jsoncodec.loads(arguments, max_depth=jsoncodec.INPUT_DEPTH, exact_ints=True)
    except ValueError:
        return name, arguments  # not JSON: compared as recorded, as canonical_arguments does
    try:
        key = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:  # a lone surrogate, an integer beyond 64 bits
        key = b"null"
    return name, key if b"null" not in key else canonical_arguments(arguments)


@dataclass
class Recording:
    """A row's recorded tool results, by tool and canonical arguments, in recorded order;
    `written`: the signature of each recorded call's tool and arguments text (a call written
    alike, as models mostly write one tool's arguments, needs no reading)."""

    results: dict[Signature, list[str]] = field(default_factory=dict)
    written: dict[tuple[str, str], Signature] = field(default_factory=dict)

    @classmethod
    def of(cls, conversations: Iterable[Any]) -> Recording:
        """The results recorded in `conversations` (message lists in OpenAI's format, as
        rows are read; anything else holds none), each paired with its call by the one
        rule (`chatjudge.chat.toolcalls.call_ids`)."""
        recording = cls()
        for messages in conversations:
            if not isinstance(messages, list):
                continue
            ids = CallIds()
            calls: dict[int, Signature] = {}  # a call's number -> its signature
            for message in messages:
                if not isinstance(message, dict):
                    continue
                for call in message.get("tool_calls") or ():
                    function = call.get("function") or {}
                    text = (str(function.get("name")), str(function.get("arguments") or ""))
                    if text not in recording.written:
                        recording.written[text] = _signature(*text)
                    calls[ids.call(call.get("id"), text[0]).number] = recording.written[text]
                if message.get("role") == "tool":
                    answered = ids.result(message.get("tool_call_id"), message.get("name"))
                    if answered is not None:
                        recording.results.setdefault(calls[answered.number], []).append(
                            str(message.get("content") or "")
                        )
        return recording

    def replay(self) -> Replay:
        return Replay(self)


@dataclass
class Replay:
    """One turn's answers from a recording."""

    recording: Recording
    _asked: dict[Signature, int] = field(default_factory=dict)

    async def answer(self, call: ToolUse) -> ToolAnswer:
        text = (call.name, call.arguments)
        signature = self.recording.written.get(text) or _signature(*text)
        results = self.recording.results.get(signature)
        if not results:
            return ToolAnswer(
                f"no recorded result: the recording holds no call of {call.name} with the "
                f"arguments {canonical_arguments(call.arguments) or '(none)'}",
                "unmatched",
            )
        k = self._asked.get(signature, 0)
        self._asked[signature] = k + 1
        return ToolAnswer(results[min(k, len(results) - 1)])


# --- --tools MODULE:OBJECT -----------------------------------------------------------------


def load_functions(spec: str) -> dict[str, Callable[..., Any]]:
    """`--tools MODULE:OBJECT`: the user's dict of tool name to callable; a UsageError,
    before anything is sent, when it cannot be imported or is not such a dict."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise UsageError(f"--tools {spec!r}: expected MODULE:OBJECT, e.g. my_tools:TOOLS")
    added = os.getcwd() not in sys.path
    if added:  # the user's module sits where the command runs, as `python -m` finds it
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise UsageError(
            f"--tools {spec}: cannot import {module_name}: {type(exc).__name__}: {exc}"
        ) from exc
    finally:
        if added:
            sys.path.remove(os.getcwd())
    value = getattr(module, attr, None)
    if not isinstance(value, Mapping):
        got = "nothing" if value is None else type(value).__name__
        raise UsageError(
            f"--tools {spec}: {module_name}.{attr} must be a dict of tool name to function, "
            f"got {got}"
        )
    bad = [str(name) for name, fn in value.items() if not isinstance(name, str) or not callable(fn)]
    if bad:
        raise UsageError(
            f"--tools {spec}: these entries are not a name and a function: {', '.join(bad)}"
        )
    return dict(value)


@dataclass
class Functions:
    """The user's functions, each call limited to `timeout` seconds."""

    functions: dict[str, Callable[..., Any]]
    timeout: float

    def __post_init__(self) -> None:
        # A function reads what it likes: any provider's key, not only the run's models'.
        secrets.remember_env(*registry.builtin_secret_env_vars())

    async def answer(self, call: ToolUse) -> ToolAnswer:
        answer = await self._answer(call)
        return ToolAnswer(secrets.mask(answer.text), answer.miss)

    async def _answer(self, call: ToolUse) -> ToolAnswer:
        fn = self.functions.get(call.name)
        if fn is None:
            known = ", ".join(sorted(self.functions)) or "none"
            return ToolAnswer(f"error: no tool named {call.name!r} (tools: {known})", "error")
        try:
            arguments = jsoncodec.loads(call.arguments or "{}") if call.arguments.strip() else {}
        except ValueError:
            arguments = None
        if not isinstance(arguments, dict):
            return ToolAnswer(
                f"error: the arguments must be a JSON object, got {call.arguments[:200]!r}",
                "error",
            )
        try:
            result, raised = await asyncio.wait_for(_called(fn, arguments), self.timeout)
        except TimeoutError:
            return ToolAnswer(f"error: {call.name} timed out after {self.timeout:g} s", "error")
        if raised is not None:
            return ToolAnswer(f"error: {type(raised).__name__}: {_said(raised)}", "error")
        if isinstance(result, str):
            return ToolAnswer(result)
        try:
            text = json.dumps(jsoncodec.finite(result), ensure_ascii=False, default=str,
                              allow_nan=False)  # fmt: skip
        except (ValueError, RecursionError) as exc:  # a cycle; a NaN as a key
            return ToolAnswer(f"error: {call.name} returned what JSON cannot hold: {exc}", "error")
        return ToolAnswer(text)


async def _called(
    fn: Callable[..., Any], arguments: dict[str, Any]
) -> tuple[Any, BaseException | None]:
    """`fn(**arguments)` in a daemon thread of its own (module doc): what it returned, or
    what it raised, whatever that is (a tool's `SystemExit` ends the tool, not the command)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[tuple[Any, BaseException | None]] = loop.create_future()

    def settle(outcome: tuple[Any, BaseException | None]) -> None:
        if not done.cancelled():
            done.set_result(outcome)

    def run() -> None:
        outcome: tuple[Any, BaseException | None]
        try:
            result = fn(**arguments)
            if inspect.isawaitable(result):  # async, or a sync callable returning a coroutine
                result = asyncio.run(_awaited(result))
            outcome = (result, None)
        except BaseException as exc:  # every failure goes back to the model
            outcome = (None, exc)
        with contextlib.suppress(RuntimeError):  # it outlived the command: nobody waits
            loop.call_soon_threadsafe(settle, outcome)

    thread = threading.Thread(target=run, name=f"tool-{getattr(fn, '__name__', 'fn')}", daemon=True)
    try:
        thread.start()
    except RuntimeError as exc:  # no thread left to start (timed-out tools still running)
        return None, exc
    return await done


def _said(raised: BaseException) -> str:
    """What an exception says, or that it cannot say it (its own `__str__` raised)."""
    try:
        return str(raised)
    except Exception as exc:  # noqa: BLE001 (a user's exception: anything can come out)
        return f"(its message could not be read: {type(exc).__name__})"


async def _awaited(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


# --- which, checked before anything is sent -------------------------------------------------


@dataclass
class ToolAnswering:
    """How a command answers tool calls: by replay, or with the user's functions."""

    functions: Functions | None = None  # None: replay
    # Offered to a row without tools of its own: the functions' definitions (replay: none).
    definitions: list[dict[str, Any]] = field(init=False)

    def __post_init__(self) -> None:
        self.definitions = definitions_of(self.functions.functions) if self.functions else []

    def offered(self, tools: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
        """What a row's turn is offered: its own tools, else the definitions (none: the
        turn is answered without tools)."""
        return tools or self.definitions

    def answers(self, recorded: Iterable[Any]) -> Answers:
        """The answers of one turn of a row whose recorded conversations are `recorded`."""
        if self.functions is not None:
            return self.functions
        return Recording.of(recorded).replay()


def tool_answering(
    options: ToolOptions, tool_rows: int, model: Model, *, replay: bool = True
) -> ToolAnswering | None:
    """How the tool calls of `model` are answered, or None where no row has tools and
    `--tools` gives none (they are answered as without tools). Refused (UsageError) before
    anything is sent: both ways given; rows with tools and neither (`replay`: whether the
    command can replay); rows with tools, or `--tools`, and a model that cannot be offered
    them; a `--tools` that is not a dict of functions."""
    functions = None
    if options.tool_replay and options.tools:
        raise UsageError("--tool-replay and --tools both answer tool calls: give one of them")
    if options.no_tools and (options.tool_replay or options.tools):
        raise UsageError(
            "--no-tools offers the model no tools, so none of its calls is answered: give it "
            "without --tool-replay and --tools"
        )
    if options.no_tools:
        return None
    if options.tools:
        functions = Functions(load_functions(options.tools), options.tool_timeout)
    if not tool_rows and functions is None:
        return None
    if not tool_rows and not model.supports_tools:
        raise UsageError(
            f"--tools: {model.name} cannot be offered tools: use a model whose provider can "
            "(openai/MODEL, for one)"
        )
    if not model.supports_tools:
        raise UsageError(
            f"{tool_rows} row(s) have tools (a tools column, or tool calls in their "
            f"conversation), and {model.name} cannot be offered tools: use a model whose "
            "provider can (openai/MODEL, for one)"
        )
    if functions is None and not options.tool_replay:
        ways = "--tool-replay (the row's recorded results) or " if replay else ""
        raise UsageError(
            f"{tool_rows} row(s) have tools (a tools column, or tool calls in their "
            f"conversation): say how the model's tool calls are answered, with {ways}"
            "--tools MODULE:OBJECT (your functions)"
        )
    return ToolAnswering(functions)


_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean",
               list: "array", dict: "object"}  # fmt: skip
_BUILTIN_NAMES = {t.__name__: t for t in _JSON_TYPES}  # annotations written as text


def definitions_of(functions: Mapping[str, Callable[..., Any]]) -> list[dict[str, Any]]:
    """Tool definitions (OpenAI's) for the user's functions, where no row gives them: each
    named by its key, described by its docstring's first paragraph, its keyword parameters
    the properties of an object (typed where annotated with a plain type; required where
    they have no default)."""
    defined = []
    for name, fn in functions.items():
        properties: dict[str, Any] = {}
        required: list[str] = []
        try:
            parameters = list(inspect.signature(fn).parameters.values())
        except (TypeError, ValueError):  # a builtin without a signature: any arguments
            parameters = []
        for p in parameters:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY):
                continue
            annotation = p.annotation
            if isinstance(annotation, str):  # `from __future__ import annotations`
                annotation = _BUILTIN_NAMES.get(annotation)
            kind = _JSON_TYPES.get(annotation) if isinstance(annotation, type) else None
            properties[p.name] = {"type": kind} if kind else {}
            if p.default is p.empty:
                required.append(p.name)
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        doc = (inspect.getdoc(fn) or "").split("\n\n")[0].replace("\n", " ")
        defined.append(tool(name, doc, schema))
    return defined


def assistant_tools(options: ToolOptions, model: Model) -> ToolAnswering | None:
    """`simulate --tools`: the assistant's functions, or None without; refused (UsageError)
    before anything is sent where the assistant's model cannot be offered tools or
    `--tools` is not a dict of functions. (There is no recording to replay in a
    simulation: `--tool-replay` is not an option of `simulate`.)"""
    if not options.tools:
        return None
    functions = Functions(load_functions(options.tools), options.tool_timeout)
    if not model.supports_tools:
        raise UsageError(
            f"--tools: {model.name} cannot be offered tools: use a model whose provider can "
            "(openai/MODEL, for one)"
        )
    return ToolAnswering(functions)
