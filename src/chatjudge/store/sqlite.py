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

import orjson

from chatjudge.chat.types import Reply, ToolUse
from chatjudge.errors import StoreError
from chatjudge.store.migrations import NewerSchemaError, migrate
from chatjudge.writing import refuse_link

# What a lookup reads; a store of schema 2 (read by a dry run before the run migrates it)
# has no `tool_calls` column.
LOOKUP = "SELECT raw, input_tokens, output_tokens, latency, tool_calls FROM calls WHERE key = ?"
USE = "INSERT OR IGNORE INTO temp.used VALUES (?, ?)"
LOOKUP_V2 = "SELECT raw, input_tokens, output_tokens, latency, NULL FROM calls WHERE key = ?"


@dataclass(slots=True)
class StoredReply:
    raw: str
    input_tokens: int | None
    output_tokens: int | None
    latency: float | None
    tool_calls: str | None = None  # OpenAI's `tool_calls` JSON, None when it calls no tool

    def reply(self) -> Reply:
        """The reply as the model gave it, tool calls included."""
        if self.tool_calls is None:
            return Reply(self.raw, self.input_tokens, self.output_tokens)
        calls = tuple(
            ToolUse(c["id"], c["function"]["name"], c["function"]["arguments"])
            for c in orjson.loads(self.tool_calls)
        )
        return Reply(self.raw, self.input_tokens, self.output_tokens, calls)


class Store:
    """Model replies keyed by a content hash of everything that changes the reply.

    `legacy_keys`: the store was written before key version 2, so lookups that miss may
    try the version-1 key of the same call (see `chatjudge.calls.keys.LegacyKeyMaker`).
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        refuse_link(self.path)  # sqlite would write the file a link names
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(_cannot_write(self.path, exc)) from exc
        try:
            self._open()
        except BaseException:
            self._db.close()
            raise

    def _open(self) -> None:
        """Settings, migrations and a first write lock, each fault told as what to do."""
        path = self.path
        try:
            self._db.execute("PRAGMA locking_mode=EXCLUSIVE")
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            migrate(self._db)
            # Take the exclusive lock now (an up-to-date store writes nothing above): a
            # store that cannot be written, or that another run holds, is found before any call.
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("COMMIT")
            self.empty = self._db.execute("SELECT 1 FROM calls LIMIT 1").fetchone() is None
            # The calls this command used (sent, or answered by the store), by role: what its
            # results cost in all, across resumes (`used_tokens`). Gone with the connection.
            self._db.execute(
                "CREATE TEMP TABLE used (role TEXT, key TEXT, PRIMARY KEY (role, key)) "
                "WITHOUT ROWID"
            )
            self.legacy_keys = has_legacy_keys(self._db)
        except NewerSchemaError as exc:
            raise StoreError(
                f"{path} was written by a newer chatjudge ({exc}): upgrade chatjudge "
                "(pip install -U chatjudge) to resume it, or use another --out"
            ) from exc
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc):
                raise StoreError(
                    f"{path} is in use by another chatjudge run: wait for it, or use another --out"
                ) from exc
            raise StoreError(_cannot_write(path, exc)) from exc
        except sqlite3.DatabaseError as exc:  # not a database, or a damaged one
            raise StoreError(
                f"{path} is not a readable chatjudge store ({exc}): restore it from a copy, or "
                f"move it aside (mv {path} {path}.bad) to start over, sending its calls again"
            ) from exc

    def get(self, key: str) -> StoredReply | None:
        return lookup(self._db, key)

    def put(self, key: str, model: str, reply: Reply, latency: float) -> None:
        """Record one reply; committed at once (autocommit), so a kill right after keeps it."""
        calls = (
            orjson.dumps([c.as_openai() for c in reply.tool_calls]).decode()
            if reply.tool_calls
            else None
        )
        self._db.execute(
            "INSERT OR REPLACE INTO calls VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (key, model, reply.text, reply.input_tokens, reply.output_tokens, latency,
             time.time(), calls, reply.served_model, reply.system_fingerprint),
        )  # fmt: skip
        self.empty = False

    def use(self, role: str, key: str) -> None:
        """`role` used the reply under `key` (it sent for it, or the store answered it)."""
        self._db.execute(USE, (role, key))

    def used_tokens(self) -> list[tuple[str, str, int, int]]:
        """Each (role, model)'s input and output tokens over the distinct calls it used."""
        return [
            (role, model, int(inp), int(out))
            for role, model, inp, out in self._db.execute(
                "SELECT u.role, c.model, total(c.input_tokens), total(c.output_tokens) "
                "FROM temp.used u JOIN calls c ON c.key = u.key GROUP BY u.role, c.model"
            )
        ]

    def served(self, role: str) -> list[tuple[str, str | None, str | None, int]]:
        """The calls `role` used, counted by model and by the model name and system
        fingerprint its provider reported serving each reply with."""
        return [
            (model, served, fingerprint, int(n))
            for model, served, fingerprint, n in self._db.execute(
                "SELECT c.model, c.served_model, c.system_fingerprint, count(*) FROM temp.used u "
                "JOIN calls c ON c.key = u.key WHERE u.role = ? GROUP BY 1, 2, 3",
                (role,),
            )
        ]

    def count(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM calls").fetchone()[0])

    def close(self) -> None:
        self._db.close()


def lookup(db: sqlite3.Connection, key: str, sql: str = LOOKUP) -> StoredReply | None:
    """The reply stored under `key`: what `Store.get` and a dry run's reader both ask."""
    row = db.execute(sql, (key,)).fetchone()
    return StoredReply(*row) if row else None


def has_legacy_keys(db: sqlite3.Connection) -> bool:
    """Whether the store holds calls under version-1 keys: recorded in `meta` by migration 2,
    or, in a store not migrated yet (schema 1), any call at all (migration 2 will record it)."""
    if db.execute("PRAGMA user_version").fetchone()[0] < 2:
        return db.execute("SELECT 1 FROM calls LIMIT 1").fetchone() is not None
    found = db.execute("SELECT value FROM meta WHERE name = 'legacy_key_version'").fetchone()
    return found is not None


def _cannot_write(path: Path, exc: BaseException) -> str:
    return (
        f"cannot write the store {path} ({exc}): make it and its directory writable "
        "(chmod, chattr -i, a read-write mount), or use another --out"
    )
