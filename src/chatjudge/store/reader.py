"""A store read without being changed: what `--dry-run` and `chatjudge merge` ask of it.

Reading must leave everything as it found it: the store is opened read-only (no
migration, no lock held), as immutable when it was closed cleanly (so SQLite makes no
-wal and -shm files beside it), and a store that does not exist yet holds nothing. A
store left with a -wal file by a killed run is read through it (it holds replies); SQLite
then makes a -shm file beside it, which is removed again when reading is done.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from chatjudge.errors import StoreError
from chatjudge.store.sqlite import LOOKUP, LOOKUP_V2, StoredReply, has_legacy_keys, lookup


@dataclass(frozen=True)
class ReadOnly:
    """How to open the store at `path` without changing it: `uri` (for `sqlite3.connect`
    with `uri=True`, or `ATTACH`), and `done()` once every connection to it is closed."""

    path: Path
    uri: str
    made: Path | None  # the -shm file that reading will make beside the store

    @classmethod
    def of(cls, path: Path) -> ReadOnly:
        wal = path.with_name(path.name + "-wal").exists()
        shm = path.with_name(path.name + "-shm")
        uri = f"file:{quote(str(path.resolve()))}?{'mode=ro' if wal else 'immutable=1'}"
        return cls(path, uri, shm if wal and not shm.exists() else None)

    def done(self) -> None:
        """Remove the -shm file that reading made (none when the store was closed cleanly)."""
        if self.made is not None:
            self.made.unlink(missing_ok=True)


class StoreReader:
    """`get` as `Store` does it (`legacy_keys` too), and the replies' mean length per model."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db: sqlite3.Connection | None = None
        self._file = ReadOnly.of(path)
        self.legacy_keys = False
        column = "model"
        self._lookup = LOOKUP
        if path.is_file():
            try:
                self._db = sqlite3.connect(self._file.uri, uri=True)
                self._db.execute("SELECT 1 FROM calls LIMIT 1").fetchone()
                self.legacy_keys = has_legacy_keys(self._db)  # as the run will find it
                version = self._db.execute("PRAGMA user_version").fetchone()[0]
                if version < 2:
                    column = "judge"  # schema 1, before the run migrates it
                if version < 3:
                    self._lookup = LOOKUP_V2  # no tool calls yet
            except sqlite3.Error as exc:
                self.close()
                raise StoreError(f"{path} cannot be read ({exc})") from exc
        self.empty = self._db is None
        self._mean = (
            f"SELECT avg(output_tokens) FROM calls WHERE {column} = ? AND output_tokens IS NOT NULL"
        )

    def get(self, key: str) -> StoredReply | None:
        return None if self._db is None else lookup(self._db, key, self._lookup)

    def mean_output_tokens(self, model: str) -> float | None:
        """The mean output tokens of `model`'s stored replies; None when it has none."""
        if self._db is None:
            return None
        (mean,) = self._db.execute(self._mean, (model,)).fetchone()
        return None if mean is None else float(mean)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
        self._file.done()
