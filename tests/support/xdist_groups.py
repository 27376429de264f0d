"""pytest-xdist's `--dist loadgroup` with the groups handed to the controller in a file.

xdist sends a test's `xdist_group` to the controller inside its node id (`ID@GROUP`), by
rewriting `item._nodeid`; since pytest 9.2 a node id is built from `item._id`, so the rewrite
is lost and every group is silently spread over all workers (pytest-dev/pytest-xdist#1386):
each worker would start its own llama.cpp server, Chromium, Ray cluster. Here the first
worker writes `{node id: group}` when it has collected (every worker collects the same
tests), and the controller's scheduler reads it before it hands out the first test. A node id
that does carry `@GROUP` (an xdist that has fixed it) is grouped as xdist groups it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from xdist.scheduler import LoadGroupScheduling

INPUT_KEY = "chatjudge_groups_file"


def write_groups(config: pytest.Config, groups: dict[str, str]) -> None:
    """On the first worker: where the controller reads them (nothing to do without xdist)."""
    given = getattr(config, "workerinput", None)
    if given and INPUT_KEY in given and given.get("workerid") == "gw0":
        Path(given[INPUT_KEY]).write_text(json.dumps(groups), encoding="utf-8")


class FileGroupScheduling(LoadGroupScheduling):
    """`loadgroup`, a test's group read from the file the first worker wrote."""

    def __init__(self, config: pytest.Config, path: Path, log: object = None) -> None:
        super().__init__(config, log)  # type: ignore[arg-type]
        self.path = path
        self.groups: dict[str, str] | None = None

    def _split_scope(self, nodeid: str) -> str:
        if self.groups is None:  # first called once every worker has collected
            try:
                self.groups = json.loads(self.path.read_text(encoding="utf-8"))
            except FileNotFoundError:  # the first worker collected nothing: no groups
                self.groups = {}
        return self.groups.get(nodeid) or super()._split_scope(nodeid)
