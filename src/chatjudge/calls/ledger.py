"""The store as the call path uses it: look a call up before sending it, commit its reply.

Judging and producing both go through a `Ledger`, so a call is answered from the store,
counted and committed the same way whoever makes it. A call found in the store counts
as a cached call; a reply sent for is committed to the store as it arrives and counted,
so a killed run resumes call by call. A store written before key version 2 is also
searched under the version-1 key of a judge call (`keys.LegacyKeyMaker`).

Calls of one run with equal keys are sent once (`Flight`): the first to go sends, the
others wait for it and take what it got, counted as cached calls, as if the store had
answered them. Its failure is theirs too: a waiter records the same error (a reply that
holds no verdict, a call given up after its retries) or raises the same fault, and sends
nothing; a later run sends the call again, as it does any call the store does not hold.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from chatjudge.calls.keys import LegacyKeyMaker
from chatjudge.calls.usage import Usage
from chatjudge.chat.types import Reply
from chatjudge.store import Store, StoredReply
from chatjudge.store.reader import StoreReader

T = TypeVar("T")


class Flight:
    """The calls of a run under one key while none of them has finished: the first to go
    (`Ledger.once`) sends, and its outcome, or its exception, is every other one's."""

    __slots__ = ("_waiting", "done", "error", "key", "started", "value")

    def __init__(self, key: str) -> None:
        self.key = key
        self.started = False
        self.done = False
        self.value: Any = None
        self.error: BaseException | None = None
        self._waiting: asyncio.Future[None] | None = None  # made when a second call waits

    async def wait(self) -> None:
        """Until the call that went first ends, or gives up the lead (cancelled)."""
        if self._waiting is None:
            self._waiting = asyncio.get_running_loop().create_future()
        await asyncio.shield(self._waiting)

    def end(self, value: Any, error: BaseException | None) -> None:
        self.done, self.value, self.error = True, value, error
        self._wake()

    def abandon(self) -> None:
        """The first call was cancelled: a waiting one takes the lead."""
        self.started = False
        self._wake()

    def _wake(self) -> None:
        if self._waiting is not None:
            self._waiting.set_result(None)
            self._waiting = None


class Ledger:
    """One store and the usage it counts (a run's, or one role's)."""

    __slots__ = ("by_model", "flights", "legacy", "lookup", "reference", "role", "store", "usage")

    def __init__(
        self,
        store: Store | StoreReader,
        *,
        lookup: bool,
        flights: dict[str, Flight] | None = None,
        role: str | None = None,
        reference: StoreReader | None = None,
    ) -> None:
        """`lookup`: answer calls from the store (not with `--no-cache`); a dry run's
        ledger reads a `StoreReader` and commits nothing. `flights`: the calls in flight,
        by key, shared by the ledgers of one command (a model may sit in two roles);
        None: calls with equal keys are each sent (see `flight`). `role`: the store counts
        the calls used under it, found or sent (`Store.use`), for what they cost in all.
        `reference`: another command's store, read where this one misses (align judging the
        run's own prompts: the run's store answers them, nothing is paid twice)."""
        self.store = store
        self.usage = Usage()
        self.by_model: dict[str, Usage] = {}  # the replies sent for, by model: its cost
        self.lookup = lookup
        self.legacy = lookup and store.legacy_keys
        self.flights = flights
        self.role = role
        self.reference = reference

    def find(
        self, key: str, legacy: LegacyKeyMaker | None = None, prompt: str = "", sample: int = 0
    ) -> StoredReply | None:
        """The stored reply under `key`, counted as a cached call; None when there is none.
        `legacy`: a judge call's version-1 key maker, tried with its `prompt` and `sample`
        when the store is that old."""
        store = self.store
        if not self.lookup:
            # a store empty at the start holds the calls any role committed since
            if self.flights is None or store.empty:
                return None
            self.lookup = True
        found = store.get(key)
        if found is None and legacy is not None and self.legacy:
            key = legacy.key(prompt, sample)
            found = store.get(key)
        if found is None and self.reference is not None:
            found = self.reference.get(key)
            if found is not None:
                self.usage.cached_calls += 1
            return found
        if found is not None:
            self.usage.cached_calls += 1
            if self.role is not None and isinstance(store, Store):
                store.use(self.role, key)
        return found

    def flight(self, key: str) -> Flight:
        """The flight of a call the store does not hold: one that another call under `key`
        has (it has not finished), or a new one. Taken when the call is planned, so a call
        planned while the first is in flight waits for it even if it starts after it ends.
        Without `flights` every call is its own (`--no-cache` sends every call; a dry run
        counts every call it would send that the store does not hold)."""
        if self.flights is None:
            return Flight(key)
        flight = self.flights.get(key)
        if flight is None:
            flight = self.flights[key] = Flight(key)
        return flight

    async def once(self, flight: Flight, send: Callable[[], Awaitable[T]]) -> tuple[T, bool]:
        """`send()`'s value (which commits its reply), sent only by the first of `flight`'s
        calls to get here; the others wait and take it, or raise its exception. Also whether
        this call took it (it then counts as a cached call where it holds a reply: the
        caller counts, `shared`)."""
        while flight.started and not flight.done:
            await flight.wait()
        if flight.done:
            if flight.error is not None:
                raise flight.error
            return flight.value, True
        flight.started = True
        try:
            value = await send()
        except asyncio.CancelledError:
            flight.abandon()
            raise
        except BaseException as exc:
            self._land(flight)
            flight.end(None, exc)
            raise
        self._land(flight)
        flight.end(value, None)
        return value, False

    def shared(self, key: str) -> None:
        """A call answered by another one in flight under `key`: counted as cached, and
        used by this role (its cost in all counts it, as a store hit's does)."""
        self.usage.cached_calls += 1
        if self.role is not None and isinstance(self.store, Store):
            self.store.use(self.role, key)

    def _land(self, flight: Flight) -> None:
        """The flight is over: calls planned from now on find its reply in the store."""
        if self.flights is not None and self.flights.get(flight.key) is flight:
            del self.flights[flight.key]

    def commit(self, key: str, model: str, reply: Reply, latency: float, cap: int) -> None:
        """Keep a reply sent for: in the store at once, and in the usage; `cap`: its call's
        `max_tokens` (a reply beyond it is counted apart)."""
        assert isinstance(self.store, Store)  # a dry run sends nothing, so commits nothing
        self.store.put(key, model, reply, latency)
        if self.role is not None:
            self.store.use(self.role, key)
        self.usage.add(reply, cap)
        self.by_model.setdefault(model, Usage()).add(reply, cap)
