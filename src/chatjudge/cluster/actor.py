"""The Ray actor that holds one model on a worker and runs chatjudge's own call path.

The actor does one thing: `generate`. Retries, rate limits, the store and the verdicts
stay with the driver, so a reply is committed once, where the ledger is. A provider's
`ModelError` comes back as a value, not raised, so its type and retry policy cross
the wire intact (Ray would wrap a raised one in its own error).
"""

from __future__ import annotations

import os
import socket

from chatjudge.cluster.spec import WorkerSpec
from chatjudge.errors import ChatJudgeError, ModelError
from chatjudge.secrets import mask
from chatjudge.types import ModelRequest, Reply


class ModelActor:
    def __init__(self, spec: WorkerSpec) -> None:
        # A model that cannot be built here (no key in this worker's environment, no
        # model file) is told by `ready`, before any call is sent.
        self.problem: ChatJudgeError | None = None
        try:
            self.model = spec.build()
        except ChatJudgeError as exc:
            self.problem = exc

    def ready(self) -> ChatJudgeError | str:
        """Where this worker runs, or why its model could not be built."""
        return self.problem or f"{socket.gethostname()}:{os.getpid()}"

    def cap(self) -> int | None:
        """The calls this worker's model takes at once (a local model's processes)."""
        return self.model.max_concurrency

    async def generate(self, request: ModelRequest) -> Reply | ModelError:
        try:
            reply = await self.model.generate(request)
        except ModelError as exc:  # its message was masked with this worker's keys
            return exc
        reply.text = mask(reply.text)  # this worker's keys, which the driver may not know
        return reply

    async def aclose(self) -> None:
        await self.model.aclose()
