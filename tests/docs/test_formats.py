"""docs/formats.md and the models of `chatjudge.formats` say
the same: every field of a file's model (and of the models nested in it) is named in that
file's section, and every key of the section's JSON examples is a field of the model it sits
in."""

from __future__ import annotations

import inspect
import json
import re
import types
from pathlib import Path
from typing import Any, Union, get_args, get_origin

import pytest
from pydantic import BaseModel

from chatjudge.formats import (
    analyses,
    cost,
    produced,
    realism,
    results,
    run_info,
    summary,
)
from chatjudge.formats import shard_record as shard
from chatjudge.formats import shared as base

DOC = Path(__file__).resolve().parents[2] / "docs" / "formats.md"

# Each written file's model, and the heading of its section in the document.
SECTIONS: dict[type[BaseModel], str] = {
    results.ResultRecord: "## `results.jsonl`",
    summary.Summary: "## `summary.json`",
    run_info.RunInfo: "## `run.json`",
    produced.GenerationSummary: "### `<name>.summary.json` of `generate`",
    produced.SimulationSummary: "### `<name>.summary.json` of `simulate`",
    produced.ProducedInfo: "## `<name>.run.json`",
    analyses.Comparison: "## `compare.json`",
    analyses.Agreement: "## `agreement.json`",
    analyses.Gate: "## `gate.json`",
    realism.Realism: "## `realism.json`",
}


def section(text: str, heading: str) -> str:
    """The heading's text, up to the next heading of its level or above."""
    level = heading.split(" ", 1)[0]
    lines = text.splitlines()
    assert heading in lines, f"docs/formats.md has no section {heading!r}"
    start = lines.index(heading) + 1
    above = re.compile(f"#{{1,{len(level)}}} ")
    end = next((i for i in range(start, len(lines)) if above.match(lines[i])), len(lines))
    return "\n".join(lines[start:end])


def json_examples(text: str) -> list[Any]:
    """The section's ```json blocks, without their `//` comments; a fragment (`"key": {...}`)
    is read as an object holding it."""
    examples = []
    for block in re.findall(r"```json\n(.*?)```", text, flags=re.DOTALL):
        plain = "\n".join(re.sub(r"(^|\s)//.*$", "", line) for line in block.splitlines())
        plain = plain.strip()
        if plain.startswith('"'):
            plain = "{" + plain + "}"
        examples.append(json.loads(plain))
    return examples


def nested_models(annotation: Any) -> list[type[BaseModel]]:
    """The models an annotation holds: `Metric`, `list[Rating]`, `dict[str, Metric] | None`."""
    if inspect.isclass(annotation) and issubclass(annotation, BaseModel):
        return [annotation]
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType, list):
        return [m for arg in get_args(annotation) for m in nested_models(arg)]
    if origin is dict:
        return nested_models(get_args(annotation)[1])
    return []


def all_models(model: type[BaseModel]) -> set[type[BaseModel]]:
    found = {model}
    for info in model.model_fields.values():
        for inner in nested_models(info.annotation):
            found |= all_models(inner)
    return found


def unknown_keys(value: Any, annotation: Any, where: str) -> list[str]:
    """Keys of an example that the model it stands for does not have, with their path."""
    models = nested_models(annotation)
    origin = get_origin(annotation)
    if origin is dict or (origin in (Union, types.UnionType) and _is_dict_of_models(annotation)):
        if isinstance(value, dict) and models:
            return [k for key, v in value.items() for k in unknown_keys(v, models[0], where)]
        return []
    if isinstance(value, list) and models:
        return [k for item in value for k in unknown_keys(item, models[0], where)]
    if not (isinstance(value, dict) and models):
        return []
    model = models[0]
    found = []
    for key, inner in value.items():
        if key not in model.model_fields:
            found.append(f"{where}: {key} (not a field of {model.__name__})")
            continue
        found += unknown_keys(inner, model.model_fields[key].annotation, f"{where}.{key}")
    return found


def _is_dict_of_models(annotation: Any) -> bool:
    return any(get_origin(arg) is dict for arg in get_args(annotation))


@pytest.fixture(scope="module")
def doc() -> str:
    return DOC.read_text(encoding="utf-8")


def test_every_written_format_has_a_section() -> None:
    versioned = {
        model
        for module in (analyses, base, cost, produced, realism, results, run_info, shard, summary)
        for _, model in inspect.getmembers(module, inspect.isclass)
        if issubclass(model, base.Versioned) and model is not base.Versioned
    }
    assert versioned == set(SECTIONS), "a model with a `format` has no section in this test"


@pytest.mark.parametrize("model", list(SECTIONS), ids=lambda m: m.__name__)
def test_every_field_is_named_in_its_files_section(doc: str, model: type[BaseModel]) -> None:
    text = section(doc, SECTIONS[model])
    missing = [
        f"{inner.__name__}.{name}"
        for inner in sorted(all_models(model), key=lambda m: m.__name__)
        for name in inner.model_fields
        if not re.search(rf"[`\"]{re.escape(name)}[`\"]", text)
    ]
    assert not missing, f"{SECTIONS[model]} does not name: {', '.join(missing)}"


@pytest.mark.parametrize("model", list(SECTIONS), ids=lambda m: m.__name__)
def test_every_key_of_the_examples_is_a_field(doc: str, model: type[BaseModel]) -> None:
    examples = json_examples(section(doc, SECTIONS[model]))
    unknown = [k for example in examples for k in unknown_keys(example, model, model.__name__)]
    assert not unknown, f"{SECTIONS[model]}: {'; '.join(unknown)}"


def test_the_checks_can_fail() -> None:
    """A field the document leaves out, and a key no model has, are both found."""
    text = '## `x.json`\n\n`format`, `n_items`\n\n```json\n{"format": 1, "nope": 2}\n```\n'
    assert "`n_ok`" not in section(text, "## `x.json`")
    assert unknown_keys(json_examples(text)[0], summary.Summary, "Summary") == [
        "Summary: nope (not a field of Summary)"
    ]
    nested = {"metrics": {"m": {"value": 1, "ci95": None, "n": 2, "nope": 0}}}
    assert unknown_keys(nested, summary.Summary, "Summary") == [
        "Summary.metrics: nope (not a field of Metric)"
    ]


@pytest.mark.parametrize("model", list(SECTIONS), ids=lambda m: m.__name__)
def test_the_examples_show_the_version_written(doc: str, model: type[base.Versioned]) -> None:
    examples = json_examples(section(doc, SECTIONS[model]))
    shown = {e["format"] for e in examples if isinstance(e, dict) and "format" in e}
    assert shown <= {model.version()}, f"{SECTIONS[model]} shows format {shown}"
    name = SECTIONS[model].split(" ", 1)[1]  # the file as the table of versions names it
    table = doc.split("**Each file has its own version**", 1)[1].split("\n\n")[1]
    rows = [line.split("|") for line in table.splitlines() if name in line.split("|")[1]]
    assert [cells[2].strip() for cells in rows] == [str(model.version())], name
