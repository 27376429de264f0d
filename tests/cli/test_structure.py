"""The shape of `chatjudge.cli`, read from its source: every exit status comes from the one
mapping (`ExitCode`, through `exit_for`), never a bare number; no command function is long."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import chatjudge.cli
from chatjudge.cli.common import GATE_EXITS, exit_for
from chatjudge.errors import BudgetReachedError, ExitCode, FatalModelError, UsageError

CLI = Path(chatjudge.cli.__file__).parent
MODULES = sorted(CLI.glob("*.py"))
EXITS = {"Exit", "fail", "exit"}  # typer.Exit(code), fail(message, code), sys.exit(code)
MAX_LINES = 60


def _calls(tree: ast.AST) -> list[ast.Call]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)]


def _name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.name)
def test_no_exit_status_is_a_bare_number(module: Path) -> None:
    tree = ast.parse(module.read_text(encoding="utf-8"))
    bare = [
        f"{module.name}:{call.lineno}"
        for call in _calls(tree)
        if _name(call) in EXITS
        for arg in [*call.args, *(k.value for k in call.keywords)]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, int)
    ]
    assert not bare, f"exit statuses written as numbers, not ExitCode: {bare}"


@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.name)
def test_no_command_function_is_long(module: Path) -> None:
    tree = ast.parse(module.read_text(encoding="utf-8"))
    long = [
        f"{module.name}:{node.name} ({node.end_lineno - node.lineno + 1} lines)"  # type: ignore[operator]
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno - node.lineno + 1 > MAX_LINES  # type: ignore[operator]
    ]
    assert not long, f"functions over {MAX_LINES} lines: {long}"


def test_exit_for_maps_every_outcome() -> None:
    summary = {"n_failed": 0, "n_skipped": 0}
    assert exit_for(summary) is ExitCode.OK
    assert exit_for({**summary, "n_failed": 1}) is ExitCode.FAILED
    assert exit_for({**summary, "n_skipped": 2}) is ExitCode.FAILED
    assert exit_for(UsageError("bad")) is ExitCode.USAGE
    assert exit_for(ValueError("bad")) is ExitCode.USAGE
    assert exit_for(BudgetReachedError("spent", summary=summary)) is ExitCode.BUDGET
    assert exit_for(FatalModelError("key", finished=3)) is ExitCode.FAILED
    assert exit_for(FatalModelError("key", finished=0)) is ExitCode.USAGE
    assert exit_for(KeyboardInterrupt()) is ExitCode.INTERRUPTED
    assert {k: int(exit_for(k)) for k in GATE_EXITS} == {
        "pass": 0,
        "fail": 1,
        "inconclusive": 3,
        "budget": 4,
    }
