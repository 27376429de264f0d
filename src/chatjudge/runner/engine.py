"""The run engine: the one place where data, protocols, models and the store meet.

It has three parts, each in its own module: planning (`plan`: an item into the calls
it needs, those the store holds answered at once), executing (`execute`: a call
through its judge's caller, with retries and the parse-retry loop) and folding
(`fold`: finished items into `results.jsonl`, the report and the summary). The calls
themselves take the one call path of `chatjudge.calls`: the store's ledger, the judges'
callers and the worker pool.

Items stream from the source and are planned only when a worker is free for their
calls, so memory holds the items in flight, not the dataset. Every reply is committed
to the store as it arrives and every finished item is appended to `results.jsonl`, so
a crash, a kill or Ctrl-C loses no finished judgment and re-running sends only what
is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chatjudge.__about__ import __version__
from chatjudge.calls import Caller, CallPolicy, Ledger, Pool, RunProgress
from chatjudge.calls.budget import Meter, budget_for, meter_for, reached_error
from chatjudge.calls.estimate import CostEstimate, RoleEstimate, finish, role_estimate
from chatjudge.calls.prices import command_cost, prices_of, role_cost
from chatjudge.data import Item, Source, Validation, iter_items
from chatjudge.data.shard import fingerprint, of, share
from chatjudge.errors import BudgetReached, FatalModelError, ModelError
from chatjudge.formats.io import write_json
from chatjudge.formats.run_info import RunInfo
from chatjudge.models import Model
from chatjudge.options import RunConfig
from chatjudge.protocols.spec import Protocol
from chatjudge.rundir import RESULTS, RUN_INFO, STORE, SUMMARY
from chatjudge.runner.execute import execute
from chatjudge.runner.fold import Folder, OnItem
from chatjudge.runner.plan import Call, JudgeLane, Planner
from chatjudge.store import Store
from chatjudge.store.reader import StoreReader
from chatjudge.summarize.run import SummaryBuilder


@dataclass
class RunOutcome:
    out_dir: Path
    summary: dict[str, Any]


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
        flip = config.run.flip and protocol.kind == "pairwise"
        self.orders = (False, True) if flip else (False,)

    async def run(self, on_item: OnItem | None = None) -> RunOutcome:
        """Judge every item; `on_item` sees each results record as it is written."""
        config = self.config
        prices = prices_of(self.models, config.pricing)  # once, before anything is sent
        budget = budget_for(config.pricing.max_cost_usd, prices)
        lanes = self._lanes(lambda m: meter_for(budget, m, prices[m.name]))
        names = [lane.name for lane in lanes]
        summary = SummaryBuilder(
            self.protocol, names, flip=config.run.flip, samples=config.run.samples
        )
        progress = RunProgress(self.n_rows, enabled=config.progress)
        store: Store | None = None
        try:
            store = Store(self.out_dir / STORE)  # first: a store that cannot be used stops here
            write_json(self.out_dir / RUN_INFO, self.run_info())
            with (self.out_dir / RESULTS).open("wb") as out, progress:
                # A new store holds nothing: no lookups.
                ledger = Ledger(store, lookup=not (config.run.no_cache or store.empty))
                planner = Planner(self.protocol, lanes, self.orders, ledger)
                folder = Folder(self.protocol, names, summary, progress, out, on_item)
                run = _Run(self.protocol, config.retries.parse_retries, ledger, folder)
                pool: Pool[Call] = Pool(config.run.concurrency)
                stopped = await pool.run(self._calls(planner, folder, pool), run.one)
            if isinstance(stopped, ModelError):
                raise FatalModelError(
                    f"run stopped: {stopped}", finished=folder.finished
                ) from stopped
        finally:
            if store is not None:
                store.close()
            for model in self.models:
                await model.aclose()
        judging = command_cost(
            {"judge": role_cost(prices, ledger.by_model)},
            budget.record(folder.finished, self.n_rows) if budget else None,
        )
        built = summary.build(
            ledger.usage.as_dict(),
            judging,
            len(self.validation.skipped_rows),
            self.validation.skipped(),
        )
        written = write_json(self.out_dir / SUMMARY, built, only_set=True)
        if isinstance(stopped, BudgetReached):
            raise reached_error(stopped, folder.finished, self.n_rows, "item(s)", written)
        return RunOutcome(self.out_dir, written)

    def estimate(self) -> CostEstimate:
        """`--dry-run`: the calls this run would send (after what the store holds) and what
        they could cost; nothing is sent and nothing is written."""
        config = self.config
        prices = prices_of(self.models, config.pricing)
        reader = StoreReader(self.out_dir / STORE)
        try:
            ledger = Ledger(reader, lookup=not (config.run.no_cache or reader.empty))
            lanes = self._lanes(lambda m: None)
            planner = Planner(self.protocol, lanes, self.orders, ledger)
            roles: dict[str, RoleEstimate] = {
                lane.name: role_estimate(
                    "judge", lane.model, prices[lane.name], reader.mean_output_tokens(lane.name)
                )
                for lane in lanes
            }
            for item in self._items():
                state, missing = planner.plan(item)
                for outcome in state.calls:
                    roles[outcome.judge].answered_by_store += outcome.cached
                for call in missing:
                    account = roles[call.lane.name]
                    tokens = account.count(call.request.messages)
                    cap = call.request.settings.max_tokens
                    account.add((1, 1), (tokens, tokens), (cap, cap))
        finally:
            reader.close()
        return finish("run", self.n_rows, list(roles.values()), prices)

    def _lanes(self, meter: Callable[[Model], Meter | None]) -> list[JudgeLane]:
        """One lane per judge, each calling through its own caller (and `meter`)."""
        config = self.config
        return [
            JudgeLane(
                Caller(m, CallPolicy.of(config), config.run.concurrency, meter(m)),
                self.protocol,
                config.generation,
                config.run.samples,
            )
            for m in self.models
        ]

    def _items(self) -> Iterator[Item]:
        """The items to judge (with `--shard`, this shard's, keeping their indexes)."""
        items = iter_items(
            self.source,
            self.protocol.fields,
            limit=self.config.run.limit,
            include_system=self.config.run.include_system,
            skip=self.validation.skipped_rows,
        )
        return share(items, of(self.config.run.shard))

    def _calls(self, planner: Planner, folder: Folder, pool: Pool[Call]) -> Iterator[Call]:
        """The calls to send, item by item. An item the store answers whole is finished
        here at once; every worker pulls from this one generator."""
        for item in self._items():
            if pool.stopped is not None:
                return
            state, missing = planner.plan(item)
            if not missing:
                folder.finish(state)
            yield from missing

    def run_info(self) -> RunInfo:
        """What this run is (`run.json`): protocol, judges, options, data; never a key."""
        return RunInfo(
            protocol=self.protocol.name,
            judges=[{"name": m.name, **m.identity()} for m in self.models],
            config=self.config.options("run"),
            data=self.source.name,
            n_rows=self.n_rows,
            chatjudge_version=__version__,
            data_sha256=self._data_sha256(),
        )

    def _data_sha256(self) -> str:
        """The data's fingerprint, read once (the run's set-up and its start both ask)."""
        if self._fingerprint is None:
            self._fingerprint = fingerprint(self.source)
        return self._fingerprint


class _Run:
    """What one run of the engine holds while it goes: the store and the finished items."""

    def __init__(
        self, protocol: Protocol, parse_retries: int, ledger: Ledger, folder: Folder
    ) -> None:
        self.protocol = protocol
        self.parse_retries = parse_retries
        self.ledger = ledger
        self.folder = folder

    async def one(self, call: Call) -> None:
        """Send a call (a fatal `ModelError` goes to the pool: it stops the run), commit its
        reply, and finish its item when it was the item's last call."""
        done = await execute(call, self.protocol, self.parse_retries)
        outcome = call.outcome
        if done.reply is not None:
            cap = call.request.settings.max_tokens
            self.ledger.commit(call.key, call.lane.name, done.reply, done.latency or 0.0, cap)
            outcome.settle(done.reply, done.latency, done.verdict, done.error)
        else:
            outcome.error = done.error
        call.state.pending -= 1
        if call.state.pending == 0:
            self.folder.finish(call.state)
