"""`chatjudge realism` on the command line: bad input refused before anything is sent
(exit 2, naming row and field), the dry run (exit 0, nothing written), exit 1 when a
conversation failed and 4 at the budget; `prompt --realism`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer

from chatjudge.cli.realism import _measured
from chatjudge.options import RunConfig
from chatjudge.user_realism.command import build_realism
from tests.support.cli import run_cli
from tests.user_realism.standins import Recorder
from tests.user_realism.test_command import REAL


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


def _job(rec: Recorder, out: Path, user: Any, **options: Any) -> Any:
    config = RunConfig.from_options(options, command="realism", progress=False)
    return build_realism(REAL, rec.assistant, out, user=user, goal_model=rec.goal_writer,
                         judge=rec.judge, config=config)  # fmt: skip


def test_the_exit_status_is_1_when_a_conversation_failed_and_4_at_the_budget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rec = Recorder()

    def failing_user(messages: list[dict[str, Any]]) -> str:
        if "Which laptop?" in messages[0]["content"]:
            raise RuntimeError("crashed")
        return rec.user(messages)

    assert _measured(_job(rec, tmp_path / "ok", rec.user)).exit_code == 0
    assert _measured(_job(rec, tmp_path / "failed", failing_user)).exit_code == 1
    assert "realism.json" in capsys.readouterr().err
    with pytest.raises(typer.Exit) as stopped:
        _measured(_job(rec, tmp_path / "cut", rec.user, price_in=1000, max_cost_usd=0.5))
    assert stopped.value.exit_code == 4
    assert "--max-cost-usd resumes" in capsys.readouterr().err


def test_tune_with_fewer_than_50_held_out_goals_exits_3_with_the_number_needed(
    tmp_path: Path,
) -> None:
    from tests.user_realism.tune_standins import real_rows

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
