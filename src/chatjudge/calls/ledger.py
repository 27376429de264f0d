"""The store as the call path uses it: look a call up before sending it, commit its reply.

Judging and producing both go through a `Ledger`, so a call is answered from the store,
counted and committed the same way whoever makes it. A call found in the store counts
as a cached call; a reply sent for is committed to the store as it arrives and counted,
so a killed run resumes call by call. A store written before key version 2 is also
searched under the version-1 key of a judge call (`keys.LegacyKeyMaker`).
"""

from __future__ import annotations

from chatjudge.calls.keys import LegacyKeyMaker
from chatjudge.calls.usage import Usage
from chatjudge.store import Store, StoredReply
from chatjudge.store.reader import StoreReader
from chatjudge.types import Reply


class Ledger:
    """One store and the usage it counts (a run's, or one role's)."""

    __slots__ = ("by_model", "legacy", "lookup", "store", "usage")

    def __init__(self, store: Store | StoreReader, *, lookup: bool) -> None:
        """`lookup`: answer calls from the store (not with `--no-cache`); a dry run's
        ledger reads a `StoreReader` and commits nothing."""
        self.store = store
        self.usage = Usage()
        self.by_model: dict[str, Usage] = {}  # the replies sent for, by model: its cost
        self.lookup = lookup
        self.legacy = lookup and store.legacy_keys

    def find(
        self, key: str, legacy: LegacyKeyMaker | None = None, prompt: str = "", sample: int = 0
    ) -> StoredReply | None:
        """The stored reply under `key`, counted as a cached call; None when there is none.
        `legacy`: a judge call's version-1 key maker, tried with its `prompt` and `sample`
        when the store is that old."""
        if not self.lookup:
            return None
        found = self.store.get(key)
        if found is None and legacy is not None and self.legacy:
            found = self.store.get(legacy.key(prompt, sample))
        if found is not None:
            self.usage.cached_calls += 1
        return found

    def commit(self, key: str, model: str, reply: Reply, latency: float, cap: int) -> None:
        """Keep a reply sent for: in the store at once, and in the usage; `cap`: its call's
        `max_tokens` (a reply beyond it is counted apart)."""
        assert isinstance(self.store, Store)  # a dry run sends nothing, so commits nothing
        self.store.put(key, model, reply, latency)
        self.usage.add(reply, cap)
        self.by_model.setdefault(model, Usage()).add(reply, cap)
