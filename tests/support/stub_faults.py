"""How the stand-in OpenAI server fails, as providers and proxies do: error statuses in
OpenAI's error shape, a 429 with its retry headers, a connection reset, a hang, a garbled or
truncated body, a context-window error; which attempt fails is a pure function of (seed,
prompt, attempt), so retries are reproducible."""

from __future__ import annotations

import contextlib
import socket
import struct
from typing import TYPE_CHECKING, Literal, get_args

from aiohttp import web

from tests.support.stub_replies import mix

if TYPE_CHECKING:
    from tests.support.stub_control import StubConfig

FaultKind = Literal[
    "429",
    "500",
    "503",
    "hang",
    "reset",
    "malformed",
    "truncated",
    "400",
    "401",
    "403",
    "garbled",
    "context",
]
FAULT_KINDS: tuple[str, ...] = get_args(FaultKind)
# What the error-status faults say (in OpenAI's error shape); a 429 says when to retry.
FAULT_MESSAGES = {
    "500": "The server had an error while processing your request. Sorry about that!",
    "503": "The engine is currently overloaded, please try again later.",
    "400": "Invalid value for 'max_tokens': stub says this request is bad.",
    "401": "Incorrect API key provided: sk-***stub.",
    "403": "Project proj_stub does not have access to model stub.",
}

CONTEXT_MESSAGE = (
    "This model's maximum context length is 4096 tokens. However, your messages resulted in "
    "5120 tokens. Please reduce the length of the messages."
)


def pick_fault(config: StubConfig, prompt: str, key: int, attempt: int) -> str | None:
    """The fault of this attempt at `prompt`: a permanent one by marker, else drawn from
    `fault_kinds` at `fault_rate`, a pure function of (seed, prompt, attempt)."""
    for marker, kind in config.permanent.items():
        if marker in prompt:
            return kind
    if config.fault_rate <= 0 or not config.fault_kinds:
        return None
    if config.faulty_attempts is not None and attempt >= config.faulty_attempts:
        return None
    if mix(config.seed, key, attempt) >= config.fault_rate * 2**64:
        return None
    return config.fault_kinds[mix(config.seed, key, attempt, 1) % len(config.fault_kinds)]


def error_response(
    status: int,
    message: str,
    kind: str,
    *,
    code: str | None = None,
    param: str | None = None,
    headers: dict[str, str] | None = None,
) -> web.Response:
    """An error in OpenAI's shape: {"error": {"message", "type", "param", "code"}}."""
    body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
    return web.json_response(body, status=status, headers=headers)


def abort_with_reset(request: web.Request) -> None:
    """Close the connection with a TCP RST, as a crashed proxy or server would."""
    transport = request.transport
    if transport is None:
        return
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()
