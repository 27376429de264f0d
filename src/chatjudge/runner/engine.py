"""The run engine: the one place where data, protocols, models and the store meet.

It has three parts, each in its own module: planning (`plan`: an item into the calls
it needs, those the store holds answered at once), executing (`execute`: a call
through its judge's caller, with retries and the parse-retry loop) and folding
(`fold`: finished items into `results.jsonl`, the report and the summary). The calls
themselves go through the command's session (`chatjudge.calls.session`: prices, budget,
store, the judges' callers and ledgers, the worker pool, closing and the cost record);
`--dry-run` is the same loop through a session that sends and writes nothing.

Items stream from the source and are planned only when a worker is free for their
calls, so memory holds the items in flight, not the dataset. Every reply is committed
to the store as it arrives and every finished item is appended to `results.jsonl`, so
a crash, a kill or Ctrl-C loses no finished judgment and re-running sends only what
is missing.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from chatjudge.__about__ import __version__
from chatjudge.calls.run_sync import run_sync
from chatjudge.calls.session import Budget, Seat, Session, Stopped
from chatjudge.calls.unit import Unit, done_within
from chatjudge.calls.usage import Usage
from chatjudge.data import Item, Source, Validation, iter_items
from chatjudge.data.shard_rows import fingerprint, of, share
from chatjudge.errors import FatalModelError, ModelError
from chatjudge.formats.cost import Cost
from chatjudge.formats.io import write_json
from chatjudge.formats.provenance import Evaluator, JudgeCheck, Served
from chatjudge.formats.run_info import RunInfo
from chatjudge.models import Model
from chatjudge.options import RunConfig
from chatjudge.protocols.digest import protocol_sha256
from chatjudge.protocols.kinds import Deterministic, kind_of
from chatjudge.protocols.spec import Protocol
from chatjudge.rundir import RESULTS, RUN_INFO, STORE, SUMMARY
from chatjudge.runner.execute import Executed, execute
from chatjudge.runner.fold import Folder, OnItem
from chatjudge.runner.plan import Call, JudgeLane, Planner, Scorer, parse
from chatjudge.summarize.run_summary import SummaryBuilder
from chatjudge.verdicts.evaluator import evaluator
from chatjudge.writing import open_write

if TYPE_CHECKING:
    from chatjudge.calls.session import CostEstimate  # the dry run's, which a run never loads


@dataclass
class RunOutcome:
    out_dir: Path
    summary: dict[str, Any]
    cost: Cost  # the summary's, as its record


class Engine:
    def __init__(
        self,
        source: Source,
        protocol: Protocol,
        models: list[Model],
        config: RunConfig,
        out_dir: Path,
        *,
        validation: Validation,
    ) -> None:
        """`validation`: what `chatjudge.data.validate` found in this source."""
        self.source = source
        self.protocol = protocol
        self.models = models
        self.config = config
        self.out_dir = out_dir
        self.validation = validation
        self.n_rows = validation.n_rows
        self._fingerprint: str | None = None
        # Another command's store, read where the run's own misses (align: the run it aligns).
        self.reference_store: Path | None = None
        # `--judge-check`: the check, run before the data (`chatjudge.runner.judge_check`).
        self.judge_check: Callable[[Budget | None], Awaitable[JudgeCheck]] | None = None
        self.kind = kind_of(protocol)
        self.orders = (False, True) if self.kind.swaps_sides(config.run.flip) else (False,)

    async def run(
        self, on_item: OnItem | None = None, *, budget: Budget | None = None
    ) -> RunOutcome:
        """Judge every item (a judge-free protocol's: score it); `on_item` sees each
        results record as it is written. `budget`: one shared with other runs (the
        sequential gate's batches) instead of `--max-cost-usd`'s own."""
        check = await self.judge_check(budget) if self.judge_check is not None else None
        session = self._session(dry_run=False, budget=budget)
        # A scored run's records are all written again by a re-run: a large buffer, no
        # line is worth a write of its own (a judged run's replies are in the store).
        buffering = -1 if self.kind.judged else 1 << 20
        async with session:
            write_json(self.out_dir / RUN_INFO, self.run_info())
            with open_write(self.out_dir / RESULTS, buffering=buffering) as out, session.progress:
                folder, stopped = await self._judge(session, out, on_item)
        if isinstance(stopped, ModelError):
            raise FatalModelError(f"run stopped: {stopped}", finished=folder.finished) from stopped
        cost = session.cost(folder.finished, self.n_rows)
        served = session.served() if self.kind.judged else None  # no provider scored
        written = self._write_summary(folder.summary, session.usage(), cost, served=served,
                                      check=check)  # fmt: skip
        session.check_budget(stopped, folder.finished, self.n_rows, "item(s)", written)
        return RunOutcome(self.out_dir, written, cost)

    def estimate(self) -> CostEstimate:
        """`--dry-run`: the calls this run would send (after what the store holds) and what
        they could cost; nothing is sent and nothing is written."""
        return run_sync(self._estimate())

    def _write_summary(
        self,
        summary: SummaryBuilder,
        usage: Usage,
        cost: Cost,
        *,
        served: dict[str, Served] | None = None,
        check: JudgeCheck | None = None,
    ) -> dict[str, Any]:
        """`summary.json`, built from the run's summary, usage and cost with what validation
        found, who judged (the evaluator, what providers served, the judge check); returns
        it as written."""
        valid = self.validation
        built = summary.build(
            usage.as_dict(),
            cost,
            len(valid.skipped_rows),
            valid.skipped(),
            derived_tool_definitions=valid.derived_tool_definitions,
            unparsed_tool_arguments=valid.unparsed_tool_arguments,
        )
        built.evaluator = self.evaluator()
        if served is not None:  # a judged run's; a judge-free one has no provider
            built.served = served
        if check is not None:
            built.judge_check = check
        return write_json(self.out_dir / SUMMARY, built, only_set=True)

    async def _estimate(self) -> CostEstimate:
        session = self._session(dry_run=True)
        async with session:
            if self.kind.judged:  # a judge-free protocol sends nothing
                with open(os.devnull, "wb") as nowhere:
                    await self._judge(session, nowhere, None)
        return session.estimate("run", self.n_rows)

    def _session(self, *, dry_run: bool, budget: Budget | None = None) -> Session:
        seats = [Seat("judge", m) for m in self.models]
        return Session(seats, self.config, self.out_dir / STORE, total=self.n_rows,
                       label=self.kind.verb, dry_run=dry_run, budget=budget,
                       reference=self.reference_store)  # fmt: skip

    async def _judge(
        self, session: Session, out: IO[bytes], on_item: OnItem | None
    ) -> tuple[Folder, Stopped]:
        """Plan every item's calls, send those the store does not answer through the
        session, and fold finished items into `out`: the run's one loop, dry or not. A
        judge-free protocol's one lane scores each item as it is planned."""
        config = self.config
        planner: Planner | Scorer
        if isinstance(self.kind, Deterministic):
            planner = Scorer(self.kind, config.run, self.validation.read_as_written)
            names = [self.kind.judge_name]
        else:
            lanes = [
                JudgeLane(
                    session.caller(seat),
                    session.ledger(seat),
                    self.protocol,
                    config.generation,
                    config.run.samples,
                )
                for seat in session.seats
            ]
            planner = Planner(self.protocol, lanes, self.orders)
            names = [lane.name for lane in lanes]
        summary = SummaryBuilder(
            self.protocol, names, flip=config.run.flip, samples=config.run.samples
        )
        folder = Folder(self.protocol, names, summary, session.progress, out, on_item)
        run = _Run(self.protocol, config.retries.parse_retries, folder)
        stopped = await session.run(self._calls(planner, folder, session), run.one)
        return folder, stopped

    def _items(self) -> Iterator[Item]:
        """The items to judge (with `--shard`, this shard's, keeping their indexes); a
        judge-free protocol's rows as written, which its scorer reads."""
        run = self.config.run
        skip = self.validation.skipped_rows
        if self.kind.judged:
            items = iter_items(self.source, self.protocol.fields, limit=run.limit,
                               view=run.judge_view(), skip=skip,
                               as_written=self.validation.read_as_written)  # fmt: skip
        else:  # validation checked the tools: scoring reads only the trajectory
            items = iter_items(self.source, (), limit=run.limit, skip=skip, read_tools=False)
        return share(items, of(run.shard))

    def _calls(self, planner: Planner | Scorer, folder: Folder, session: Session) -> Iterator[Call]:
        """The calls to send, item by item. An item the store answers whole is finished
        here at once; every worker pulls from this one generator."""
        for item in self._items():
            if session.stopped is not None:
                return
            state, missing = planner.plan(item)
            if not missing:
                folder.finish(state)
            yield from missing

    def run_info(self) -> RunInfo:
        """What this run is (`run.json`): protocol, judges, options, data; never a key."""
        return RunInfo(
            protocol=self.protocol.name,
            protocol_sha256=protocol_sha256(self.protocol),
            judges=[{"name": m.name, **m.identity()} for m in self.models],
            config=self.config.options("run"),
            data=self.source.name,
            n_rows=self.n_rows,
            chatjudge_version=__version__,
            data_sha256=self._data_sha256(),
            evaluator=self.evaluator(),
        )

    def evaluator(self) -> Evaluator:
        """Who judges this run: the evaluator fingerprint and its parts."""
        return evaluator(self.protocol, [m.identity() for m in self.models], self.config)

    def _data_sha256(self) -> str:
        """The data's fingerprint, read once (the run's set-up and its start both ask)."""
        if self._fingerprint is None:
            self._fingerprint = fingerprint(self.source)
        return self._fingerprint


class _Run:
    """What one run of the engine holds while it goes: the finished items."""

    def __init__(self, protocol: Protocol, parse_retries: int, folder: Folder) -> None:
        self.protocol = protocol
        self.parse_retries = parse_retries
        self.folder = folder

    async def one(self, call: Call) -> None:
        """Send a call (a fatal `ModelError` goes to the pool: it stops the run), or take
        the reply of the call under its key that went first, and finish its item when it
        was the item's last call."""
        ledger = call.lane.ledger
        unit = Unit(call.state.item.index)  # its item: the budget serves one begun earlier first
        done, shared = await ledger.once(call.flight, lambda: done_within(unit, self._send(call)))
        outcome = call.outcome
        if done.reply is None:
            outcome.error = done.error
        elif shared:  # as the store answers: parsed again, in this call's order
            ledger.shared(call.flight.key)
            outcome.cached = True
            verdict, error = parse(done.reply, self.protocol, outcome.flipped)
            outcome.settle(done.reply, done.latency, verdict, error)
        else:
            outcome.settle(done.reply, done.latency, done.verdict, done.error)
        call.state.pending -= 1
        if call.state.pending == 0:
            self.folder.finish(call.state)

    async def _send(self, call: Call) -> Executed:
        """The call sent, its reply committed."""
        done = await execute(call, self.protocol, self.parse_retries)
        if done.reply is not None:
            cap = call.request.settings.max_tokens
            call.lane.role.commit(call.key, done.reply, done.latency or 0.0, cap)
        return done
