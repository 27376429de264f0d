"""`results.jsonl` is read as `ResultRecord` models, each line validated."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from chatjudge.errors import UsageError
from chatjudge.formats.results import CallRecord, ResultRecord, result_row
from chatjudge.rundir import RESULTS, RunDir

OLD = Path(__file__).parents[1] / "fixtures" / "chatjudge-0.1"


def test_the_results_of_a_run_are_read_as_models() -> None:
    records = list(RunDir(OLD / "pairwise-run").results())
    assert len(records) == 3
    assert all(isinstance(r, ResultRecord) for r in records)
    assert all(isinstance(c, CallRecord) for r in records for c in r.calls)
    first = json.loads((OLD / "pairwise-run" / RESULTS).read_text().splitlines()[0])
    assert records[0].model_dump(exclude_unset=True) == first  # nothing lost or added
    assert RunDir(OLD / "pairwise-run").ok_scores() == {r.id: r.scores for r in records}


def test_a_line_that_is_not_a_results_record_is_refused_naming_its_line(tmp_path: Path) -> None:
    run = shutil.copytree(OLD / "pointwise-run", tmp_path / "run")
    lines = (run / RESULTS).read_text(encoding="utf-8").splitlines()
    broken = {**json.loads(lines[1]), "status": "maybe"}
    lines[1] = json.dumps(broken)
    (run / RESULTS).write_text("\n".join(lines) + "\n", encoding="utf-8")
    line_2 = r"results.jsonl is not a chatjudge results line \(line 2\)"
    with pytest.raises(UsageError, match=line_2):
        list(RunDir(run).results())


CALL = {
    "judge": "j", "sample": 0, "flipped": False, "status": "ok", "scores": {"s": 1},
    "label": None, "rationale": {"s": "r"}, "raw": "{}", "error": None, "cached": True,
    "input_tokens": 3, "output_tokens": 1, "latency": 0.01,
}  # fmt: skip
VERDICT = {"status": "ok", "scores": {"s": 1}, "error": None, "consistent": None, "agreement": None}


@pytest.mark.parametrize(
    ("verdict", "simulation"),
    [
        (VERDICT, None),
        ({**VERDICT, "judge_scores": {"a": {"s": 1}, "b": {"s": 1}}}, None),  # a panel
        (VERDICT, {"turns": 2, "ended": "user", "assistant_tokens": 7}),  # a simulated row
    ],
)
def test_the_engines_unvalidated_row_is_what_the_model_writes(
    verdict: dict, simulation: dict | None
) -> None:
    """`result_row` skips validation on the run's hot path: it must build exactly the line
    that `ResultRecord`, given the same fields, writes (same keys, same order)."""
    given = dict(
        id="i", index=0, rationale={"s": "r"}, raw="{}", usage={"input_tokens": 3,
        "output_tokens": 1}, calls=[CALL], fields={"prompt": "p", "extra": [1]},
    )  # fmt: skip
    row = result_row(verdict=verdict, simulation=simulation, **given)
    extra = {"simulation": simulation} if simulation is not None else {}
    model = ResultRecord(**verdict, **given, **extra)
    assert json.dumps(row) == json.dumps(model.model_dump(mode="json", exclude_unset=True))
    assert ResultRecord.model_validate(row) == model
