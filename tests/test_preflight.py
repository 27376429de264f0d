"""`chatjudge.preflight.Setup`, the set-up every command that calls models goes through: data
first, a dry run in this process that creates nothing, and each command's default output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import chatjudge
from chatjudge.chat.fields import FieldSpec
from chatjudge.errors import AuthError, DataValidationError, UsageError
from chatjudge.options import RunConfig
from chatjudge.preflight import Setup
from tests.support.cli import run_cli

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


def test_a_dry_run_needs_no_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """It sends nothing (D14): `--dry-run` and `chatjudge.estimate` build OpenAI's judge
    without OPENAI_API_KEY; the real run still refuses before anything is sent."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    dry = Setup("run", ROWS, None, FIELDS, RunConfig(), dry_run=True)
    assert dry.model("openai/gpt-4o-mini").needs_key
    with pytest.raises(AuthError, match="OPENAI_API_KEY is not set"):
        Setup("run", ROWS, None, FIELDS, RunConfig()).model("openai/gpt-4o-mini")
    rows = [{"id": "a", "prompt": "Hi?", "response": "Hello.", "baseline_model_response": "Hey."}]
    estimate = chatjudge.estimate(rows, "pairwise-chat-quality", "openai/gpt-4o-mini")
    assert estimate.rows == 1 and estimate.roles[0].calls == (2, 2)  # both orders
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps(rows[0]) + "\n")
    done = run_cli("run", str(data), "-p", "pairwise-chat-quality", "-j", "openai/gpt-4o-mini",
                   "--out", str(tmp_path / "run"), "--dry-run")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "nothing was sent" in done.stdout and not (tmp_path / "run").exists()
