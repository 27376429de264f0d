"""A store read without being changed: what `--dry-run` asks of it.

A dry run must leave everything as it found it: the store is opened read-only (no
migration, no lock held), as immutable when it was closed cleanly (so SQLite makes no
-wal and -shm files beside it), and a store that does not exist yet holds nothing.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from chatjudge.errors import StoreError
from chatjudge.store.sqlite import StoredReply


class StoreReader:
    """`get` as `Store` does it, and the replies' mean length per model."""

    legacy_keys = False  # a dry run of a version-1 store counts its calls as to send

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db: sqlite3.Connection | None = None
        if path.is_file():
            try:
                # A -wal file left by a killed run holds replies: read through it.
                wal = path.with_name(path.name + "-wal").exists()
                mode = "mode=ro" if wal else "immutable=1"
                self._db = sqlite3.connect(f"file:{path}?{mode}", uri=True)
                self._db.execute("SELECT 1 FROM calls LIMIT 1").fetchone()
            except sqlite3.Error as exc:
                raise StoreError(f"{path} cannot be read ({exc})") from exc
        self.empty = self._db is None

    def get(self, key: str) -> StoredReply | None:
        if self._db is None:
            return None
        row = self._db.execute(
            "SELECT raw, input_tokens, output_tokens, latency FROM calls WHERE key = ?", (key,)
        ).fetchone()
        return StoredReply(*row) if row else None

    def mean_output_tokens(self, model: str) -> float | None:
        """The mean output tokens of `model`'s stored replies; None when it has none."""
        if self._db is None:
            return None
        (mean,) = self._db.execute(
            "SELECT avg(output_tokens) FROM calls WHERE model = ? AND output_tokens IS NOT NULL",
            (model,),
        ).fetchone()
        return None if mean is None else float(mean)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
