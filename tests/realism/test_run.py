"""`chatjudge.realism(...)` end to end against Python function models: every file written,
realism.json with the command's fields, the page escaping what the conversations say."""

from __future__ import annotations

import json
from pathlib import Path

import chatjudge
from tests.realism.standins import Recorder
from tests.realism.test_command import REAL


def test_every_file_is_written_and_realism_json_holds_the_command_fields(tmp_path: Path) -> None:
    rec = Recorder()
    said = [
        {"role": "user", "content": "<script>alert(1)</script>"},
        {"role": "assistant", "content": "ok"},
    ]
    rows = [{"id": "x", "chat": said}, *REAL]
    result = chatjudge.realism(rows, rec.assistant, tmp_path / "r", user=rec.user,
                               goal_model=rec.goal_writer, judge=rec.judge, samples=2)  # fmt: skip
    names = {p.name for p in (tmp_path / "r").iterdir()}
    assert {"goals.jsonl", "simulated.jsonl", "realism.json", "report.html"} <= names
    written = json.loads((tmp_path / "r" / "realism.json").read_text())
    assert (written["goals"], written["samples"], written["cut_share"]) == (4, 2, 0.0)
    assert written["failed"] == {} and result.n_goals == 4 and result.k == 2
    page = (tmp_path / "r" / "report.html").read_text()
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)" in page
    assert 'data-measure="disclosure"' in page and 'id="discriminator-accuracy"' in page
