"""Which commands `chatjudge` has, and where each one's function lives.

A command's module (its flags, their help, what it imports) is loaded and built into a
click command only when that command is asked for: `chatjudge run` loads `cli.run`, not
the gate's, the producers' or the importers' (issue 29, item 8). The group's help, which
shows every command's, builds them all; a mistyped name's suggestions need only the names."""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping
from typing import Any

import typer
from typer.main import get_command

from chatjudge.cli.help import Command, Group

# In the order `chatjudge --help` lists them: the name, and `module:function` in `cli`.
COMMANDS: dict[str, str] = {
    "run": "run:run",
    "generate": "produce:generate",
    "simulate": "produce:simulate",
    "realism": "realism:realism",
    "merge": "merge:merge",
    "report": "run:report",
    "protocols": "run:protocols",
    "prompt": "run:prompt",
    "compare": "analyse:compare",
    "gate": "gate:gate",
    "history": "history:history",
    "agree": "analyse:agree",
    "align": "align:align",
    "import": "traces:import_traces",
    "export": "traces:export",
}


class _Commands(MutableMapping[str, Any]):
    """The group's commands by name, each built the first time it is looked up."""

    def __init__(self) -> None:
        self._built: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self._built:
            self._built[name] = _build(name, COMMANDS[name])
        return self._built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        raise TypeError("chatjudge's commands are fixed")

    def __iter__(self) -> Iterator[str]:
        return iter(COMMANDS)

    def __len__(self) -> int:
        return len(COMMANDS)


def _build(name: str, target: str) -> Any:
    module, _, function = target.partition(":")
    callback = getattr(importlib.import_module(f"chatjudge.cli.{module}"), function)
    single = typer.Typer(add_completion=False)
    single.command(name, cls=Command)(callback)
    return get_command(single)


class Commands(Group):
    """The `chatjudge` group, whose commands are built when first used."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.commands = _Commands()
