"""`chatjudge run` end to end with `anthropic/` and `google/` judges against stand-in servers.

The CLI runs in a worker thread (it runs its own event loop) while the stand-in serves
from the test's loop; the real SDKs talk to it over loopback.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from chatjudge.cli import app
from chatjudge.protocols import get_protocol
from tests.support.stub_anthropic import AnthropicStub
from tests.support.stub_google import GoogleStub

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


async def run_cli(args: list[str]) -> Any:
    return await asyncio.to_thread(CliRunner().invoke, app, ["run", *args, "--quiet"])


def read_run(out: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    summary = json.loads((out / "summary.json").read_text())
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return summary, results


def assert_no_file_holds(out: Path, secret: str) -> None:
    for path in out.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), f"{secret!r} found in {path.name}"


async def test_anthropic_judge_through_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    protocol = get_protocol("interactivity-accuracy")
    out = tmp_path / "run"
    data = str(EXAMPLES / "interactivity_accuracy.jsonl")
    args = [data, "--protocol", protocol.name, "--judge", "anthropic/claude-x", "--out", str(out)]
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    async with AnthropicStub(api_key="sk-ant-cli-test-key") as stub:
        monkeypatch.setenv("ANTHROPIC_API_KEY", stub.api_key)
        result = await run_cli([*args, "--base-url", stub.base_url])
        assert result.exit_code == 0, result.output
        sent = len(stub.requests)
        again = await run_cli([*args, "--base-url", stub.base_url])  # resumes from the store
        assert again.exit_code == 0, again.output
        assert len(stub.requests) == sent

    summary, results = read_run(out)
    n = len((EXAMPLES / "interactivity_accuracy.jsonl").read_text().splitlines())
    assert (summary["judge"], summary["n_items"], summary["n_ok"]) == ("anthropic/claude-x", n, n)
    assert set(summary["metrics"]) == {"interactivity", "itr", "accuracy"}
    assert all(m["value"] is not None and m["n"] == n for m in summary["metrics"].values())
    assert sent == n
    assert all(r.body["tools"][0]["input_schema"] == protocol.verdict_schema for r in stub.requests)
    assert all(r["status"] == "ok" and r["usage"]["input_tokens"] > 0 for r in results)
    assert_no_file_holds(out, stub.api_key)


async def test_google_judge_through_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    protocol = get_protocol("pairwise-chat-quality")
    out = tmp_path / "run"
    data = str(EXAMPLES / "pairwise_chat_quality.jsonl")
    for name in ("GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    async with GoogleStub(api_key="AIza-cli-test-key") as stub:
        monkeypatch.setenv("GEMINI_API_KEY", stub.api_key)
        result = await run_cli(
            [
                data,
                "--protocol",
                protocol.name,
                "--judge",
                "google/gemini-x",
                "--base-url",
                stub.base_url,
                "--out",
                str(out),
            ]
        )
    assert result.exit_code == 0, result.output

    summary, results = read_run(out)
    n = len((EXAMPLES / "pairwise_chat_quality.jsonl").read_text().splitlines())
    assert (summary["judge"], summary["n_items"], summary["n_ok"]) == ("google/gemini-x", n, n)
    rates = [
        summary["metrics"][k]["value"]
        for k in ("candidate_win_rate", "baseline_win_rate", "tie_rate")
    ]
    assert sum(rates) == pytest.approx(1.0)
    assert len(stub.requests) == 2 * n  # both presentation orders
    assert all(
        r.body["generationConfig"]["responseJsonSchema"] == protocol.verdict_schema
        for r in stub.requests
    )
    assert all(r["scores"]["pairwise_choice"] in ("CANDIDATE", "BASELINE", "TIE") for r in results)
    assert_no_file_holds(out, stub.api_key)


async def test_missing_key_stops_before_any_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    async with AnthropicStub() as stub:
        result = await run_cli(
            [
                str(EXAMPLES / "interactivity_accuracy.jsonl"),
                "--protocol",
                "interactivity-accuracy",
                "--judge",
                "anthropic/claude-x",
                "--base-url",
                stub.base_url,
                "--out",
                str(tmp_path / "run"),
            ]
        )
    assert result.exit_code == 2
    assert "ANTHROPIC_API_KEY is not set" in result.output
    assert stub.requests == []
