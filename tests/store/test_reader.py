"""A store read without being changed (`--dry-run`): what the run would find, nothing written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from chatjudge.chat.types import Reply
from chatjudge.store import Store
from chatjudge.store.reader import StoreReader
from tests.store.legacy import schema_1_store


def test_the_reader_finds_legacy_keys_as_the_run_will(tmp_path: Path) -> None:
    """A dry run must look calls up as the real run will, version-1 keys included: else it
    counts as to send calls the run finds in the store."""
    path = tmp_path / "calls.sqlite"
    schema_1_store(path)
    before = path.read_bytes()
    reader = StoreReader(path)  # not migrated yet: the run will migrate it and find them
    assert reader.legacy_keys and not reader.empty
    got = reader.get("k1")
    assert got is not None and got.raw == "r"
    assert reader.mean_output_tokens("local") == 2.0  # schema 1 names the model `judge`
    reader.close()
    assert path.read_bytes() == before and sorted(os.listdir(tmp_path)) == ["calls.sqlite"]
    Store(path).close()  # migrated: meta records the version-1 keys
    reader = StoreReader(path)
    assert reader.legacy_keys
    reader.close()
    new = tmp_path / "new.sqlite"
    store = Store(new)
    store.put("k", "m", Reply("x", 1, 3), 0.1)
    store.close()
    reader = StoreReader(new)
    assert not reader.legacy_keys and reader.mean_output_tokens("m") == 3.0
    reader.close()
    assert not StoreReader(tmp_path / "none.sqlite").legacy_keys


def killed_store(path: Path) -> None:
    """A store whose run was killed: its replies in the -wal file beside it."""
    code = (
        "import os, signal\n"
        "from chatjudge.store import Store\n"
        "from chatjudge.chat.types import Reply\n"
        f"s = Store({str(path)!r})\n"
        "s.put('k', 'm', Reply('kept', 1, 5), 0.1)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == -9


def test_reading_a_killed_runs_store_leaves_no_file_behind(tmp_path: Path) -> None:
    path = tmp_path / "calls.sqlite"
    killed_store(path)
    files = sorted(os.listdir(tmp_path))
    assert files == ["calls.sqlite", "calls.sqlite-wal"]
    reader = StoreReader(path)
    got = reader.get("k")  # read through the -wal file
    assert got is not None and got.raw == "kept"
    reader.close()
    assert sorted(os.listdir(tmp_path)) == files  # no -shm file left beside it
    Store(path).close()  # and the store resumes as it was
    assert Store(path).get("k") is not None


def test_a_shm_file_that_was_there_is_left(tmp_path: Path) -> None:
    path = tmp_path / "calls.sqlite"
    killed_store(path)
    reader = StoreReader(path)
    assert reader.get("k") is not None
    reader.close()
    shm = tmp_path / "calls.sqlite-shm"
    shm.write_bytes(b"")  # someone else's: not the reader's to remove
    StoreReader(path).close()
    assert shm.exists()
