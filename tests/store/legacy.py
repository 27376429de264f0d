"""A store as chatjudge wrote it before key version 2, for the tests that read old stores."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def schema_1_store(path: Path) -> None:
    """Schema 1 (the `judge` column), one call under a version-1 key."""
    old = sqlite3.connect(path)
    old.execute(
        "CREATE TABLE calls (key TEXT PRIMARY KEY, judge TEXT NOT NULL, raw TEXT NOT NULL, "
        "input_tokens INTEGER, output_tokens INTEGER, latency REAL, created REAL NOT NULL) "
        "WITHOUT ROWID"
    )
    old.execute("INSERT INTO calls VALUES ('k1', 'local', 'r', 1, 2, 0.5, 0)")
    old.execute("PRAGMA user_version = 1")
    old.commit()
    old.close()
