"""Run options declared once: validation with the CLI flag named, the fingerprint that names
default run directories, the generated `run` flags and options a judge cannot honour."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic.fields import FieldInfo
from typer.testing import CliRunner

import chatjudge
from chatjudge.cli import app
from chatjudge.cli.help import named
from chatjudge.errors import UsageError
from chatjudge.models import check_options, get_model
from chatjudge.options import ClientOptions, RunConfig, flags_of, help_of, option_fields
from chatjudge.rundir import default_out_dir
from tests.runner.conftest import pointwise_rows, write_jsonl
from tests.support.cli import run_cli
from tests.support.stub_openai import StubServer

# The dict chatjudge 0.1 hashed into default run directory names: changing it would make
# every default run directory of an earlier version stop resuming.
DEFAULT_FINGERPRINT = {
    "samples": 1,
    "flip": True,
    "limit": None,
    "include_system": False,
    "temperature": 0.0,
    "max_tokens": 1024,
    "seed": None,
    "base_urls": [],
}
# Options that do not change a verdict, with a value other than their default.
NOT_FINGERPRINTED = {
    "concurrency": 3,
    "no_cache": True,
    "executor": "ray",
    "workers": 4,
    "skip_invalid": True,
    "overwrite": True,
    "max_retries": 0,
    "retry_wait": 0.5,
    "parse_retries": 0,
    "requests_per_minute": 60.0,
    "tokens_per_minute": 1000.0,
    "price_in": 1.0,
    "price_out": 2.0,
    "prices": Path("prices.toml"),
    "max_cost_usd": 10.0,
    "timeout": 5.0,
    "local_workers": 2,
    "judge_check": Path("check.jsonl"),  # the check's verdicts are beside the data's
    "judge_check_samples": 5,
}
FINGERPRINTED = {  # option -> (a non-default value, its fingerprint key and value)
    "samples": (3, "samples", 3),
    "flip": (False, "flip", False),
    "limit": (10, "limit", 10),
    "include_system": (True, "include_system", True),
    "temperature": (0.5, "temperature", 0.5),
    "max_tokens": (64, "max_tokens", 64),
    "seed": (7, "seed", 7),
    "base_url": ("http://x/v1", "base_urls", ["http://x/v1"]),
    "shard": ("1/4", "shard", "1/4"),  # only when given: 0.1's default names stay
    "judge_sees": ("final", "judge_sees", "final"),  # these two too
    "tool_result_chars": (500, "tool_result_chars", 500),
    "match": ("in-order", "match", "in-order"),
    "checked_tools": ("write_*,delete", "checked_tools", "write_*,delete"),
}
OPTIONS = list(option_fields())


def judge(prompt: str) -> str:
    return (
        '{"interactivity": {"thought": "t", "score": 2}, "accuracy": {"thought": "t", "score": 1}}'
    )


# from_options


def test_every_option_is_covered_here() -> None:
    assert {name for name, _ in OPTIONS} == set(NOT_FINGERPRINTED) | set(FINGERPRINTED)


def test_an_unknown_option_is_refused_with_a_suggestion() -> None:
    with pytest.raises(UsageError) as info:
        RunConfig.from_options({"concurency": 4})
    message = str(info.value)
    assert "unknown option" in message and "'concurency'" in message
    assert "(did you mean 'concurrency'?)" in message


def test_checked_tools_take_a_list_or_the_flags_text_and_refuse_none() -> None:
    config = RunConfig.from_options({"checked_tools": ["write_*", " delete"]})
    assert config.run.checked_tools == "write_*,delete"  # as the flag writes it
    assert config.run.checked() == ("write_*", "delete")
    assert RunConfig.from_options({"checked_tools": "a, b"}).run.checked() == ("a", "b")
    assert RunConfig().run.checked() is None  # every tool checked
    with pytest.raises(UsageError, match=r"checked_tools \(--checked-tools\): .*names no tool"):
        RunConfig.from_options({"checked_tools": ","})


def test_an_unknown_option_with_nothing_close_has_no_suggestion() -> None:
    with pytest.raises(UsageError) as info:
        RunConfig.from_options({"colour": "blue"})
    message = str(info.value)
    assert "unknown option" in message and "'colour'" in message
    assert "did you mean" not in message


def test_evaluate_refuses_an_unknown_option(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="did you mean 'samples'"):
        chatjudge.evaluate(pointwise_rows(1), judge=judge, out=tmp_path / "r", sample=2)
    assert not (tmp_path / "r").exists()  # refused before anything was made


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"concurrency": 0}, "concurrency (--concurrency)"),
        ({"requests_per_minute": -1}, "requests_per_minute (--rpm)"),
        ({"tokens_per_minute": 0}, "tokens_per_minute (--tpm)"),
        ({"samples": "many"}, "samples (--samples)"),
        ({"flip": "sometimes"}, "flip (--flip)"),
        ({"retry_wait": 0}, "retry_wait (--retry-wait)"),
        ({"temperature": -0.5}, "temperature (--temperature)"),
        ({"local_workers": 0}, "local_workers (--local-workers)"),
        ({"shard": "4/4"}, "shard (--shard)"),
        ({"shard": "two"}, "shard (--shard)"),
        ({"judge_sees": "everything"}, "judge_sees (--judge-sees)"),
        ({"tool_result_chars": 0}, "tool_result_chars (--tool-result-chars)"),
    ],
)
def test_a_bad_value_names_the_option_and_its_flag(options: dict[str, Any], named: str) -> None:
    with pytest.raises(UsageError) as info:
        RunConfig.from_options(options)
    message = str(info.value)
    assert message.startswith("invalid option(s):")
    assert named in message
    assert f"got {next(iter(options.values()))!r}" in message


def test_every_bad_value_of_a_group_is_named_at_once() -> None:
    with pytest.raises(UsageError) as info:
        RunConfig.from_options({"concurrency": 0, "samples": 0, "limit": 5})
    lines = str(info.value).splitlines()[1:]
    assert [line.split()[:2] for line in lines] == [
        ["concurrency", "(--concurrency):"],
        ["samples", "(--samples):"],
    ]


def test_base_url_takes_one_url_or_several() -> None:
    one = RunConfig.from_options({"base_url": "http://a/v1"})
    assert one.client.base_url == ("http://a/v1",)
    several = RunConfig.from_options({"base_url": ["http://b/v1", "http://a/v1"]})
    assert several.client.base_url == ("http://b/v1", "http://a/v1")
    assert RunConfig().client.base_url == ()


def test_options_are_grouped_and_read_back_by_name() -> None:
    config = RunConfig.from_options(
        {"samples": 2, "concurrency": 16, "requests_per_minute": 30, "seed": 1}, progress=False
    )
    assert config.run.samples == 2 and config.rates.requests_per_minute == 30
    assert config.generation.seed == 1 and config.progress is False
    options = config.options()
    assert list(options) == [name for name, _ in OPTIONS]
    assert options["samples"] == 2 and options["timeout"] == 120.0
    assert config.changed() == {"samples": 2, "requests_per_minute": 30, "seed": 1}
    assert RunConfig().changed() == {}


def test_a_config_is_frozen() -> None:
    config = RunConfig()
    with pytest.raises(ValueError, match="frozen"):
        config.run.samples = 2  # type: ignore[misc]


# The fingerprint and default run directories


def test_the_default_fingerprint_is_chatjudge_0_1s() -> None:
    fingerprint = RunConfig().fingerprint()
    assert fingerprint == DEFAULT_FINGERPRINT
    assert list(fingerprint) == list(DEFAULT_FINGERPRINT)


def test_default_run_directories_keep_chatjudge_0_1s_names() -> None:
    # Both names were computed with chatjudge 0.1's code.
    assert default_out_dir(
        "data", "interactivity-accuracy", ["local"], RunConfig().fingerprint()
    ) == Path("chatjudge-runs/data-interactivity-accuracy-local-9946eb00")
    config = RunConfig.from_options(
        {
            "samples": 3,
            "temperature": 0.5,
            "seed": 7,
            "limit": 10,
            "base_url": ["http://b/v1", "http://a/v1"],
        }
    )
    judges = ["openai/gpt-4.1", "anthropic/claude-x"]
    assert default_out_dir(
        "mt-bench", "pairwise-chat-quality", judges, config.fingerprint()
    ) == Path(
        "chatjudge-runs/mt-bench-pairwise-chat-quality-openai_gpt_4.1_anthropic_claude_x-19f274c5"
    )


@pytest.mark.parametrize(("name", "value"), NOT_FINGERPRINTED.items())
def test_options_that_do_not_change_results_are_not_in_the_fingerprint(
    name: str, value: Any
) -> None:
    config = RunConfig.from_options({name: value})
    assert config.changed() == {name: value}
    assert config.fingerprint() == DEFAULT_FINGERPRINT
    default = default_out_dir("d", "p", ["j"], DEFAULT_FINGERPRINT)
    assert default_out_dir("d", "p", ["j"], config.fingerprint()) == default


@pytest.mark.parametrize("name", FINGERPRINTED)
def test_options_that_change_results_change_the_fingerprint(name: str) -> None:
    value, key, shown = FINGERPRINTED[name]
    fingerprint = RunConfig.from_options({name: value}).fingerprint()
    assert fingerprint == {**DEFAULT_FINGERPRINT, key: shown}
    default = default_out_dir("d", "p", ["j"], DEFAULT_FINGERPRINT)
    assert default_out_dir("d", "p", ["j"], fingerprint) != default


def test_the_order_of_base_urls_does_not_change_the_fingerprint() -> None:
    ab = RunConfig.from_options({"base_url": ["http://a/v1", "http://b/v1"]}).fingerprint()
    ba = RunConfig.from_options({"base_url": ["http://b/v1", "http://a/v1"]}).fingerprint()
    assert ab == ba and ab["base_urls"] == ["http://a/v1", "http://b/v1"]


# The CLI's flags


@pytest.fixture(scope="module")
def run_help() -> str:
    done = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "200"})
    assert done.exit_code == 0, done.output
    return done.output


@pytest.mark.parametrize(("name", "info"), OPTIONS, ids=[name for name, _ in OPTIONS])
def test_run_help_lists_every_option(run_help: str, name: str, info: FieldInfo) -> None:
    flags = flags_of(name, info)[0].split("/")
    line = next(
        (
            line
            for line in run_help.splitlines()
            if re.search(rf"(?<![\w-]){flags[0]}(?![\w-])", line)
        ),
        None,
    )
    assert line is not None, f"{flags[0]} is not in `chatjudge run --help`"
    for flag in flags:
        assert re.search(rf"(?<![\w-]){flag}(?![\w-])", line), (flag, line)
    described = named(help_of(info, "run"))
    assert described
    assert " ".join(described.split()[:4]) in " ".join(line.split())


def test_flags_given_on_the_cli_reach_the_run(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", pointwise_rows(3))
    out = tmp_path / "run"
    with StubServer() as stub:
        done = run_cli(
            "run",
            str(data),
            "--protocol",
            "interactivity-accuracy",
            "--judge",
            "openai/stub",
            "--base-url",
            stub.base_url,
            "--out",
            str(out),
            "--rpm",
            "600",
            "--parse-retries",
            "0",
            "--tpm",
            "100000",
            "--max-retries",
            "1",
            "--retry-wait",
            "0.01",
            "--timeout",
            "30",
            "--concurrency",
            "3",
            "--samples",
            "2",
            "--limit",
            "2",
            "--temperature",
            "0.5",
            "--max-tokens",
            "256",
            "--seed",
            "3",
            "--price-in",
            "1.5",
            "--price-out",
            "2",
            "--max-cost-usd",
            "100",
            "--include-system",
            "--judge-sees",
            "final",
            "--tool-result-chars",
            "500",
            "--no-flip",
            "--no-cache",
            "--skip-invalid",
            "--overwrite",
            "--shard",
            "0/1",
            OPENAI_API_KEY="dummy",
        )
        assert done.returncode == 0, done.stderr
        sent = stub.stats.requests
    config = json.loads((out / "run.json").read_text())["config"]
    assert config == {
        "concurrency": 3,
        "samples": 2,
        "flip": False,
        "limit": 2,
        "no_cache": True,
        "include_system": True,
        "judge_sees": "final",
        "tool_result_chars": 500,
        "match": "exact",
        "checked_tools": None,
        "executor": "local",
        "workers": None,
        "overwrite": True,
        "skip_invalid": True,
        "shard": "0/1",
        "judge_check": None,
        "judge_check_samples": 3,
        "temperature": 0.5,
        "max_tokens": 256,
        "seed": 3,
        "max_retries": 1,
        "retry_wait": 0.01,
        "parse_retries": 0,
        "requests_per_minute": 600.0,
        "tokens_per_minute": 100000.0,
        "price_in": 1.5,
        "price_out": 2.0,
        "prices": None,
        "max_cost_usd": 100.0,
        "base_url": [stub.base_url],
        "timeout": 30.0,
        "local_workers": None,
    }
    assert sent == 4  # --limit 2 items x --samples 2
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_items"] == 2 and summary["samples"] == 2
    assert summary["cost_usd"] is not None


def test_a_bad_flag_value_exits_2_naming_the_flag(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", pointwise_rows(1))
    done = run_cli(
        "run",
        str(data),
        "--protocol",
        "interactivity-accuracy",
        "--rpm",
        "-1",
        "--out",
        str(tmp_path / "run"),
    )
    assert done.returncode == 2
    assert "requests_per_minute (--rpm)" in done.stderr
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("flag", "value", "told"),
    [
        ("--judge-sees", "everything", "'everything' is not one of 'trajectory', 'final'"),
        ("--tool-result-chars", "0", "tool_result_chars (--tool-result-chars)"),
    ],
)
def test_a_bad_judge_view_exits_2_naming_the_flag(
    tmp_path: Path, flag: str, value: str, told: str
) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", pointwise_rows(1))
    done = run_cli(
        "run", str(data), "--protocol", "interactivity-accuracy", flag, value,
        "--out", str(tmp_path / "run"), COLUMNS="300",
    )  # fmt: skip
    assert done.returncode == 2
    assert told in " ".join(done.stderr.split()) and flag in done.stderr
    assert not (tmp_path / "run").exists()


def test_evaluate_takes_the_same_options(tmp_path: Path) -> None:
    chatjudge.evaluate(
        pointwise_rows(2),
        judge=judge,
        out=tmp_path / "r",
        requests_per_minute=600,
        parse_retries=0,
        samples=2,
        report=False,
    )
    config = json.loads((tmp_path / "r" / "run.json").read_text())["config"]
    expected = RunConfig.from_options(
        {"requests_per_minute": 600, "parse_retries": 0, "samples": 2}
    ).options()
    assert config == {**expected, "base_url": []}
    assert config["requests_per_minute"] == 600 and config["parse_retries"] == 0


# Options a judge cannot honour


def python_judge(prompt: str) -> str:
    return judge(prompt)


@pytest.mark.parametrize(
    ("option", "value"), [("temperature", 0.5), ("max_tokens", 64), ("seed", 1)]
)
def test_a_callable_judge_refuses_generation_options(option: str, value: Any) -> None:
    model = get_model(python_judge)
    flag = "--" + option.replace("_", "-")
    with pytest.raises(UsageError, match=f"python/python_judge cannot honour {flag}"):
        check_options([model], RunConfig.from_options({option: value}))


def test_a_callable_judge_takes_the_default_generation_settings() -> None:
    model = get_model(python_judge)
    check_options([model], RunConfig.from_options({"temperature": 0.0, "max_tokens": 1024}))


def test_a_panel_with_a_callable_judge_refuses_a_temperature() -> None:
    models = [
        get_model("openai/x", ClientOptions(base_url=("http://127.0.0.1:9/v1",))),
        get_model(python_judge),
    ]
    with pytest.raises(UsageError, match="python/python_judge cannot honour --temperature"):
        check_options(models, RunConfig.from_options({"temperature": 0.5}))


@pytest.mark.parametrize("spec", ["local", python_judge], ids=["local", "callable"])
def test_base_url_needs_a_judge_that_takes_it(spec: Any) -> None:
    model = get_model(spec)
    config = RunConfig.from_options({"base_url": "http://127.0.0.1:9/v1"})
    with pytest.raises(UsageError, match=r"--base-url applies to none of the judges given"):
        check_options([model], config)
    with pytest.raises(UsageError, match=r"--base-url applies to none of the judges given"):
        check_options([get_model("local"), get_model(python_judge)], config)


def test_base_url_with_one_judge_that_takes_it_is_accepted() -> None:
    config = RunConfig.from_options({"base_url": "http://127.0.0.1:9/v1"})
    models = [get_model("openai/x", config.client), get_model(python_judge)]
    check_options(models, config)  # the OpenAI judge uses it
    with pytest.raises(UsageError, match="--local-workers applies to none of the judges given"):
        check_options(models, RunConfig.from_options({"local_workers": 2}))


def test_evaluate_refuses_what_a_callable_judge_cannot_honour(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot honour --temperature"):
        chatjudge.evaluate(
            pointwise_rows(1), judge=python_judge, out=tmp_path / "a", temperature=0.5
        )
    with pytest.raises(UsageError, match="--base-url applies to none"):
        chatjudge.evaluate(
            pointwise_rows(1), judge=python_judge, out=tmp_path / "b", base_url="http://x/v1"
        )
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_the_options_import_no_model_provider() -> None:
    """`options` sits below the models (they take `ClientOptions`): it imports none of them,
    and the CLI names the providers in its help texts."""
    code = "import sys, chatjudge.options; print([m for m in sys.modules if '.models' in m])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
