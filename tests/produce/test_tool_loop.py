"""chatjudge.produce.tool_loop: the ids a server writes for its calls (the same one every
step, none, one for two parallel calls) become ids that pair before they are stored in the
row or sent back, so that `run` reads what `generate` wrote."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run_cli
from tests.support.stub_openai import StubServer

LOOKUP = """
def lookup(query, step, twin=False):
    return f"step {step}" + (" twin" if twin else "")

TOOLS = {"lookup": lookup}
"""


def _check_pairs(messages: list[dict[str, Any]]) -> int:
    """Every call's id non-empty and its own, every result naming an open call by it and
    holding that call's answer (`lookup`'s text for its arguments); the results' count."""
    calls: dict[str, dict[str, Any]] = {}
    answered = 0
    for message in messages:
        for call in message.get("tool_calls") or ():
            assert call["id"] and call["id"] not in calls, messages
            calls[call["id"]] = json.loads(call["function"]["arguments"])
        if message["role"] == "tool":
            arguments = calls.pop(message["tool_call_id"])
            twin = " twin" if arguments.get("twin") else ""
            assert message["content"] == f"step {arguments['step']}{twin}"
            answered += 1
    return answered


@pytest.mark.parametrize("ids", ["same", "none", "shared"])
def test_ids_a_server_repeats_or_leaves_out_pair_where_stored_and_sent_back(
    ids: str, stub: StubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"user_tools_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(LOOKUP, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    rows = [
        {
            "id": f"r{i}",
            "prompt": f"Question {i}",
            "tools": [{"name": "lookup", "parameters": {"type": "object"}}],
            "expected_tool_calls": [
                {"name": "lookup", "arguments": {"step": 1}, "extra_arguments": True}
            ],
            "match": "superset",
        }
        for i in range(2)
    ]
    data, out = tmp_path / "rows.jsonl", tmp_path / "out.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    stub.configure(tool_call_ids=ids, tool_steps=3, record=True)
    generate = ("generate", str(data), "-m", "openai/stub", "--base-url", stub.base_url,
                "--tools", f"{name}:TOOLS", "--out", str(out))  # fmt: skip
    done = run_cli(*generate, key="dummy")
    assert done.returncode == 0, done.stderr
    sent = [r["body"]["messages"] for r in stub.stats.recorded]
    assert len(sent) == 2 * (3 if ids == "shared" else 4)  # steps to three results or more
    assert max(map(_check_pairs, sent)) == (4 if ids == "shared" else 3)
    written = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert all(_check_pairs(r["response_trajectory"]) >= 2 for r in written)
    done = run_cli("run", str(out), "-p", "tool-trajectory", "--out", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr  # `run` reads what `generate` wrote
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["metrics"]["trajectory_match"]["value"] == 1
    first = out.read_bytes()
    stub.stats.reset()
    again = run_cli(*generate, key="dummy")  # the same ids on every run: the store answers
    assert again.returncode == 0, again.stderr
    assert stub.stats.requests == 0 and out.read_bytes() == first
