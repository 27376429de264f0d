"""The store's schema is the documented contract; replies survive the process."""

from __future__ import annotations

import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from chatjudge.chat.types import Reply, ToolUse
from chatjudge.errors import StoreError
from chatjudge.store import SCHEMA_VERSION, Store
from chatjudge.store.reader import StoreReader
from tests.store.legacy import schema_1_store


def test_migrations_give_the_documented_schema(tmp_path: Path) -> None:
    Store(tmp_path / "calls.sqlite").close()
    db = sqlite3.connect(tmp_path / "calls.sqlite")
    columns = [(r[1], r[2], r[5]) for r in db.execute("PRAGMA table_info(calls)")]
    assert columns == [
        ("key", "TEXT", 1),
        ("model", "TEXT", 0),
        ("raw", "TEXT", 0),
        ("input_tokens", "INTEGER", 0),
        ("output_tokens", "INTEGER", 0),
        ("latency", "REAL", 0),
        ("created", "REAL", 0),
        ("tool_calls", "TEXT", 0),
        ("served_model", "TEXT", 0),
        ("system_fingerprint", "TEXT", 0),
    ]
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 4
    assert [(r[1], r[2]) for r in db.execute("PRAGMA table_info(meta)")] == [
        ("name", "TEXT"),
        ("value", "TEXT"),
    ]
    assert db.execute("SELECT count(*) FROM meta").fetchone()[0] == 0  # a new store: v2 keys
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_round_trip_and_reopen_is_idempotent(tmp_path: Path) -> None:
    store = Store(tmp_path / "calls.sqlite")
    assert store.get("k") is None
    store.put("k", "openai/x", Reply('{"a": 1}', 10, 3), 0.25)
    store.put("k", "openai/x", Reply('{"a": 2}', 11, 4), 0.5)  # the newest reply wins
    store.close()
    again = Store(tmp_path / "calls.sqlite")
    got = again.get("k")
    assert got is not None and (got.raw, got.input_tokens, got.output_tokens) == ('{"a": 2}', 11, 4)
    assert again.count() == 1


def test_a_put_survives_sigkill(tmp_path: Path) -> None:
    path = tmp_path / "calls.sqlite"
    code = (
        "import os, signal\n"
        "from chatjudge.store import Store\n"
        "from chatjudge.chat.types import Reply\n"
        f"s = Store({str(path)!r})\n"
        "s.put('k', 'j', Reply('kept'), 0.1)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    done = subprocess.run([sys.executable, "-c", code])
    assert done.returncode == -9
    got = Store(path).get("k")
    assert got is not None and got.raw == "kept"


def test_a_newer_schema_is_refused_with_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "calls.sqlite"
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version = 99")
    db.close()
    with pytest.raises(StoreError, match="newer chatjudge.*99.*upgrade chatjudge") as caught:
        Store(path)
    assert str(path) in str(caught.value)


@pytest.mark.parametrize("damage", ["junk", "truncated"])
def test_a_junk_or_truncated_store_is_refused_with_what_to_do(tmp_path: Path, damage) -> None:
    path = tmp_path / "calls.sqlite"
    if damage == "junk":
        path.write_bytes(random.Random(0).randbytes(20_000))
    else:
        store = Store(path)
        for i in range(200):
            store.put(f"k{i}", "m", Reply("x" * 500), 0.1)
        store.close()
        path.write_bytes(path.read_bytes()[:20_000])
    with pytest.raises(StoreError, match="not a readable chatjudge store.*move it aside") as caught:
        Store(path)
    assert str(path) in str(caught.value)


def test_an_immutable_store_is_refused_before_any_call(tmp_path: Path, immutable) -> None:
    path = tmp_path / "calls.sqlite"
    Store(path).close()
    immutable(path)
    with pytest.raises(StoreError, match="cannot write the store.*chattr -i") as caught:
        Store(path)
    assert str(path) in str(caught.value)


def test_a_second_run_on_the_same_store_is_refused(tmp_path: Path) -> None:
    import pytest

    from chatjudge.errors import UsageError

    first = Store(tmp_path / "calls.sqlite")
    first.put("k", "j", Reply("r"), 0.1)
    with pytest.raises(UsageError, match="in use by another chatjudge run"):
        Store(tmp_path / "calls.sqlite")
    first.close()
    again = Store(tmp_path / "calls.sqlite")  # free again once the first run is done
    assert not again.empty and again.get("k") is not None


def test_a_new_store_knows_it_is_empty(tmp_path: Path) -> None:
    store = Store(tmp_path / "calls.sqlite")
    assert store.empty
    store.put("k", "j", Reply("r"), 0.1)
    store.close()
    assert not Store(tmp_path / "calls.sqlite").empty


def test_a_schema_1_store_with_calls_is_migrated_and_keeps_its_version_1_keys(
    tmp_path: Path,
) -> None:
    path = tmp_path / "calls.sqlite"
    schema_1_store(path)
    store = Store(path)
    assert store.legacy_keys and not store.empty
    got = store.get("k1")
    assert got is not None and got.raw == "r"
    store.close()
    empty = tmp_path / "empty.sqlite"
    Store(empty).close()
    assert not Store(empty).legacy_keys


def test_a_reply_that_calls_tools_comes_back_with_its_calls(tmp_path: Path) -> None:
    calls = (ToolUse("call_1", "search", '{"q": "x"}'), ToolUse("call_2", "fetch", "{not json"))
    store = Store(tmp_path / "calls.sqlite")
    store.put("k", "openai/m", Reply("", 10, 3, calls), 0.1)
    store.put("plain", "openai/m", Reply("hello", 1, 1), 0.1)
    store.close()
    for opened in (Store, StoreReader):
        reader = opened(tmp_path / "calls.sqlite")
        found = reader.get("k")
        assert found is not None and found.reply() == Reply("", 10, 3, calls)
        plain = reader.get("plain")
        assert plain is not None and plain.reply() == Reply("hello", 1, 1)
        reader.close()


def test_a_schema_2_store_is_read_before_and_after_it_gains_tool_calls(tmp_path: Path) -> None:
    """A dry run reads a store the run has not migrated yet; the run then migrates it."""
    path = tmp_path / "calls.sqlite"
    db = sqlite3.connect(path)
    from chatjudge.store.migrations import MIGRATIONS

    for number, step in enumerate(MIGRATIONS[:2]):
        step(db)
        db.execute(f"PRAGMA user_version = {number + 1}")
    db.execute("INSERT INTO calls VALUES ('k', 'm', 'old reply', 1, 2, 0.5, 0)")
    db.commit()
    db.close()
    reader = StoreReader(path)
    found = reader.get("k")
    reader.close()
    assert found is not None and found.reply() == Reply("old reply", 1, 2)
    store = Store(path)
    migrated = store.get("k")
    store.close()
    assert migrated is not None and migrated.reply() == Reply("old reply", 1, 2)
