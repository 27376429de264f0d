"""`chatjudge.setup.Setup`, the set-up every command that calls models goes through: data
first, a dry run in this process that creates nothing, and each command's default output."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatjudge.errors import DataValidationError, UsageError
from chatjudge.fields import FieldSpec
from chatjudge.options import RunConfig
from chatjudge.setup import Setup

FIELDS = (FieldSpec(name="prompt", description="the user's message"),)
ROWS = [{"id": "a", "prompt": "hi"}, {"id": "b", "prompt": "hello"}]


def reply(prompt: str) -> str:
    return "ok"


def test_the_data_is_validated_first_within_the_runs_limit() -> None:
    bad = [*ROWS[:1], {"id": "c"}]
    with pytest.raises(DataValidationError, match="row 2, field 'prompt'"):
        Setup("run", bad, None, FIELDS, RunConfig())
    setup = Setup("run", bad, None, FIELDS, RunConfig.from_options({"limit": 1}))
    assert setup.validation.n_rows == 1 and setup.inputs == []


def test_a_dry_run_runs_here_and_creates_nothing(tmp_path: Path) -> None:
    config = RunConfig.from_options({"executor": "ray", "workers": 2})
    setup = Setup("run", ROWS, None, FIELDS, config, dry_run=True)
    assert setup.config.run.executor == "local" and setup.config.run.workers is None
    model = setup.model(reply)
    assert setup.distribute([model]) == [model]  # no Ray worker started
    out = tmp_path / "new" / "run"
    setup.prepare(out, (out / "results.jsonl",))
    assert not (tmp_path / "new").exists()
    Setup("run", ROWS, None, FIELDS, RunConfig()).prepare(out, ())
    assert out.is_dir()  # the real run creates it


def test_the_default_output_is_a_directory_for_run_and_a_file_for_the_producers() -> None:
    run = Setup("run", ROWS, None, FIELDS, RunConfig())
    made = Setup("generate", ROWS, None, FIELDS, RunConfig())
    model = run.model(reply)
    assert run.output_path(None, "p", [model]).suffix == ""
    assert made.output_path(None, "generate-response", [model]).suffix == ".jsonl"
    assert run.output_path("chosen", "p", [model]) == Path("chosen")


def test_an_option_a_model_cannot_honour_is_refused() -> None:
    setup = Setup("run", ROWS, None, FIELDS, RunConfig.from_options({"base_url": "http://x"}))
    with pytest.raises(UsageError, match="--base-url"):
        setup.check([setup.model(reply)])
