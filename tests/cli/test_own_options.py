"""`gate` and `import` take their flags from `chatjudge.options` (`GateOptions`,
`ImportOptions`, and the run options the gate passes on) as `run` does: help in the
command's words, the value's name, and the declared limits enforced before anything."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chatjudge.cli import app
from chatjudge.cli.help import named
from chatjudge.options import COMMAND_OPTIONS, flags_of, help_of, option_fields
from tests.support.cli import run_cli


def _help(command: str) -> str:
    done = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "250"})
    assert done.exit_code == 0, done.output
    return " ".join(done.output.split())


def test_gate_help_lists_every_option_in_the_gates_words() -> None:
    text = _help("gate")
    for name, info in option_fields("gate"):
        described = named(help_of(info, "gate"))
        assert described
        assert flags_of(name, info)[0] in text
        assert " ".join(described.split()[:4]) in text, name
    assert "--sequential: calls in flight at once." in text  # not run's help of --concurrency
    assert COMMAND_OPTIONS["gate"][:2] == ("baseline", "candidate")  # the help's order


def test_import_help_names_the_values() -> None:
    text = _help("import")
    for flag, metavar in (("--sample", "N"), ("--redact", "REGEX"), ("--keep", "ATTR")):
        assert re.search(rf"{flag} {metavar}\b", text), flag


def test_a_gate_option_below_its_limit_exits_2_naming_the_flag(tmp_path: Path) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text("", encoding="utf-8")
    out = tmp_path / "out"
    done = run_cli(
        "gate", str(data), "-p", "pairwise-chat-quality", "--sequential", "--batch", "0",
        "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "batch (--batch)" in done.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    ("flag", "value", "named"),
    [
        ("--concurrency", "0", "concurrency (--concurrency)"),
        ("--price-in", "-1", "price_in (--price-in)"),
        ("--max-cost-usd", "0", "max_cost_usd (--max-cost-usd)"),
    ],
)
def test_a_run_option_below_its_limit_is_refused_by_a_gate_on_finished_runs(
    tmp_path: Path, flag: str, value: str, named: str
) -> None:
    done = run_cli("gate", str(tmp_path / "no-run"), flag, value)
    assert done.returncode == 2, done.stderr
    assert named in done.stderr  # the run's limit, before the run directory is read
