"""The run engine: the one place where data, protocols, judges and the store meet.

Items stream from the source; each item's calls (judges x samples x orders) are
looked up in the store and only the missing ones are handed, through one shared
generator, to `concurrency` workers. Every reply is committed to the store as it
arrives and every finished item is appended to `results.jsonl`, so a crash, a kill
or Ctrl-C loses no finished judgment and re-running sends only what is missing.
Memory holds the items in flight, not the dataset.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chatjudge import jsoncodec
from chatjudge.data import Item, Source, Validation, iter_items
from chatjudge.errors import FatalJudgeError, JudgeError, MalformedReplyError, VerdictError
from chatjudge.judges.base import Judge
from chatjudge.protocols.spec import Protocol
from chatjudge.runner.aggregate import CallOutcome, reduce_calls
from chatjudge.runner.config import RunConfig
from chatjudge.runner.keys import KeyMaker
from chatjudge.runner.policy import CallPolicy
from chatjudge.runner.progress import RunProgress
from chatjudge.runner.summary import SummaryBuilder
from chatjudge.store import Store
from chatjudge.types import JudgeRequest, Reply
from chatjudge.verdicts import Verdict, parse_verdict

RESULTS, SUMMARY, STORE, RUN_INFO = "results.jsonl", "summary.json", "calls.sqlite", "run.json"


@dataclass(slots=True)
class _ItemState:
    item: Item
    calls: list[CallOutcome]
    pending: int = 0


@dataclass(slots=True)
class _Call:
    state: _ItemState
    slot: int
    judge: int
    request: JudgeRequest
    key: str


@dataclass
class RunOutcome:
    out_dir: Path
    summary: dict[str, Any]


class Engine:
    def __init__(
        self,
        source: Source,
        protocol: Protocol,
        judges: list[Judge],
        config: RunConfig,
        out_dir: Path,
        *,
        validation: Validation,
    ) -> None:
        """`validation`: what `chatjudge.data.validate` found in this source."""
        self.source = source
        self.protocol = protocol
        self.judges = judges
        self.config = config
        self.out_dir = out_dir
        self.validation = validation
        self.n_rows = validation.n_rows
        self.orders = (False, True) if config.flip and protocol.kind == "pairwise" else (False,)
        self.policies = [
            CallPolicy(
                config.retry(),
                requests_per_minute=config.requests_per_minute,
                tokens_per_minute=config.tokens_per_minute,
            )
            for _ in judges
        ]
        # Only a judge that caps its own concurrency (in-process models) needs a semaphore;
        # otherwise the number of workers is the bound.
        self.limits = [
            asyncio.Semaphore(j.max_concurrency)
            if j.max_concurrency and j.max_concurrency < config.concurrency
            else None
            for j in judges
        ]
        schema = protocol.verdict_schema
        self.requests = [
            [
                JudgeRequest(
                    "",
                    schema,
                    _schema_name(protocol),
                    protocol.output_instruction,
                    config.settings(k),
                )
                for k in range(config.samples)
            ]
            for _ in judges
        ]
        self.keys = [
            [
                KeyMaker(j.identity(), config.settings(k).as_key(), schema)
                for k in range(config.samples)
            ]
            for j in judges
        ]
        self.summary = SummaryBuilder(
            protocol, [j.name for j in judges], flip=config.flip, samples=config.samples
        )
        self.usage = {"calls": 0, "cached_calls": 0, "input_tokens": 0, "output_tokens": 0}
        self._fatal: JudgeError | None = None

    async def run(self, on_item: Callable[[dict[str, Any]], None] | None = None) -> RunOutcome:
        """Judge every item; `on_item` sees each results record as it is written."""
        self._on_item = on_item
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self._write_run_info()
        store = Store(self.out_dir / STORE)
        progress = RunProgress(self.n_rows, enabled=self.config.progress)
        try:
            with (self.out_dir / RESULTS).open("wb") as out, progress:
                self._out, self._store, self._progress = out, store, progress
                calls = self._calls()
                workers = [
                    asyncio.create_task(self._worker(calls)) for _ in range(self.config.concurrency)
                ]
                try:
                    await asyncio.gather(*workers)
                finally:
                    for w in workers:
                        w.cancel()
                    await asyncio.gather(*workers, return_exceptions=True)
            if self._fatal is not None:
                raise FatalJudgeError(
                    f"run stopped: {self._fatal}", finished=self._progress.done
                ) from self._fatal
        finally:
            store.close()
            for judge in self.judges:
                await judge.aclose()
        summary = self.summary.build(self.usage, self._cost())
        if self.validation.skipped_rows:
            summary["n_skipped"] = len(self.validation.skipped_rows)
            summary["skipped"] = self.validation.skipped()
        (self.out_dir / SUMMARY).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
        return RunOutcome(self.out_dir, summary)

    def _calls(self) -> Iterator[_Call]:
        """The calls to send, item by item, answering what the store already holds.

        Every worker pulls from this one generator, so an item is read only when a
        worker is free for its calls: memory holds the items in flight, nothing more.
        """
        protocol, store = self.protocol, self._store
        lookup = not (self.config.no_cache or store.empty)  # a new store holds nothing yet
        for item in iter_items(
            self.source,
            protocol,
            limit=self.config.limit,
            include_system=self.config.include_system,
            skip=self.validation.skipped_rows,
        ):
            if self._fatal is not None:
                return
            state = _ItemState(item, [])
            missing: list[_Call] = []
            for j, judge in enumerate(self.judges):
                for k in range(self.config.samples):
                    for flipped in self.orders:
                        prompt = protocol.render(item.text, flipped=flipped)
                        key = self.keys[j][k].key(prompt, k)
                        outcome = CallOutcome(judge.name, k, flipped)
                        state.calls.append(outcome)
                        stored = store.get(key) if lookup else None
                        if stored is not None:
                            outcome.cached = True
                            self.usage["cached_calls"] += 1
                            self._settle(
                                outcome,
                                Reply(stored.raw, stored.input_tokens, stored.output_tokens),
                                stored.latency,
                            )
                        else:
                            request = self.requests[j][k]
                            missing.append(
                                _Call(
                                    state,
                                    len(state.calls) - 1,
                                    j,
                                    _with_prompt(request, prompt),
                                    key,
                                )
                            )
            state.pending = len(missing)
            if not missing:
                self._finish(state)
            yield from missing

    async def _worker(self, calls: Iterator[_Call]) -> None:
        for call in calls:
            if self._fatal is not None:
                return
            await self._judge(call)

    async def _judge(self, call: _Call) -> None:
        judge = self.judges[call.judge]
        outcome = call.state.calls[call.slot]
        malformed = 0
        started = 0.0

        async def attempt() -> tuple[Reply, Verdict | None, str | None]:
            nonlocal malformed, started
            started = time.monotonic()  # latency is the last attempt's, not queueing or back-off
            reply = await judge.generate(call.request)
            try:
                return (
                    reply,
                    parse_verdict(reply.text, self.protocol, flipped=outcome.flipped),
                    None,
                )
            except VerdictError as exc:
                malformed += 1
                if malformed <= self.config.parse_retries:
                    raise MalformedReplyError(str(exc), reply) from exc
                return reply, None, f"VerdictError: {exc}"

        async with self.limits[call.judge] or contextlib.nullcontext():
            try:
                reply, verdict, error = await self.policies[call.judge].call(
                    attempt, tokens=len(call.request.prompt) // 4
                )
            except MalformedReplyError as exc:  # the retry cap ended on a bad reply: keep it
                reply, verdict, error = exc.reply, None, f"VerdictError: {exc}"  # type: ignore[assignment]
            except JudgeError as exc:
                if exc.fatal:
                    self._fatal = exc
                    return
                reply, verdict, error = None, None, f"{type(exc).__name__}: {exc}"
        if reply is not None:
            latency = time.monotonic() - started
            self._store.put(call.key, judge.name, reply, latency)
            self.usage["calls"] += 1
            self._record(outcome, reply, latency, verdict, error)
        else:
            outcome.error = error
        call.state.pending -= 1
        if call.state.pending == 0:
            self._finish(call.state)

    def _settle(self, outcome: CallOutcome, reply: Reply, latency: float | None) -> None:
        """A stored reply: parsed again, so a parser fix re-scores it without a new call."""
        try:
            verdict = parse_verdict(reply.text, self.protocol, flipped=outcome.flipped)
            error = None
        except VerdictError as exc:
            verdict, error = None, f"VerdictError: {exc}"
        self._record(outcome, reply, latency, verdict, error)

    def _record(
        self,
        outcome: CallOutcome,
        reply: Reply,
        latency: float | None,
        verdict: Verdict | None,
        error: str | None,
    ) -> None:
        outcome.raw = reply.text
        outcome.input_tokens = reply.input_tokens
        outcome.output_tokens = reply.output_tokens
        outcome.latency = latency
        outcome.verdict = verdict
        outcome.error = error
        if not outcome.cached:
            self.usage["input_tokens"] += reply.input_tokens or 0
            self.usage["output_tokens"] += reply.output_tokens or 0

    def _finish(self, state: _ItemState) -> None:
        item, calls = state.item, state.calls
        failed = [c for c in calls if not c.ok]
        record: dict[str, Any] = {"format": 1, "id": item.id, "index": item.index}
        judge_scores = None
        if failed:
            record.update(
                status="failed", scores={}, error=failed[0].error, consistent=None, agreement=None
            )
        else:
            verdict = reduce_calls(self.protocol, calls)
            record.update(
                status="ok",
                scores=verdict.scores,
                error=None,
                consistent=verdict.consistent,
                agreement=verdict.agreement,
            )
            if len(self.judges) > 1:
                judge_scores = {
                    j.name: reduce_calls(
                        self.protocol, [c for c in calls if c.judge == j.name]
                    ).scores
                    for j in self.judges
                }
                record["judge_scores"] = judge_scores
        first_ok = next((c for c in calls if c.ok), None)
        record["rationale"] = first_ok.verdict.rationale if first_ok and first_ok.verdict else {}
        record["raw"] = calls[0].raw
        record["usage"] = {
            "input_tokens": sum(c.input_tokens or 0 for c in calls),
            "output_tokens": sum(c.output_tokens or 0 for c in calls),
        }
        record["calls"] = [c.to_dict() for c in calls]
        record["fields"] = item.fields
        # Buffered: the store is the durable record, results.jsonl is rebuilt by a re-run.
        self._out.write(jsoncodec.dumps(record) + b"\n")
        if self._on_item is not None:
            self._on_item(record)
        self.summary.add(not failed, record["scores"], record["consistent"], judge_scores)
        usage = record["usage"]
        self._progress.advance(
            failed=bool(failed), tokens=usage["input_tokens"] + usage["output_tokens"]
        )

    def _cost(self) -> float | None:
        price_in, price_out = self.config.price_in, self.config.price_out
        if price_in is None and price_out is None:
            return None
        return round(
            self.usage["input_tokens"] * (price_in or 0) / 1e6
            + self.usage["output_tokens"] * (price_out or 0) / 1e6,
            6,
        )

    def _write_run_info(self) -> None:
        info = {
            "protocol": self.protocol.name,
            "judges": [{"name": j.name, **j.identity()} for j in self.judges],
            "config": self.config.model_dump(),
            "data": self.source.name,
            "n_rows": self.n_rows,
        }
        (self.out_dir / RUN_INFO).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")


def _schema_name(protocol: Protocol) -> str:
    return protocol.name.replace("-", "_")[:64] + "_verdict"


def _with_prompt(template: JudgeRequest, prompt: str) -> JudgeRequest:
    return JudgeRequest(
        prompt, template.schema, template.schema_name, template.instruction, template.settings
    )
