"""A stand-in OpenTelemetry collector on loopback: OTLP/HTTP logs (protobuf), decoded with
opentelemetry-proto; it takes `accept` requests (all by default), then answers `refuse`.
It answers `/v1/logs` under any path, and keeps each request's path and query."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from aiohttp import web


class Collector:
    def __init__(self, *, accept: int | None = None, refuse: int = 403) -> None:
        self.accept = accept
        self.refuse = refuse
        self.requests: list[Any] = []  # the decoded ExportLogsServiceRequest of each taken one
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []  # each request's path and query, refused ones too
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def records(self) -> list[Any]:
        return [
            record
            for request in self.requests
            for resource in request.resource_logs
            for scope in resource.scope_logs
            for record in scope.log_records
        ]

    async def _logs(self, request: web.Request) -> web.Response:
        from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
            ExportLogsServiceRequest,
            ExportLogsServiceResponse,
        )

        assert request.content_type == "application/x-protobuf"
        self.paths.append(request.path_qs)
        if self.accept is not None and len(self.requests) >= self.accept:
            return web.Response(status=self.refuse, text="refused by the test collector")
        decoded = ExportLogsServiceRequest()
        decoded.ParseFromString(await request.read())
        self.requests.append(decoded)
        self.headers.append(dict(request.headers))
        return web.Response(
            body=ExportLogsServiceResponse().SerializeToString(),
            content_type="application/x-protobuf",
        )

    async def _start(self) -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/{prefix:.*}v1/logs", self._logs)  # under a path of its own too
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self.port = self._runner.addresses[0][1]

    def __enter__(self) -> Collector:
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(timeout=30)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._runner is not None
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(timeout=30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)
        self._loop.close()
