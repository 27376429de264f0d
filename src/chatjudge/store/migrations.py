"""Numbered migrations of the store's SQLite schema; `PRAGMA user_version` records the last."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable


def _m1_calls(db: sqlite3.Connection) -> None:
    db.execute(
        """CREATE TABLE calls (
            key TEXT PRIMARY KEY,       -- content hash, see chatjudge.runner.keys
            judge TEXT NOT NULL,        -- judge name, for people reading the store
            raw TEXT NOT NULL,          -- the reply as received, re-parsed on every run
            input_tokens INTEGER,
            output_tokens INTEGER,
            latency REAL,               -- seconds, the successful attempt
            created REAL NOT NULL       -- unix time
        ) WITHOUT ROWID"""
    )


def _m2_models_and_key_versions(db: sqlite3.Connection) -> None:
    """Calls are any model's (judges, models under test, simulated users), keyed by their
    messages (key version 2). A store that already holds calls keeps their version-1 keys,
    recorded in `meta`, so that a re-run still finds them."""
    db.execute("ALTER TABLE calls RENAME COLUMN judge TO model")
    db.execute("CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID")
    db.execute(
        "INSERT INTO meta SELECT 'legacy_key_version', '1' WHERE EXISTS (SELECT 1 FROM calls)"
    )


def _m3_tool_calls(db: sqlite3.Connection) -> None:
    """A reply may call tools: its calls, as OpenAI's `tool_calls` JSON (NULL: none)."""
    db.execute("ALTER TABLE calls ADD COLUMN tool_calls TEXT")


def _m4_served(db: sqlite3.Connection) -> None:
    """The model name and `system_fingerprint` the provider reported serving a reply with
    (NULL: not reported, or a reply stored before)."""
    db.execute("ALTER TABLE calls ADD COLUMN served_model TEXT")
    db.execute("ALTER TABLE calls ADD COLUMN system_fingerprint TEXT")


class NewerSchemaError(Exception):
    """The store was written by a newer chatjudge, whose schema this one cannot read."""

    def __init__(self, found: int) -> None:
        super().__init__(f"store schema {found} is newer than this chatjudge's ({SCHEMA_VERSION})")
        self.found = found


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [
    _m1_calls,
    _m2_models_and_key_versions,
    _m3_tool_calls,
    _m4_served,
]
SCHEMA_VERSION = len(MIGRATIONS)


def migrate(db: sqlite3.Connection) -> None:
    """Bring `db` to the current schema, one numbered step at a time, each in a transaction."""
    current = db.execute("PRAGMA user_version").fetchone()[0]
    if current > SCHEMA_VERSION:
        raise NewerSchemaError(current)
    for number in range(current, SCHEMA_VERSION):
        with db:
            MIGRATIONS[number](db)
            db.execute(f"PRAGMA user_version = {number + 1}")
