"""From an exported trace to a verdict, as the README shows it: import, generate the
candidate's replies, judge pairwise, gate with a slice per kept attribute; every step a
real process, the models a stand-in OpenAI server on loopback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.cli import run_cli
from tests.support.stub_openai import StubServer
from tests.traces.conftest import Traced, read_rows


def test_traces_to_a_gate_decision(traced: Traced, stub: StubServer, tmp_path: Path) -> None:
    [trace], _ = traced("openai-v2")
    rows, replies = tmp_path / "rows.jsonl", tmp_path / "replies.jsonl"
    done = run_cli(
        "import", str(trace), "--out", str(rows), "--turns", "all", "--keep", "deployment.tier"
    )
    assert done.returncode == 0, done.stderr
    # `generate` offers a candidate no tools yet (issue 30, item 4), so it refuses a history
    # that holds tool calls: the one turn after the tool turn is left out of the replay.
    imported = read_rows(rows)
    rows.write_text(
        "".join(json.dumps(r) + "\n" for r in imported if not _tool_history(r["history"]))
    )
    model = ["--base-url", stub.base_url, "--quiet"]
    stub.configure(record=True)
    done = run_cli(
        "generate", str(rows), "--field", "response", "--model", "openai/candidate",
        "--out", str(replies), *model,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    generated = read_rows(replies)
    assert len(generated) == 7 and all(r["status"] == "ok" and r["response"] for r in generated)
    # The candidate saw each production call's history and user turn, as chat messages.
    asked = [r["body"]["messages"] for r in stub.stats.recorded]
    for row in generated:
        assert [*row["history"], {"role": "user", "content": row["prompt"]}] in asked
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
    assert gate["n_pairs"] == 7
    # every call came from the one deployment, whose tier the resource attribute names
    assert [(s["value"], s["n_pairs"]) for s in gate["slices"]] == [("pro", 7)]


def _tool_history(history: list[dict[str, Any]]) -> bool:
    return any(m["role"] == "tool" or m.get("tool_calls") for m in history)


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
        ("(missing)", 2), ("free", 2), ("pro", 2)
    ]
    assert "user.tier=(missing)" in done.stdout
