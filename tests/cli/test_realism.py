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


def test_prompt_prints_each_fixed_prompt_of_realism() -> None:
    for name, placeholder in (("goal", "{conversation}"), ("disclosure", "{facts}"),
                              ("pushback", "{n_user}"), ("discriminator", "{second}")):  # fmt: skip
        result = run_cli("prompt", "--realism", name)
        assert result.returncode == 0, result.stderr
        assert placeholder in result.stdout and '"' in result.stdout
    goal = run_cli("prompt", "--realism", "goal").stdout
    assert '{"question": "...", "facts": ["...", "..."]}' in goal  # escapes shown as sent


def test_prompt_refuses_an_unknown_realism_prompt_and_one_with_data(tmp_path: Path) -> None:
    unknown = run_cli("prompt", "--realism", "tone")
    assert unknown.returncode == 2 and "goal, disclosure, pushback, discriminator" in unknown.stderr
    with_data = run_cli("prompt", str(tmp_path / "x.jsonl"), "--realism", "goal")
    assert with_data.returncode == 2 and "takes no DATA" in with_data.stderr
    neither = run_cli("prompt")
    assert neither.returncode == 2 and "DATA and --protocol" in neither.stderr
