"""The store: every judge reply in SQLite, written as each call completes.

WAL mode with `synchronous=NORMAL` makes each commit cheap (no fsync until a
checkpoint) while a crash or a kill of the process loses nothing committed.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from chatjudge.store.migrations import migrate
from chatjudge.types import Reply


@dataclass(slots=True)
class StoredReply:
    raw: str
    input_tokens: int | None
    output_tokens: int | None
    latency: float | None


class Store:
    """Judge replies keyed by a content hash of everything that changes the reply."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA busy_timeout=10000")
        migrate(self._db)

    def get(self, key: str) -> StoredReply | None:
        row = self._db.execute(
            "SELECT raw, input_tokens, output_tokens, latency FROM calls WHERE key = ?", (key,)
        ).fetchone()
        return StoredReply(*row) if row else None

    def put(self, key: str, judge: str, reply: Reply, latency: float) -> None:
        """Record one reply; committed at once (autocommit), so a kill right after keeps it."""
        self._db.execute(
            "INSERT OR REPLACE INTO calls VALUES (?, ?, ?, ?, ?, ?, ?)",
            (key, judge, reply.text, reply.input_tokens, reply.output_tokens, latency, time.time()),
        )

    def count(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM calls").fetchone()[0])

    def close(self) -> None:
        self._db.close()
