"""Faults a user can act on, through the real command line: an echoed API key, a store or
an output that cannot be used, a cut-off results file, a directory holding another run.
Each is exit 2 with a message that says what to do, and nothing is sent."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from tests.runner.conftest import pointwise_rows, write_jsonl
from tests.support.cli import run_cli
from tests.support.stub_openai import StubServer

SECRET = "sk-test-ECHOED-BY-A-PROXY-91ac"


def run(stub: StubServer, data: Path, out: Path, *extra: str, key: str | None = None):
    return run_cli(
        "run", str(data), "-p", "interactivity-accuracy", "-j", "openai/stub",
        "--base-url", stub.base_url, "--out", str(out), "--retry-wait", "0.01",
        "--max-retries", "1", *extra, key=key,
    )  # fmt: skip


def verdicts(run_dir: Path) -> list[tuple[str, dict]]:
    lines = (run_dir / "results.jsonl").read_text().splitlines()
    return [(r["id"], r["scores"]) for r in map(json.loads, lines)]


def every_file(*roots: Path) -> list[Path]:
    return [p for root in roots for p in ([root] if root.is_file() else root.rglob("*"))
            if p.is_file()]  # fmt: skip


@pytest.mark.parametrize("status", ["400", "401"])
def test_a_key_echoed_by_the_server_is_masked_everywhere(
    stub: StubServer, tmp_path: Path, status: str
) -> None:
    """A proxy quotes the Authorization header in its error: the key is in no output, no
    file and not in the store, for judging, generating and simulating alike."""
    stub.configure(echo_authorization=True, permanent={"Question 1:": status})
    data = write_jsonl(tmp_path / "d.jsonl", pointwise_rows(3))
    judged = run(stub, data, tmp_path / "run", key=SECRET)
    assert judged.returncode == 1, judged.stderr  # 401 stops the run after finished items
    masked = "Bearer [OPENAI_API_KEY]"
    assert stub.stats.faults[status] >= 1
    prompts = write_jsonl(tmp_path / "p.jsonl", [
        {"id": f"p{i}", "prompt": f"Question {i}: say hi"} for i in range(3)
    ])  # fmt: skip
    generated = run_cli(
        "generate", str(prompts), "-m", "openai/stub", "--base-url", stub.base_url,
        "--out", str(tmp_path / "gen.jsonl"), "--retry-wait", "0.01", "--max-retries", "1",
        key=SECRET,
    )  # fmt: skip
    questions = write_jsonl(tmp_path / "q.jsonl", [
        {"id": f"q{i}", "question": f"Question {i}: what is 2+{i}?", "answer": str(2 + i)}
        for i in range(3)
    ])  # fmt: skip
    simulated = run_cli(
        "simulate", str(questions), "-a", "openai/stub", "--assistant-base-url", stub.base_url,
        "--max-turns", "1", "--out", str(tmp_path / "sim.jsonl"), "--retry-wait", "0.01",
        "--max-retries", "1", key=SECRET,
    )  # fmt: skip
    outputs = [judged, generated, simulated]
    for done in outputs:
        assert SECRET not in done.stdout + done.stderr
    files = every_file(tmp_path / "run", tmp_path / "gen.jsonl", tmp_path / "sim.jsonl")
    files += every_file(*tmp_path.glob("*.calls.sqlite"), *tmp_path.glob("*.summary.json"))
    written = {"results.jsonl", "calls.sqlite", "gen.jsonl", "sim.jsonl"}
    if status == "400":  # a 401 stops the run before its report
        written.add("report.html")
    assert {f.name for f in files} >= written
    for path in files:
        assert SECRET.encode() not in path.read_bytes(), path
    if status == "401":  # the run stops at once: the masked key is what stderr shows
        assert masked in judged.stderr
    else:  # the item failed with the server's message, written masked
        assert masked in (tmp_path / "run" / "results.jsonl").read_text()
        assert masked in (tmp_path / "gen.jsonl").read_text()


@pytest.mark.parametrize("damage", ["junk", "newer", "immutable"])
def test_a_store_that_cannot_be_used_is_exit_2_and_nothing_is_sent(
    stub: StubServer, tmp_path: Path, damage: str, immutable
) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", pointwise_rows(3))
    out = tmp_path / "run"
    assert run(stub, data, out).returncode == 0
    stub.stats.reset()
    store = out / "calls.sqlite"
    if damage == "junk":
        store.write_bytes(os.urandom(20_000))
        expected = "is not a readable chatjudge store"
    elif damage == "newer":
        db = sqlite3.connect(store)
        db.execute("PRAGMA user_version = 99")
        db.close()
        expected = "written by a newer chatjudge"
    else:
        immutable(store)
        expected = "cannot write the store"
    done = run(stub, data, out, "--no-cache")
    assert done.returncode == 2, done.stderr
    assert expected in done.stderr and str(store) in done.stderr
    assert "Traceback" not in done.stderr
    assert stub.stats.requests == 0


@pytest.mark.parametrize("command", ["run", "generate", "simulate"])
def test_an_output_that_cannot_be_written_is_exit_2_before_any_call(
    stub: StubServer, tmp_path: Path, command: str, immutable
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    immutable(locked)
    if command == "run":
        data = write_jsonl(tmp_path / "d.jsonl", pointwise_rows(2))
        done = run(stub, data, locked / "run")
    elif command == "generate":
        data = write_jsonl(tmp_path / "p.jsonl", [{"prompt": "hi"}])
        done = run_cli("generate", str(data), "-m", "openai/stub", "--base-url",
                         stub.base_url, "--out", str(locked / "gen.jsonl"))  # fmt: skip
    else:
        data = write_jsonl(tmp_path / "q.jsonl", [{"question": "2+2?", "answer": "4"}])
        done = run_cli("simulate", str(data), "-a", "openai/stub", "--assistant-base-url",
                         stub.base_url, "--out", str(locked / "sim.jsonl"))  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "cannot write to" in done.stderr and "Traceback" not in done.stderr
    assert stub.stats.requests == 0


def test_a_read_only_run_directory_is_exit_2_before_any_call(
    stub: StubServer, tmp_path: Path, immutable
) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", pointwise_rows(2))
    out = tmp_path / "run"
    assert run(stub, data, out).returncode == 0
    stub.stats.reset()
    immutable(out)
    done = run(stub, data, out, "--no-cache")
    assert done.returncode == 2 and "cannot write to" in done.stderr, done.stderr
    assert stub.stats.requests == 0


def test_a_cut_off_results_file_is_named_and_a_rerun_rewrites_it(
    stub: StubServer, tmp_path: Path
) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", pointwise_rows(4))
    out = tmp_path / "run"
    assert run(stub, data, out).returncode == 0
    results = out / "results.jsonl"
    before = verdicts(out)
    whole = results.read_bytes()
    results.write_bytes(whole[: len(whole) - 40])  # the last line cut off
    human = tmp_path / "h.jsonl"
    human.write_text('{"id": "item-0000", "score": 2}\n{"id": "item-0001", "score": 3}\n')
    for args in (["report", str(out)], ["agree", str(out), "--human", str(human)],
                 ["compare", f"a={out}", f"b={out}"]):  # fmt: skip
        done = run_cli(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert f"{results}, line 4, is cut off" in done.stderr
        assert "run the same `chatjudge run` command again" in done.stderr
    stub.stats.reset()
    assert run(stub, data, out).returncode == 0  # rewritten from the store
    assert stub.stats.requests == 0
    assert verdicts(out) == before
    assert run_cli("report", str(out)).returncode == 0


def test_an_out_holding_a_different_run_is_refused_unless_overwrite(
    stub: StubServer, tmp_path: Path
) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", pointwise_rows(3))
    other = write_jsonl(tmp_path / "other.jsonl", pointwise_rows(3, marker="x"))
    out = tmp_path / "run"
    assert run(stub, data, out).returncode == 0
    before = verdicts(out)
    assert run(stub, data, out, "--limit", "2").returncode == 0  # the same run, fewer rows
    stub.stats.reset()
    done = run(stub, other, out, "--temperature", "0.5")
    assert done.returncode == 2
    assert "holds a different run" in done.stderr
    assert "data: d vs other" in done.stderr and "option temperature: 0.0 vs 0.5" in done.stderr
    assert "--overwrite" in done.stderr and stub.stats.requests == 0
    assert run(stub, data, out).returncode == 0 and verdicts(out) == before  # not replaced
    assert run(stub, other, out, "--overwrite").returncode == 0
    assert json.loads((out / "run.json").read_text())["data"] == "other"
