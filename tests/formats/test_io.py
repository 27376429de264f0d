"""Every file's version and its upgrades: a chain from each earlier version to the current
one, a newer version refused naming the file, and the version always written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatjudge.errors import UsageError
from chatjudge.formats import analyses, produced, results, run_info, summary
from chatjudge.formats.io import read_model, write_json
from chatjudge.formats.shared import Versioned

FILES: list[type[Versioned]] = [
    results.ResultRecord,
    summary.Summary,
    run_info.RunInfo,
    produced.GenerationSummary,
    produced.SimulationSummary,
    produced.ProducedInfo,
    analyses.Comparison,
    analyses.Agreement,
    analyses.Gate,
]


def test_the_versions_of_the_files() -> None:
    assert {m.__name__: m.version() for m in FILES} == {
        "ResultRecord": 1,
        "Summary": 2,  # 2: the optional pass_k section (tries of one task)
        "RunInfo": 1,
        "GenerationSummary": 1,
        "SimulationSummary": 2,  # 2: the simulated user's usage named as its cost
        "ProducedInfo": 1,
        "Comparison": 1,
        "Agreement": 1,
        "Gate": 1,
    }


@pytest.mark.parametrize("model", FILES, ids=lambda m: m.__name__)
def test_each_upgrade_chain_runs_without_a_gap_to_the_current_version(
    model: type[Versioned],
) -> None:
    versions = sorted(model.UPGRADES)
    oldest = versions[0] if versions else model.version()
    assert versions == list(range(oldest, model.version()))  # v -> v+1, up to the current


@pytest.mark.parametrize("model", FILES, ids=lambda m: m.__name__)
def test_a_file_of_a_newer_version_is_refused_naming_it(
    model: type[Versioned], tmp_path: Path
) -> None:
    path = tmp_path / "newer.json"
    newer = model.version() + 1
    path.write_text(json.dumps({"format": newer}), encoding="utf-8")
    with pytest.raises(UsageError) as info:
        read_model(path, model)
    message = " ".join(str(info.value).split())
    assert str(path) in message and f"has format {newer}" in message
    assert f"reads format {model.version()}" in message and model.WHAT in message
    assert "written by a newer chatjudge: upgrade chatjudge" in message


@pytest.mark.parametrize("found", [None, "2", 0, 1.0])
def test_an_unknown_version_is_refused(found: object, tmp_path: Path) -> None:
    path = tmp_path / "s.summary.json"
    path.write_text(json.dumps({"format": found, "kind": "simulation"}), encoding="utf-8")
    with pytest.raises(UsageError, match=f"has format {found!r}.*use the chatjudge version"):
        read_model(path, produced.SimulationSummary)


def test_a_file_without_a_version_is_refused_unless_its_format_had_none(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"outcome": "pass"}), encoding="utf-8")
    with pytest.raises(UsageError, match="has format None"):
        read_model(path, analyses.Gate)
    assert run_info.RunInfo.UNVERSIONED == 0  # chatjudge 0.1's run.json: see test_run_info


def test_the_version_is_written_even_when_only_set_fields_are() -> None:
    built = produced.ProducedInfo(command="import", models={}, data="d", options={})
    assert "format" in built.model_fields_set  # though its writer left it to its default
    written = write_json(Path("/dev/null"), built, only_set=True)
    assert list(written) == ["format", "command", "models", "data", "options"]
    assert written["format"] == 1
