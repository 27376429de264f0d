"""Run directories written by chatjudge 0.1 (version-1 cache keys, store schema 1) resume:
a re-run sends nothing and gives the same scores. The fixtures were written by 0.1 itself."""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from chatjudge import evaluate
from chatjudge.store import SCHEMA_VERSION
from tests.support.golden_judge import verdict

FIXTURES = Path(__file__).parents[1] / "fixtures" / "chatjudge-0.1"


def _scores(run_dir: Path) -> dict[str, dict]:
    lines = (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["id"]: r["scores"] for r in map(json.loads, lines)}


@pytest.mark.parametrize(
    ("data", "protocol", "options", "calls"),
    [
        ("pairwise", "pairwise-chat-quality", {"samples": 2}, 12),
        ("pointwise", "interactivity-accuracy", {}, 3),
    ],
)
def test_a_run_directory_of_chatjudge_0_1_resumes_without_a_call(
    tmp_path: Path, data: str, protocol: str, options: dict, calls: int
) -> None:
    run_dir = shutil.copytree(FIXTURES / f"{data}-run", tmp_path / "run")
    before = _scores(run_dir)
    result = evaluate(
        FIXTURES / f"{data}.jsonl", protocol, verdict, run_dir, report=False, **options
    )
    assert result.summary["usage"]["calls"] == 0
    assert result.summary["usage"]["cached_calls"] == calls
    assert _scores(run_dir) == before
    with contextlib.closing(sqlite3.connect(run_dir / "calls.sqlite")) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert db.execute("SELECT count(*) FROM calls").fetchone()[0] == calls


def test_new_calls_in_an_old_store_get_version_2_keys(tmp_path: Path) -> None:
    """The old keys stay readable; a call the old store lacks is sent and stored anew."""
    run_dir = shutil.copytree(FIXTURES / "pointwise-run", tmp_path / "run")
    result = evaluate(
        FIXTURES / "pointwise.jsonl", "interactivity-accuracy", verdict, run_dir,
        report=False, samples=2,
    )  # fmt: skip
    assert result.summary["usage"]["cached_calls"] == 3  # sample 0 of each item
    assert result.summary["usage"]["calls"] == 3  # sample 1 is new
    again = evaluate(
        FIXTURES / "pointwise.jsonl", "interactivity-accuracy", verdict, run_dir,
        report=False, samples=2,
    )  # fmt: skip
    assert again.summary["usage"] == {**again.summary["usage"], "calls": 0, "cached_calls": 6}
