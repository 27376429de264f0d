"""`results.jsonl` is read as `ResultRecord` models, each line validated."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from chatjudge.errors import UsageError
from chatjudge.formats.results import CallRecord, ResultRecord
from chatjudge.rundir import RESULTS, iter_results, ok_scores

OLD = Path(__file__).parents[1] / "fixtures" / "chatjudge-0.1"


def test_the_results_of_a_run_are_read_as_models() -> None:
    records = list(iter_results(OLD / "pairwise-run"))
    assert len(records) == 3
    assert all(isinstance(r, ResultRecord) for r in records)
    assert all(isinstance(c, CallRecord) for r in records for c in r.calls)
    first = json.loads((OLD / "pairwise-run" / RESULTS).read_text().splitlines()[0])
    assert records[0].model_dump(exclude_unset=True) == first  # nothing lost or added
    assert ok_scores(OLD / "pairwise-run") == {r.id: r.scores for r in records}


def test_a_line_that_is_not_a_results_record_is_refused_naming_its_line(tmp_path: Path) -> None:
    run = shutil.copytree(OLD / "pointwise-run", tmp_path / "run")
    lines = (run / RESULTS).read_text(encoding="utf-8").splitlines()
    broken = {**json.loads(lines[1]), "status": "maybe"}
    lines[1] = json.dumps(broken)
    (run / RESULTS).write_text("\n".join(lines) + "\n", encoding="utf-8")
    line_2 = r"results.jsonl is not a chatjudge results line \(line 2\)"
    with pytest.raises(UsageError, match=line_2):
        list(iter_results(run))
