"""One session per command: the call path's plumbing, opened once, which `run`, `generate`
and `simulate` only plan calls through and fold replies from.

A session owns, in this order: the prices (looked up once, before anything is sent), the
budget (`--max-cost-usd`, or one shared across runs: the sequential gate's batches), the
store, one caller per model and one ledger per seat (a model in a role: `judge`,
`model_under_test`, `assistant`, `simulated_user`), the progress bar and the worker pool;
it closes the store and every model exactly once, however the command ends, and it makes
the cost record of the command's summary. A new rule for every model call (a cap, a
count) is written here, or in the caller or the budget beneath it, once for every command.

The dry run (`--dry-run`) is the same session, read-only: the store is opened without
being changed (`StoreReader`), every caller sends nothing (`estimate.DryCaller`: it counts
the call, or the unit of work it is for by that unit's projection, and raises `NotSent`, an
ordinary model error, so the command's own loop walks every row as a run would), and
nothing is written; `estimate` then prices what was counted.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from chatjudge.calls.budget import Budget, Starts, budget_for, meter_for, reached_error
from chatjudge.calls.caller import Caller
from chatjudge.calls.ledger import Flight, Ledger
from chatjudge.calls.policy import CallPolicy
from chatjudge.calls.pool import Pool
from chatjudge.calls.prices import command_cost, prices_of, role_cost
from chatjudge.calls.progress import RunProgress
from chatjudge.calls.usage import Usage
from chatjudge.chat.types import Message
from chatjudge.errors import BudgetReached, ModelError
from chatjudge.formats.cost import Cost
from chatjudge.formats.provenance import Served
from chatjudge.models import Model
from chatjudge.options import RunConfig
from chatjudge.store import Store
from chatjudge.store.reader import StoreReader

if TYPE_CHECKING:
    from chatjudge.calls.estimate import CostEstimate, NotSent, RoleEstimate

__all__ = ["Budget", "CostEstimate", "NotSent", "Seat", "Session", "Starts", "Stopped"]

Job = TypeVar("Job")
Stopped = ModelError | BudgetReached | None  # what stopped a session's pool


@dataclass(frozen=True, slots=True)
class Seat:
    """A model in a role of the command; a role may hold several models (a judge panel)
    and a model several roles (the assistant playing its own simulated user)."""

    role: str
    model: Model


class Session:
    """Enter with `async with`; see the module's docstring."""

    def __init__(
        self,
        seats: Sequence[Seat],
        config: RunConfig,
        store: Path,
        *,
        total: int,
        label: str = "judging",
        dry_run: bool = False,
        budget: Budget | None = None,
        reference: Path | None = None,
    ) -> None:
        """A session of `seats` on the store at `store`; `total`: the units (items, rows,
        conversations) the progress bar counts. Prices and budget are checked here: a bad
        price file or a budget that cannot be kept is refused before the store is opened.
        `dry_run`: read-only, nothing sent (a unit of work with a projection is counted by
        it, `unit.Unit`, others call by call). `budget`: one shared with
        other sessions (the gate's batches) instead of `--max-cost-usd`'s own. `reference`:
        another command's store, read where this one misses (`Ledger`)."""
        self.seats = list(seats)
        self.config = config
        self.dry_run = dry_run
        self._store_path = store
        models = {id(s.model): s.model for s in seats}
        self.models = list(models.values())
        self.prices = prices_of(self.models, config.pricing)  # once, before anything is sent
        limit = config.pricing.max_cost_usd
        self.budget = None if dry_run else budget_for(limit, self.prices, budget)
        self.progress = RunProgress(total, enabled=config.progress and not dry_run, label=label)
        self._store: Store | StoreReader | None = None
        self._reference_path = reference
        self._reference: StoreReader | None = None
        self._ledgers: dict[Seat, Ledger] = {}
        self._callers: dict[Seat, Caller] = {}
        self._accounts: dict[Seat, RoleEstimate] = {}
        self._pool: Pool[Any] = Pool(config.run.concurrency)
        self._closed = False
        self._used: list[tuple[str, str, int, int]] = []  # the store's `used_tokens`, at close
        self._served: list[tuple[str, str | None, str | None, int]] = []  # `served`, at close

    async def __aenter__(self) -> Session:
        try:
            self._open()
        except BaseException:
            await self.close()
            raise
        return self

    def _open(self) -> None:
        """The store first (one that cannot be used stops here), then a ledger per seat and
        a caller per model (one concurrency cap for a model in two roles); dry, a caller
        and an account per seat."""
        config = self.config
        if self.dry_run:
            store: Store | StoreReader = StoreReader(self._store_path)
        else:
            self._store_path.parent.mkdir(parents=True, exist_ok=True)
            store = Store(self._store_path)
        self._store = store
        if self._reference_path is not None and not config.run.no_cache:
            self._reference = StoreReader(self._reference_path)
        reference = self._reference
        # A new store holds nothing (a reference may).
        lookup = not config.run.no_cache and (not store.empty or reference is not None)
        policy = CallPolicy.of(config)
        by_model: dict[int, Caller] = {}
        # Calls with equal keys are sent once (`ledger.Flight`), unless every call is to be sent.
        flights: dict[str, Flight] | None = None if config.run.no_cache or self.dry_run else {}
        for seat in self.seats:
            model, price = seat.model, self.prices[seat.model.name]
            self._ledgers[seat] = Ledger(
                store, lookup=lookup, flights=flights, role=seat.role, reference=reference
            )
            if isinstance(store, StoreReader):
                from chatjudge.calls.estimate import DryCaller, role_estimate  # dry: `_DRY_RUN`

                mean = store.mean_output_tokens(model.name)
                account = role_estimate(seat.role, model, price, mean)
                self._accounts[seat] = account
                steps = config.tools.max_tool_steps
                self._callers[seat] = DryCaller(model, policy, account, steps)
            else:
                if id(model) not in by_model:
                    meter = meter_for(self.budget, model, price)
                    by_model[id(model)] = Caller(model, policy, config.run.concurrency, meter)
                self._callers[seat] = by_model[id(model)]

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the store and every model, once, whatever happened before."""
        if self._closed:
            return
        self._closed = True
        try:
            if isinstance(self._store, Store):  # for `cost`, which is asked once it is closed
                self._used = self._store.used_tokens()
                self._served = self._store.served("judge")
            if self._store is not None:
                self._store.close()
            if self._reference is not None:
                self._reference.close()
        finally:
            for model in self.models:
                await model.aclose()

    def caller(self, seat: Seat) -> Caller:
        return self._callers[seat]

    def ledger(self, seat: Seat) -> Ledger:
        """The seat's own ledger: its usage is the seat's."""
        return self._ledgers[seat]

    @property
    def stopped(self) -> Stopped:
        """What stopped the pool so far (a fatal fault, the budget), for job makers."""
        return self._pool.stopped

    async def run(self, jobs: Iterator[Job], work: Callable[[Job], Awaitable[object]]) -> Stopped:
        """`work` on every job in the session's worker pool (`calls.pool`)."""
        return await self._pool.run(jobs, work)

    def starts(self, calls: int) -> Starts | None:
        """With a budget some model is metered by: when a unit of up to `calls` calls may
        start (`budget.Starts`); None without."""
        metered = any(c.meter is not None for c in self._callers.values())
        return Starts(self.budget, calls) if self.budget is not None and metered else None

    def usage(self, *seats: Seat) -> Usage:
        """What `seats` (every seat by default) used, summed."""
        total = Usage()
        for seat in seats or self.seats:
            u = self._ledgers[seat].usage
            total.calls += u.calls
            total.cached_calls += u.cached_calls
            total.input_tokens += u.input_tokens
            total.output_tokens += u.output_tokens
            total.over_cap += u.over_cap
        return total

    def served(self) -> dict[str, Served]:
        """Per judge: the models and system fingerprints its provider reported serving the
        replies the command used with, sent or held by the store (kept at close)."""
        counts: dict[str, tuple[dict[str, int], dict[str, int], list[int]]] = {}
        for judge, model, fingerprint, n in self._served:
            models, fingerprints, unreported = counts.setdefault(judge, ({}, {}, [0]))
            if model is None:
                unreported[0] += n
            else:
                models[model] = models.get(model, 0) + n
            if fingerprint is not None:
                fingerprints[fingerprint] = fingerprints.get(fingerprint, 0) + n
        return {
            judge: Served(models=m, system_fingerprints=f, unreported=u[0])
            for judge, (m, f, u) in sorted(counts.items())
        }

    def cost(self, done: int, total: int) -> Cost:
        """The summary's cost record: per role, from its models' prices, what the replies
        the command used cost in all (those it sent for and those the store held, each
        distinct call once: the same across resumes as in one go) and what those it sent
        for cost; with a budget, how far the command got (`done` of `total` units)."""
        roles: dict[str, tuple[dict[str, Any], dict[str, Usage]]] = {}
        for seat in self.seats:
            prices, sent = roles.setdefault(seat.role, ({}, {}))
            prices[seat.model.name] = self.prices[seat.model.name]
            sent.update(self._ledgers[seat].by_model)
        used: dict[str, dict[str, Usage]] = {}
        held = self._used
        if not self._closed and isinstance(self._store, Store):
            held = self._store.used_tokens()
        for role, model, input_tokens, output_tokens in held:
            used.setdefault(role, {})[model] = Usage(
                input_tokens=input_tokens, output_tokens=output_tokens
            )
        budget = self.budget.record(done, total) if self.budget is not None else None
        records = {r: role_cost(p, used.get(r, {}), sent) for r, (p, sent) in roles.items()}
        return command_cost(records, budget)

    def check_budget(
        self, stopped: Stopped, done: int, total: int, what: str, summary: dict[str, Any]
    ) -> None:
        """Once everything is written: raise `BudgetReachedError` when the budget stopped
        the command (`done` of `total` `what` finished; `summary` as written)."""
        if isinstance(stopped, BudgetReached):
            raise reached_error(stopped, done, total, what, summary)

    def project_conversation(
        self,
        user: Seat,
        assistant: Seat,
        opening: list[Message],
        first: list[Message],
        turns: int,
        caps: tuple[int, int],
        steps: int = 1,
    ) -> None:
        """Dry run: count a conversation the store does not hold whole, from its start
        (`estimate.count_conversation`)."""
        from chatjudge.calls.estimate import count_conversation

        count_conversation(self._accounts[user], self._accounts[assistant], opening, first,
                           turns, caps, steps)  # fmt: skip

    def estimate(self, command: str, rows: int) -> CostEstimate:
        """Dry run: what was counted, per seat, priced."""
        from chatjudge.calls.estimate import finish

        for seat, account in self._accounts.items():
            account.answered_by_store = self._ledgers[seat].usage.cached_calls
        return finish(command, rows, list(self._accounts.values()), self.prices)


# The dry run's names that the commands take from here (`NotSent`, `CostEstimate`), and the
# dry run's code above, are imported as a dry run needs them: a run that sends its calls
# never loads `estimate` (issue 29, item 8).
_DRY_RUN = {"CostEstimate", "NotSent"}


def __getattr__(name: str) -> Any:
    if name not in _DRY_RUN:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from chatjudge.calls import estimate

    return getattr(estimate, name)
