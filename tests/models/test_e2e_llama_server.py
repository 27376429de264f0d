"""End to end through the `openai/` judge against a real OpenAI-compatible server:
llama-cpp-python's own server with SmolLM2, started and stopped by the `llama_server` fixture."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.llama_server import LlamaServer

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize(
    ("data", "protocol", "metrics"),
    [
        (
            "interactivity_accuracy.jsonl",
            "interactivity-accuracy",
            {"interactivity", "itr", "accuracy"},
        ),
        (
            "pairwise_chat_quality.jsonl",
            "pairwise-chat-quality",
            {
                "candidate_win_rate",
                "baseline_win_rate",
                "tie_rate",
                "position_consistency",
                "length_controlled_preference",
                "style_controlled_preference",
            },
        ),
    ],
)
def test_both_protocols_through_a_real_openai_compatible_server(
    llama_server: LlamaServer, tmp_path: Path, data: str, protocol: str, metrics: set[str]
) -> None:
    out = tmp_path / "run"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "chatjudge.cli",
            "run",
            str(EXAMPLES / data),
            "--protocol",
            protocol,
            "--judge",
            f"openai/{llama_server.model}",
            "--base-url",
            llama_server.base_url,
            "--out",
            str(out),
            "--limit",
            "1",  # the server evaluates ~10 ms of CPU per prompt token: one item is enough
            "--concurrency",
            "1",  # a pairwise item's second order then reuses the first's prompt prefix
            "--max-tokens",
            "400",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode in (0, 1), done.stderr
    summary = json.loads((out / "summary.json").read_text())
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert summary["n_items"] == 1 and len(results) == 1
    # The server enforces the verdict schema, so every verdict parses.
    assert summary["n_ok"] == 1, [r["error"] for r in results]
    assert set(summary["metrics"]) == metrics
    for record in results:
        for call in record["calls"]:
            assert call["status"] == "ok" and call["raw"] and call["input_tokens"] > 0
    if protocol == "pairwise-chat-quality":
        assert {r["scores"]["pairwise_choice"] for r in results} <= {"CANDIDATE", "BASELINE", "TIE"}
        assert all(len(r["calls"]) == 2 and r["consistent"] in (True, False) for r in results)
        rates = [
            summary["metrics"][m]["value"]
            for m in ("candidate_win_rate", "baseline_win_rate", "tie_rate")
        ]
        assert abs(sum(rates) - 1) < 1e-6
    else:
        for r in results:
            assert r["scores"]["interactivity"] in (1, 2, 3) and r["scores"]["accuracy"] in (0, 1)
