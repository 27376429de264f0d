"""From an exported trace to a verdict, as the README shows it: import, generate the
candidate's replies, judge pairwise, gate with a slice per kept attribute; every step a
real process, the models a stand-in OpenAI server on loopback."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.support.cli import run_cli
from tests.support.stub_openai import StubServer
from tests.traces.conftest import Traced, read_rows

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "traces"


def test_traces_to_a_gate_decision(traced: Traced, stub: StubServer, tmp_path: Path) -> None:
    [trace], _ = traced("openai-v2")
    rows, replies = tmp_path / "rows.jsonl", tmp_path / "replies.jsonl"
    done = run_cli(
        "import", str(trace), "--out", str(rows), "--turns", "all", "--keep", "deployment.tier"
    )
    assert done.returncode == 0, done.stderr
    imported = read_rows(rows)
    # The turns whose production reply called a tool (in their trajectory) and the turn
    # after one (in its history): the candidate is offered the tools production had there.
    with_tools = [
        r["id"]
        for r in imported
        if _tool_history(r["history"]) or _tool_history(r.get("baseline_trajectory", []))
    ]
    assert len(with_tools) == 3
    model = ["--base-url", stub.base_url, "--quiet"]
    stub.configure(record=True)
    done = run_cli(
        "generate", str(rows), "--field", "response", "--model", "openai/candidate",
        "--tool-replay", "--out", str(replies), *model,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    generated = read_rows(replies)
    assert len(generated) == 8 and all(r["status"] == "ok" and r["response"] for r in generated)
    # The candidate saw each production call's history (its tool calls and results as
    # messages) and user turn; only rows with tool calls were offered tools.
    asked = [r["body"] for r in stub.stats.recorded]
    for row in generated:
        sent = [*row["history"], {"role": "user", "content": row["prompt"]}]
        firsts = [b for b in asked if b["messages"] == sent]  # two rows may ask alike
        assert firsts and all(("tools" in b) == (row["id"] in with_tools) for b in firsts)
    stub.configure(record=False)
    run_dir = tmp_path / "judged"
    done = run_cli(
        "run", str(replies), "-p", "pairwise-chat-quality", "--judge", "openai/judge",
        "--out", str(run_dir), *model,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    results = read_rows(run_dir / "results.jsonl")
    assert {r["id"] for r in results} == {r["id"] for r in generated}
    done = run_cli(
        "gate", str(run_dir), "--by", "deployment.tier", "--out", str(tmp_path / "g.json")
    )
    assert done.returncode in (0, 1, 3), done.stderr
    gate = json.loads((tmp_path / "g.json").read_text())
    assert gate["n_pairs"] == 8
    # every call came from the one deployment, whose tier the resource attribute names
    assert [(s["value"], s["n_pairs"]) for s in gate["slices"]] == [("pro", 8)]


def _tool_history(history: list[dict[str, Any]]) -> bool:
    return any(m["role"] == "tool" or m.get("tool_calls") for m in history)


def test_the_agent_example_replays_its_tools_for_the_scripted_candidate(
    stub: StubServer, tmp_path: Path
) -> None:
    """`make demo-agent` without the local model: the bundled agent trace imported, the
    scripted next version (examples/traces/candidate_agent.py, its own process) answering
    each last turn with production's recorded tool results, then judged."""
    rows, replies, url = tmp_path / "rows.jsonl", tmp_path / "replayed.jsonl", tmp_path / "url"
    done = run_cli("import", str(EXAMPLES / "otel-agent.jsonl"), "--keep", "user.tier",
                   "--out", str(rows))  # fmt: skip
    assert done.returncode == 0, done.stderr
    candidate = subprocess.Popen([sys.executable, "candidate_agent.py", str(url)], cwd=EXAMPLES)
    try:
        deadline = time.monotonic() + 30
        while not (url.is_file() and url.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        done = run_cli(
            "generate", str(rows), "--field", "response", "--model", "openai/parcelo-next",
            "--base-url", url.read_text(), "--tool-replay", "--out", str(replies), "--quiet",
        )  # fmt: skip
    finally:
        candidate.kill()
        candidate.wait()
    assert done.returncode == 0, done.stderr
    by_id = {r["id"]: r for r in read_rows(replies)}
    assert len(by_id) == 6 and all(r["response_ended"] == "final" for r in by_id.values())
    # Grounded in the replayed results: the parcel's place and date come from the recording.
    assert "Leipzig hub" in by_id["s-81f2#1"]["response"]
    assert "2025-10-11" in by_id["s-81f2#1"]["response"]
    # A call production made in an earlier turn is replayed from the history.
    delivery = [m for m in by_id["s-12aa#2"]["response_trajectory"] if m["role"] == "tool"]
    assert json.loads(delivery[0]["content"])["status"] == "processing"
    # The one call production never made is told so, and counted.
    assert "could not check" in by_id["s-3c07#1"]["response"]
    summary = json.loads((tmp_path / "replayed.summary.json").read_text())
    assert (summary["tool_steps"], summary["unmatched_tool_calls"]) == (13, 1)
    done = run_cli("run", str(replies), "-p", "pairwise-chat-quality", "--judge",
                   "openai/judge", "--base-url", stub.base_url, "--out", str(tmp_path / "j"),
                   "--quiet")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert len(read_rows(tmp_path / "j" / "results.jsonl")) == 6


def test_a_kept_attribute_some_calls_lack_is_a_slice_of_its_own(
    stub: StubServer, tmp_path: Path
) -> None:
    """`import --keep user.tier` writes null where a call had no tier; `gate --by user.tier`
    then puts those rows in the slice `(missing)`, counted like any other."""
    log = tmp_path / "log.jsonl"
    records = []
    for c in range(6):
        record = {
            "timestamp": 1_700_000_000 + c,
            "request": {"model": "prod-1", "messages": [{"role": "user", "content": f"q{c}"}]},
            "response": {"choices": [{"message": {"role": "assistant", "content": f"a{c}"}}]},
        }
        if c < 4:
            record["metadata"] = {"user.tier": "pro" if c % 2 else "free"}
        records.append(record)
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    rows, replies, run_dir = tmp_path / "rows.jsonl", tmp_path / "replies.jsonl", tmp_path / "run"
    model = ["--base-url", stub.base_url, "--quiet"]
    steps = [
        ["import", str(log), "--out", str(rows), "--keep", "user.tier"],
        ["generate", str(rows), "--field", "response", "--model", "openai/candidate",
         "--out", str(replies), *model],
        ["run", str(replies), "-p", "pairwise-chat-quality", "--judge", "openai/judge",
         "--out", str(run_dir), *model],
    ]  # fmt: skip
    for step in steps:
        done = run_cli(*step)
        assert done.returncode == 0, done.stderr
    assert [r.get("user.tier") for r in read_rows(rows)].count(None) == 2  # null or absent
    done = run_cli("gate", str(run_dir), "--by", "user.tier", "--out", str(tmp_path / "g.json"))
    assert done.returncode in (0, 1, 3), done.stderr
    gate = json.loads((tmp_path / "g.json").read_text())
    assert sorted((s["value"], s["n_pairs"]) for s in gate["slices"]) == [
        ("(missing)", 2),
        ("free", 2),
        ("pro", 2),
    ]
    assert "user.tier=(missing)" in done.stdout
