"""The summaries of `generate` and `simulate`: a version-1 simulate summary (written by
chatjudge before version 2, tests/fixtures/formats-1/) is upgraded on read, merged and
resumed as a new one, and one set of role names runs through usage and cost."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import chatjudge
from chatjudge.formats.io import read_model
from chatjudge.formats.produced import SimulationSummary
from chatjudge.merge import merge
from tests.support.golden_simulate import assistant, user

V1 = Path(__file__).parents[1] / "fixtures" / "formats-1"
ROLES = {"assistant", "simulated_user"}


def written(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_a_version_1_simulate_summary_is_upgraded_on_read() -> None:
    old = written(V1 / "sim.summary.json")
    assert old["format"] == 1 and set(old["usage"]) == {"assistant", "user"}
    summary = read_model(V1 / "sim.summary.json", SimulationSummary)
    assert summary.format == 2
    assert set(summary.usage) == set(summary.cost.roles) == ROLES
    assert summary.usage["simulated_user"] == old["usage"]["user"]
    assert summary.usage["assistant"] == old["usage"]["assistant"]
    assert summary.user == old["user"]  # the model's name keeps its field
    upgraded = summary.model_dump(mode="json", exclude_unset=True)
    assert {k: v for k, v in upgraded.items() if k not in ("format", "usage")} == {
        k: v for k, v in old.items() if k not in ("format", "usage")
    }


def figures(summary: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """Each metric's value and count: the intervals of version 1's fixtures are those of
    their day, which collapsed on a few equal values (now valid at every size, issue 41)."""
    return {name: (m["value"], m["n"]) for name, m in summary["metrics"].items()}


def test_version_1_shards_merge_into_a_version_2_summary(tmp_path: Path) -> None:
    for path in V1.glob("sim-*"):
        shutil.copy(path, tmp_path / path.name)
    merged = merge([tmp_path / "sim-0.jsonl", tmp_path / "sim-1.jsonl"], tmp_path / "merged.jsonl")
    summary = written(tmp_path / "merged.summary.json")
    assert merged.summary == summary
    assert summary["format"] == 2 and set(summary["usage"]) == set(summary["cost"]["roles"])
    shards = [written(V1 / f"sim-{k}.summary.json") for k in (0, 1)]
    assert summary["usage"]["simulated_user"]["calls"] == sum(
        s["usage"]["user"]["calls"] for s in shards
    )
    whole = written(V1 / "sim.summary.json")
    assert figures(summary) == figures(whole)  # as the unsharded command computed them


def test_a_version_1_output_resumes_from_its_store_and_is_rewritten_in_version_2(
    tmp_path: Path,
) -> None:
    for path in V1.glob("sim.*"):
        shutil.copy(path, tmp_path / path.name)
    data = shutil.copy(V1 / "questions.jsonl", tmp_path / "questions.jsonl")
    old = written(V1 / "sim.summary.json")
    chatjudge.simulate(data, assistant, user, tmp_path / "sim.jsonl", max_turns=2)
    summary = written(tmp_path / "sim.summary.json")
    assert summary["format"] == 2
    assert summary["usage"]["simulated_user"] == {
        **old["usage"]["user"],
        "calls": 0,
        "cached_calls": old["usage"]["user"]["calls"],
    }  # nothing sent again: every call came from the store
    assert figures(summary) == figures(old)
    rows = [json.loads(x) for x in (tmp_path / "sim.jsonl").read_text().splitlines()]
    assert all(set(row["usage"]) == ROLES for row in rows)


@pytest.mark.parametrize("samples", [1, 2])
def test_simulate_names_its_roles_alike_in_rows_usage_and_cost(
    tmp_path: Path, samples: int
) -> None:
    rows = [{"id": "q", "question": "q?", "answer": "a"}]
    out = chatjudge.simulate(rows, assistant, user, tmp_path / "s.jsonl", samples=samples)
    summary = written(out.with_name("s.summary.json"))
    assert set(summary["usage"]) == set(summary["cost"]["roles"]) == ROLES
    for line in out.read_text().splitlines():
        assert set(json.loads(line)["usage"]) == ROLES
