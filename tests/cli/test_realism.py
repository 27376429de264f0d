"""`chatjudge realism` on the command line: bad input refused before anything is sent
(exit 2, naming row and field), the dry run (exit 0, nothing written)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.realism.test_command import REAL
from tests.support.cli import run_cli


def test_bad_rows_exit_2_naming_row_and_field(tmp_path: Path) -> None:
    data = tmp_path / "real.jsonl"
    data.write_text(json.dumps({"id": "a", "chat": "text"}) + "\n")
    result = run_cli(
        "realism", str(data), "--assistant", "openai/a", "--out", str(tmp_path / "r"), key="dummy"
    )
    assert result.returncode == 2
    assert "row 1, field 'chat'" in result.stderr and "nothing was sent" in result.stderr
    assert not (tmp_path / "r").exists()


def test_no_out_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "real.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in REAL))
    result = run_cli("realism", str(data), "--assistant", "openai/a", key="dummy")
    assert result.returncode == 2 and "--out" in result.stderr


def test_the_dry_run_prints_every_role_and_writes_nothing(tmp_path: Path) -> None:
    data = tmp_path / "real.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in REAL))
    result = run_cli(
        "realism",
        str(data),
        "--assistant",
        "openai/a",
        "--judge",
        "openai/j",
        "--out",
        str(tmp_path / "r"),
        "--dry-run",
        "--price-in",
        "1",
        "--price-out",
        "2",
        key="dummy",
        COLUMNS="200",
    )
    assert result.returncode == 0, result.stderr
    for role in ("goal_model", "assistant", "simulated_user", "judge"):
        assert role in result.stdout
    assert not (tmp_path / "r").exists()


def test_tune_with_fewer_than_50_held_out_goals_exits_3_with_the_number_needed(
    tmp_path: Path,
) -> None:
    from tests.realism.tune_standins import real_rows

    data = tmp_path / "real.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in real_rows(123)))
    out = tmp_path / "r"
    args = ("realism", str(data), "--assistant", "openai/a", "--out", str(out), "--tune")
    result = run_cli(*args, "--optimizer", "openai/o", key="dummy")
    assert result.returncode == 3, result.stderr
    assert "123 real conversation(s) give 49 held-out goal(s)" in result.stderr
    assert "at least 124 conversations" in result.stderr and "nothing was sent" in result.stderr
    assert not (out / "goals.jsonl").exists()


def test_tune_and_optimizer_go_together(tmp_path: Path) -> None:
    data = tmp_path / "real.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in REAL))
    out = ("--out", str(tmp_path / "r"))
    alone = run_cli("realism", str(data), "--assistant", "openai/a", *out, "--tune", key="d")
    assert alone.returncode == 2 and "--tune and --optimizer" in alone.stderr
    other = run_cli(
        "realism", str(data), "-a", "openai/a", *out, "--optimizer", "openai/o", key="d"
    )
    assert other.returncode == 2 and "--tune and --optimizer" in other.stderr
