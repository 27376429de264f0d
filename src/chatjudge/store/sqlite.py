"""The store: every model reply in SQLite, written as each call completes.

WAL mode with `synchronous=NORMAL` makes each commit cheap (no fsync until a
checkpoint) while a crash or a kill of the process loses nothing committed. The
run holds the database exclusively: no shared-memory locking on every commit, and
a second run started on the same directory is refused instead of interleaving.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from chatjudge.errors import UsageError
from chatjudge.store.migrations import migrate
from chatjudge.types import Reply


@dataclass(slots=True)
class StoredReply:
    raw: str
    input_tokens: int | None
    output_tokens: int | None
    latency: float | None


class Store:
    """Model replies keyed by a content hash of everything that changes the reply.

    `legacy_keys`: the store was written before key version 2, so lookups that miss may
    try the version-1 key of the same call (see `chatjudge.runner.keys.legacy_key`).
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            self._db.execute("PRAGMA locking_mode=EXCLUSIVE")
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            migrate(self._db)  # its first write takes the exclusive lock
        except sqlite3.OperationalError as exc:
            self._db.close()
            if "locked" not in str(exc):
                raise
            raise UsageError(
                f"{self.path} is in use by another chatjudge run: wait for it, or use another --out"
            ) from exc
        self.empty = self._db.execute("SELECT 1 FROM calls LIMIT 1").fetchone() is None
        self.legacy_keys = (
            self._db.execute("SELECT value FROM meta WHERE name = 'legacy_key_version'").fetchone()
            is not None
        )

    def get(self, key: str) -> StoredReply | None:
        row = self._db.execute(
            "SELECT raw, input_tokens, output_tokens, latency FROM calls WHERE key = ?", (key,)
        ).fetchone()
        return StoredReply(*row) if row else None

    def put(self, key: str, model: str, reply: Reply, latency: float) -> None:
        """Record one reply; committed at once (autocommit), so a kill right after keeps it."""
        self._db.execute(
            "INSERT OR REPLACE INTO calls VALUES (?, ?, ?, ?, ?, ?, ?)",
            (key, model, reply.text, reply.input_tokens, reply.output_tokens, latency, time.time()),
        )

    def count(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM calls").fetchone()[0])

    def close(self) -> None:
        self._db.close()
