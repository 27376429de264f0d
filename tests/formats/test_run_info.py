"""`run.json`: version 0 (chatjudge 0.1, no `format`) is read as version 1."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from chatjudge.errors import UsageError
from chatjudge.rundir import RUN_INFO, RunDir

OLD = Path(__file__).parents[1] / "fixtures" / "chatjudge-0.1"


@pytest.mark.parametrize("run", ["pairwise-run", "pointwise-run"])
def test_a_run_json_of_chatjudge_0_1_is_upgraded_on_read(run: str) -> None:
    written = json.loads((OLD / run / RUN_INFO).read_text(encoding="utf-8"))
    assert "format" not in written  # version 0
    info = RunDir(OLD / run).info
    assert info.format == 1
    newer = {"format", "chatjudge_version", "data_sha256", "protocol_sha256"}
    assert info.model_dump(exclude=newer) == written
    assert info.data_sha256 is None  # 0.1 had no fingerprint
    assert info.protocol_sha256 is None  # nor a protocol's hash: unknown, never refused


def test_a_run_json_of_a_newer_version_is_refused(tmp_path: Path) -> None:
    run = shutil.copytree(OLD / "pairwise-run", tmp_path / "run")
    data = json.loads((run / RUN_INFO).read_text(encoding="utf-8"))
    (run / RUN_INFO).write_text(json.dumps({**data, "format": 2}), encoding="utf-8")
    with pytest.raises(UsageError, match=r"has format 2; .* reads format 1 \(and upgrades 0\)"):
        _ = RunDir(run).info
