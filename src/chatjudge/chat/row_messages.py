"""A row's conversation read into OpenAI's chat format with tools, and why it cannot be.

A row's conversation field holds OpenAI's chat format with tools, or Anthropic's
`tool_use`/`tool_result` content blocks, or Gemini's `functionCall`/`functionResponse`
parts; `read_conversation` reads it once into OpenAI's format (the one shape every judge
and model under test reads) and says why it cannot (`message_problems`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from chatjudge import jsoncodec
from chatjudge.chat.messages import ROLE_ALIASES, ROLES, text_of
from chatjudge.chat.toolcalls.call_ids import CallIds

ROW_ROLES = ("system", "user", "assistant", "tool")  # the roles a row's messages may have
_TOOL_KEYS = frozenset(("tool_calls", "tool_call_id", "parts", "function_call"))


@dataclass(slots=True)
class Conversation:
    """A row's messages in OpenAI's chat format: `{"role", "content"}` with text content,
    an assistant's `tool_calls` (`[{"id", "type": "function", "function": {"name",
    "arguments"}}]`, arguments a JSON text) and `{"role": "tool", "tool_call_id", "content"}`
    results; what kept it from being read (`problems`, each naming its message), the calls
    whose arguments are not JSON (kept as recorded: production models emit them), and the
    tools called, by name, in the order of their first call; `origins`: the number of the
    message as written that each message was read from (Anthropic's and Gemini's messages
    may give several), None where each message is the one written at its place."""

    messages: list[dict[str, Any]]
    problems: list[str]
    unparsed_arguments: int = 0
    called: list[str] = field(default_factory=list)
    origins: list[int] | None = None


def read_conversation(messages: list[Any], *, count_unparsed: bool = True) -> Conversation:
    """A row's message list in OpenAI's chat format with tools, whichever of OpenAI's,
    Anthropic's or Gemini's formats it was written in.

    A plain message (`system`, `user` or `assistant` with text) is kept as it is, so plain
    conversations read the same as they always did. Calls and results pair by the one rule
    (`chatjudge.chat.toolcalls.call_ids`), which also writes their ids: a call without an
    id, or with one an earlier call has, gets `call_<n>`, and a result the id of the call it
    answers. Every tool result must answer a call; a call whose result was not recorded is data.
    `count_unparsed=False`: a caller that parses the arguments itself has the messages in
    OpenAI's shape read without parsing them (and `unparsed_arguments` is then 0 for them).
    """
    for message in messages:  # most rows: plain messages, nothing to read
        if type(message) is not dict or not _plain(message):
            break
    else:
        return Conversation(messages, [])
    # tool rows as OpenAI's SDKs write them: read as they are
    written = _as_written(messages, count_unparsed)
    if written is not None:
        return written
    reader = _Reader()
    for number, message in enumerate(messages, 1):
        reader.read(number, message)
    return Conversation(
        reader.out, reader.problems, reader.unparsed, list(reader.called), reader.origins
    )


def message_problems(messages: list[Any]) -> list[str]:
    """Why a row's message list is not one a judge or a model under test can read, one text
    per problem naming the message (none when it is)."""
    return read_conversation(messages).problems


def _plain(message: dict[str, Any]) -> bool:
    """A message with text and nothing of tools: SDKs' dumps (`"tool_calls": null`) and
    Parquet's structs (every key of the column's messages, None where unset) included."""
    return (
        message.get("role") in ROLES
        and type(message.get("content")) is str
        and (_TOOL_KEYS.isdisjoint(message) or not any(message.get(k) for k in _TOOL_KEYS))
    )


# The keys, in order, of what `_Reader` writes: tuples, as `tuple(message)` is compared
# with them (a list display would be built again at every comparison).
_TOOL_RESULT_KEYS = ("role", "tool_call_id", "content")
_CALLING_KEYS = ("role", "content", "tool_calls")
_CALL_KEYS = ("id", "type", "function")
_FUNCTION_KEYS = ("name", "arguments")


def _as_written(messages: list[Any], count_unparsed: bool) -> Conversation | None:
    """The conversation when every message is already what `_Reader` would write in its
    place (plain text; an assistant's `{"role", "content", "tool_calls"}` with text and
    `{"id", "type": "function", "function": {"name", "arguments"}}` calls, ids new and
    arguments text; `{"role": "tool", "tool_call_id", "content"}` answering an open call by
    its id) and nothing is wrong with it: then the messages read as they are, as fast as a
    plain conversation nearly. None for anything else (another shape, another key order, an
    id used again, a problem), which `_Reader` reads and explains."""
    called: dict[str, None] = {}
    ids: set[str] = set()
    open_calls: set[str] = set()
    unparsed = 0
    for message in messages:
        if type(message) is not dict:
            return None
        role = message.get("role")
        if role == "tool":
            if tuple(message) != _TOOL_RESULT_KEYS:
                return None
            call_id = message["tool_call_id"]
            if type(message["content"]) is not str or type(call_id) is not str:
                return None
            if call_id not in open_calls:
                return None
            open_calls.discard(call_id)
            continue
        if "tool_calls" not in message:
            if not (_TOOL_KEYS.isdisjoint(message) and _plain(message)):
                return None
            continue
        calls = message["tool_calls"]
        if (
            role != "assistant"
            or tuple(message) != _CALLING_KEYS
            or type(message["content"]) is not str
            or type(calls) is not list
            or not calls
        ):
            return None
        for call in calls:
            if type(call) is not dict or tuple(call) != _CALL_KEYS or call["type"] != "function":
                return None
            function, call_id = call["function"], call["id"]
            if type(function) is not dict or tuple(function) != _FUNCTION_KEYS:
                return None
            name, arguments = function["name"], function["arguments"]
            if type(name) is not str or not name or type(call_id) is not str or not call_id:
                return None
            if type(arguments) is not str or call_id in ids:
                return None
            if count_unparsed:
                try:
                    jsoncodec.loads(arguments, max_depth=jsoncodec.INPUT_DEPTH)
                except ValueError:
                    unparsed += 1
            ids.add(call_id)
            open_calls.add(call_id)
            called.setdefault(name)
    return Conversation(messages, [], unparsed, list(called))


class _Reader:
    """One conversation's messages read in order, its open calls paired with results."""

    def __init__(self) -> None:
        self.out: list[dict[str, Any]] = []
        self.origins: list[int] = []
        self.problems: list[str] = []
        self.unparsed = 0
        self.called: dict[str, None] = {}
        self.ids = CallIds()

    def read(self, number: int, message: Any) -> None:
        if not isinstance(message, dict):
            self.problems.append(f"message {number}: expected an object with role and content")
        elif _plain(message):
            if not _TOOL_KEYS.isdisjoint(message):  # in a conversation with tools: one shape
                message = {k: v for k, v in message.items() if k not in _TOOL_KEYS}
            self._add(number, message)
        elif message.get("parts") is not None:
            self._gemini(number, message)
        else:
            self._openai(number, message)

    def _problem(self, number: int, text: str) -> None:
        self.problems.append(f"message {number}: {text}")

    def _openai(self, number: int, message: dict[str, Any]) -> None:
        """OpenAI's messages, and Anthropic's (content blocks hold calls and results)."""
        role = message.get("role")
        if role not in ROW_ROLES:
            self._problem(number, f"unknown role {role!r} (use user, assistant, system or tool)")
            return
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        results: list[tuple[Any, str]] = []  # Anthropic tool_result blocks: (id, text)
        content = message.get("content")
        if isinstance(content, list):
            self._blocks(number, role, content, texts, calls, results)
        elif isinstance(content, str):
            texts.append(content)
        elif content is not None or not (role == "assistant" and message.get("tool_calls")):
            got = "missing" if content is None else type(content).__name__
            self._problem(number, f"content must be a string, got {got}")
        if message.get("tool_calls") is not None:
            self._openai_calls(number, role, message["tool_calls"], calls)
        if role == "tool":
            self._result(number, message.get("tool_call_id"), "\n".join(texts), message.get("name"))
            return
        for call_id, text in results:
            self._result(number, call_id, text)
        if results and not any(texts):
            return  # Anthropic: a user message that only carries results
        self._say(number, role, "\n".join(texts), calls)

    def _blocks(
        self,
        number: int,
        role: str,
        blocks: list[Any],
        texts: list[str],
        calls: list[dict[str, Any]],
        results: list[tuple[Any, str]],
    ) -> None:
        for block in blocks:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif kind == "tool_use" and role == "assistant":
                self._call(number, block.get("id"), block.get("name"), block.get("input"), calls)
            elif kind == "tool_result" and role == "user":
                results.append((block.get("tool_use_id"), text_of(block.get("content"))))
            else:
                self._problem(
                    number,
                    f"content block {kind!r} is not supported in a {role} message "
                    "(text; tool_use from the assistant; tool_result from the user)",
                )

    def _openai_calls(
        self, number: int, role: str, value: Any, calls: list[dict[str, Any]]
    ) -> None:
        if role != "assistant":
            self._problem(number, f"only an assistant message may hold tool_calls, not {role}")
            return
        if not isinstance(value, list):
            self._problem(number, f"tool_calls must be a list, got {type(value).__name__}")
            return
        for call in value:
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict):
                self._problem(number, 'a tool call must be {"id", "type": "function", '
                                      '"function": {"name", "arguments"}}')  # fmt: skip
                continue
            self._call(number, call.get("id"), function.get("name"),
                       function.get("arguments"), calls)  # fmt: skip

    def _gemini(self, number: int, message: dict[str, Any]) -> None:
        """Gemini's contents: `{"role": "user" | "model", "parts": [...]}`."""
        role = ROLE_ALIASES.get(str(message.get("role")).lower())
        parts = message["parts"]
        if role is None or not isinstance(parts, list):
            why = "parts must be a list" if role else f"unknown role {message.get('role')!r}"
            self._problem(number, f"{why} (Gemini contents: role user or model, and parts)")
            return
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        for k, part in enumerate(parts, 1):
            part = part if isinstance(part, dict) else {}
            call = part.get("functionCall", part.get("function_call"))
            answer = part.get("functionResponse", part.get("function_response"))
            if isinstance(part.get("text"), str) and role != "tool":
                texts.append(part["text"])
            elif isinstance(call, dict) and role == "assistant":
                self._call(number, call.get("id"), call.get("name"), call.get("args", {}), calls)
            elif isinstance(answer, dict) and role in ("user", "tool"):
                response = answer.get("response")
                text = response if isinstance(response, str) else _json_text(response)
                self._result(number, answer.get("id"), text, answer.get("name"))
            else:
                self._problem(
                    number,
                    f"part {k} is not supported in a {message.get('role')} message (text; "
                    "functionCall from the model; functionResponse from the user)",
                )
        if texts or calls:
            self._say(number, role, "\n".join(texts), calls)

    def _call(
        self, number: int, call_id: Any, name: Any, arguments: Any, calls: list[dict[str, Any]]
    ) -> None:
        if not isinstance(name, str) or not name:
            self._problem(number, "a tool call has no function name")
            return
        if isinstance(arguments, str):
            try:
                jsoncodec.loads(arguments, max_depth=jsoncodec.INPUT_DEPTH)
            except ValueError:
                self.unparsed += 1
        else:
            arguments = _json_text({} if arguments is None else arguments)
        call_id = self.ids.call(call_id, name).written
        self.called.setdefault(name)
        calls.append(
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
        )

    def _result(self, number: int, call_id: Any, text: str, name: Any = None) -> None:
        answered = self.ids.result(call_id, name)
        if answered is None:
            of = f" of {name!r}" if name else ""
            why = f"id {call_id!r}" if call_id else "no id; every call before it has its result"
            self._problem(number, f"tool result{of} answers no earlier call ({why})")
            return
        self._add(number, {"role": "tool", "tool_call_id": answered.written, "content": text})

    def _say(self, number: int, role: str, text: str, calls: list[dict[str, Any]]) -> None:
        message: dict[str, Any] = {"role": role, "content": text}
        if calls:
            message["tool_calls"] = calls
        self._add(number, message)

    def _add(self, number: int, message: dict[str, Any]) -> None:
        self.out.append(message)
        self.origins.append(number)


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
