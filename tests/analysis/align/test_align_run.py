"""`chatjudge align`: the held-out proof, its exit codes, leakage, bad labels, budget, dry
run, resume after SIGKILL, and the aligned protocol run with `run -p`."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import chatjudge
from chatjudge.analysis.align.measure import held_out_difference
from chatjudge.formats.alignment import Alignment
from chatjudge.formats.io import read_model
from tests.support import align_standin as standin
from tests.support.cli import run_cli
from tests.support.stub_openai import StubServer

KEY = "sk-test"


@pytest.fixture
def server() -> Iterator[StubServer]:
    """The OpenAI stand-in answering as the rule-following judge and its optimiser."""
    with StubServer(replies=standin.standin_reply, record=True) as stub:
        yield stub


def judged_run(tmp_path: Path, stub: StubServer, n: int, labels: str = "policy") -> Path:
    """A run of `n` stand-in rows judged by `openai/stub`, and its labels file."""
    rows = standin.rows(n)
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    os.environ["OPENAI_API_KEY"] = KEY
    try:
        chatjudge.evaluate(data, "pairwise-chat-quality", judge="openai/stub", out=tmp_path / "run",
                           base_url=stub.base_url, flip=False, report=False)  # fmt: skip
    finally:
        del os.environ["OPENAI_API_KEY"]
    label = standin.policy if labels == "policy" else standin.noise
    (tmp_path / "labels.jsonl").write_text(
        "".join(json.dumps({"id": r["id"], "label": label(r["id"])}) + "\n" for r in rows),
        encoding="utf-8",
    )
    stub.stats.recorded.clear()
    stub.stats.requests = stub.stats.replies = 0
    stub.stats.sends.clear()
    return tmp_path / "run"


def align_args(tmp_path: Path, stub: StubServer, *extra: str) -> list[str]:
    return ["align", str(tmp_path / "run"), "--human", str(tmp_path / "labels.jsonl"),
            "--optimizer", "openai/stub", "--out", str(tmp_path / "aligned"),
            "--base-url", stub.base_url, *extra]  # fmt: skip


def test_a_real_gain_is_recommended_and_the_aligned_protocol_runs(
    server: StubServer, tmp_path: Path
) -> None:
    judged_run(tmp_path, server, 150)
    done = run_cli(*align_args(tmp_path, server), key=KEY)
    assert done.returncode == 0, done.stderr
    a = read_model(tmp_path / "aligned" / "alignment.json", Alignment)
    assert a.recommended and a.held_out.n == 60 and len(a.select_ids) == 90
    assert a.held_out.after.agreement > a.held_out.before.agreement
    assert a.held_out.difference.ci95[0] > 0 and "recommended" in done.stdout
    toml = tmp_path / "aligned" / "protocol.toml"
    text = toml.read_text(encoding="utf-8")
    assert 'source = "pairwise-chat-quality"' in text and "labels_sha256" in text
    # The aligned protocol runs wherever a protocol does.
    rerun = run_cli("run", str(tmp_path / "rows.jsonl"), "-p", str(toml), "--judge",
                    "openai/stub", "--base-url", server.base_url, "--no-flip", "--out",
                    str(tmp_path / "again"), key=KEY)  # fmt: skip
    assert rerun.returncode == 0, rerun.stderr
    info = json.loads((tmp_path / "again" / "run.json").read_text(encoding="utf-8"))
    assert info["protocol"] == "pairwise-chat-quality-aligned"
    # Its summary and report carry the provenance.
    summary = json.loads((tmp_path / "again" / "summary.json").read_text(encoding="utf-8"))
    assert summary["protocol_provenance"]["labels_sha256"] == a.labels_sha256
    page = (tmp_path / "again" / "report.html").read_text(encoding="utf-8")
    assert 'id="protocol-provenance"' in page and "recommended" in page
    assert f"{a.held_out.after.agreement:.3f}" in page


def test_no_held_out_row_reaches_an_optimiser_prompt_or_a_candidate(
    server: StubServer, tmp_path: Path
) -> None:
    judged_run(tmp_path, server, 80)
    done = run_cli(*align_args(tmp_path, server, "--seed", "7"), key=KEY)
    assert done.returncode in (0, 3), done.stderr
    a = read_model(tmp_path / "aligned" / "alignment.json", Alignment)
    held = set(a.held_out.ids)
    assert len(held) == 32 and not held & set(a.select_ids)
    prompts = [m["content"] for r in server.stats.recorded for m in r["body"]["messages"]]
    optimizer = [p for p in prompts if "Cases where the judge and the humans disagree" in p]
    assert len(optimizer) == 4  # three folds and the final one
    for prompt in optimizer:
        assert not [i for i in held if f"Row {i}:" in prompt]
    # Every judging before the final one saw select rows only, and no candidate holds a
    # held-out row (examples are rows: their ids are in their text).
    judged = tmp_path / "aligned" / "judged"
    for folder in judged.iterdir():
        ids = {json.loads(line)["id"] for line in (folder / "results.jsonl").open()}
        assert (ids == held) if folder.name.startswith("held-out") else not ids & held
    for prompt in prompts:
        guidance = prompt.partition(standin.GUIDANCE)[2]
        assert not [i for i in held if f"Row {i}:" in guidance]
    toml = (tmp_path / "aligned" / "protocol.toml").read_text(encoding="utf-8")
    assert not [i for i in held if f"Row {i}:" in toml]


def test_noise_labels_show_no_gain_exit_3_and_the_toml_is_still_written(
    server: StubServer, tmp_path: Path
) -> None:
    judged_run(tmp_path, server, 100, labels="noise")
    done = run_cli(*align_args(tmp_path, server), key=KEY)
    assert done.returncode == 3, done.stderr
    assert "no gain shown on held-out labels" in done.stdout
    a = read_model(tmp_path / "aligned" / "alignment.json", Alignment)
    assert not a.recommended and a.held_out.difference.ci95[0] <= 0
    assert (tmp_path / "aligned" / "protocol.toml").is_file()


def test_fewer_than_30_held_out_rows_is_exit_3_before_anything_is_sent(
    server: StubServer, tmp_path: Path
) -> None:
    judged_run(tmp_path, server, 60)
    done = run_cli(*align_args(tmp_path, server), key=KEY)
    assert done.returncode == 3, done.stderr
    assert "24 held-out rows" in done.stderr and "at least 30" in done.stderr
    assert server.stats.requests == 0 and not (tmp_path / "aligned").exists()


def test_a_bad_labels_file_is_exit_2_naming_row_and_field(
    server: StubServer, tmp_path: Path
) -> None:
    judged_run(tmp_path, server, 80)
    labels = tmp_path / "labels.jsonl"
    lines = labels.read_text(encoding="utf-8").splitlines()
    lines[2] = json.dumps({"id": "r0002", "label": "maybe"})
    labels.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = run_cli(*align_args(tmp_path, server), key=KEY)
    assert done.returncode == 2, done.stderr
    assert "row 3, field 'label': bad value 'maybe'" in done.stderr
    assert server.stats.requests == 0


def test_dry_run_sends_nothing_and_counts_the_calls(server: StubServer, tmp_path: Path) -> None:
    judged_run(tmp_path, server, 80)
    done = run_cli(*align_args(tmp_path, server, "--dry-run"), key=KEY)
    assert done.returncode == 0, done.stderr
    assert server.stats.requests == 0 and not (tmp_path / "aligned" / "alignment.json").exists()
    # 3 candidates x 48 select rows and the aligned 32 held-out rows (the originals are the
    # run's store's); 4 optimiser calls.
    assert "176" in done.stdout and "optimizer" in done.stdout, done.stdout


def test_the_held_out_originals_are_answered_by_the_runs_store(
    server: StubServer, tmp_path: Path
) -> None:
    """80 labelled rows: 48 select rows judged by 3 candidates, 32 held out judged aligned;
    the 32 held-out originals are the run's own calls, which its store holds: not sent."""
    judged_run(tmp_path, server, 80)
    done = run_cli(*align_args(tmp_path, server), key=KEY)
    assert done.returncode in (0, 3), done.stderr
    a = read_model(tmp_path / "aligned" / "alignment.json", Alignment)
    assert a.optimizer_calls == 4 and a.judge_calls == 3 * 48 + 32
    assert server.stats.requests == 4 + 3 * 48 + 32 and server.stats.max_sends == 1
    assert a.held_out.before.n == 32  # measured all the same


def _no_rules(prompt: str, schema: dict | None) -> str:
    """The stand-in judge, with an optimiser that writes no rule."""
    if schema is not None and "rules" in schema.get("properties", {}):
        return '{"rules": []}'
    return standin.standin_reply(prompt, schema)


def test_an_optimiser_writing_no_rules_is_said_and_no_prompt_is_judged_twice(
    tmp_path: Path,
) -> None:
    """No rules: `rules` is the original prompt (the run's store answers it) and `both` is
    `examples`: each fold judges the examples once, the held-out rows once."""
    with StubServer(replies=_no_rules, record=True) as server:
        judged_run(tmp_path, server, 80)
        done = run_cli(*align_args(tmp_path, server), key=KEY)
        assert done.returncode in (0, 3), done.stderr
        assert "wrote no rules (fold-1, fold-2, fold-3, final)" in done.stderr
        a = read_model(tmp_path / "aligned" / "alignment.json", Alignment)
        assert a.rules == [] and a.optimizer_calls == 4
        assert server.stats.max_sends == 1  # no prompt sent twice
        # The examples on the 48 select rows, and the chosen candidate on the 32 held out
        # (unless it is the original prompt, which the run's store answers).
        held = 0 if a.chosen == "rules" else 32
        assert server.stats.requests == 4 + 48 + held
        assert a.selection["rules"] == a.selection["original"]
        assert a.selection["both"] == a.selection["examples"]


def test_a_budget_stops_with_exit_4_and_a_larger_one_resumes_paying_nothing_twice(
    server: StubServer, tmp_path: Path
) -> None:
    judged_run(tmp_path, server, 80)
    prices = ("--price-in", "1000", "--price-out", "1000")
    cut = run_cli(*align_args(tmp_path, server, *prices, "--max-cost-usd", "30"), key=KEY)
    assert cut.returncode == 4, cut.stderr
    assert "max-cost-usd" in cut.stderr
    sent = server.stats.requests
    assert 0 < sent < 212
    done = run_cli(*align_args(tmp_path, server, *prices, "--max-cost-usd", "100000"), key=KEY)
    assert done.returncode in (0, 3), done.stderr
    assert server.stats.max_sends == 1  # no call was paid for twice


def stored_calls(folder: Path) -> int:
    total = 0
    for store in folder.rglob("*.sqlite"):
        with contextlib.closing(sqlite3.connect(store)) as db:
            total += db.execute("SELECT count(*) FROM calls").fetchone()[0]
    return total


def test_resume_after_sigkill_sends_only_what_was_not_committed(tmp_path: Path) -> None:
    with StubServer(replies=standin.standin_reply, latency=0.01) as server:
        judged_run(tmp_path, server, 80)
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
        proc = subprocess.Popen(
            [sys.executable, "-m", "chatjudge.cli", *align_args(tmp_path, server),
             "--concurrency", "2"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**env, "OPENAI_API_KEY": KEY},
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while server.stats.replies < 60 and time.monotonic() < deadline:
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        kept = stored_calls(tmp_path / "aligned")
        assert kept >= 40
        before = server.stats.requests
        done = run_cli(*align_args(tmp_path, server), key=KEY)
        assert done.returncode in (0, 3), done.stderr
        sent = server.stats.requests - before
        assert sent == stored_calls(tmp_path / "aligned") - kept


def test_python_align_with_function_judge_and_optimizer(tmp_path: Path) -> None:
    rows = standin.rows(100)
    run = tmp_path / "run"
    chatjudge.evaluate(rows, "pairwise-chat-quality", judge=standin.judge, out=run, flip=False,
                       report=False)  # fmt: skip
    labels = tmp_path / "labels.jsonl"
    # Two raters a row: the policy, and a second who agrees with it on half the rows.
    labels.write_text("".join(
        json.dumps({"id": r["id"], "label": label})+ "\n"
        for r in rows for label in (standin.policy(r["id"]), standin.noise(r["id"]))
    ), encoding="utf-8")  # fmt: skip
    a = chatjudge.align(run, human=labels, optimizer=standin.write_rules, judge=standin.judge,
                        out=tmp_path / "aligned")  # fmt: skip
    assert isinstance(a, Alignment) and a.optimizer == "python/write_rules"
    assert a.human_ceiling is not None and a.human_ceiling.n_rows == 100
    assert 0.3 < a.human_ceiling.agreement < 0.7
    # The judge already agrees with the humans as well as they agree with each other.
    assert any("as well as they agree with each other" in w for w in a.warnings)


@pytest.mark.parametrize(("improved", "passes"), [(5, False), (6, True)])
def test_the_held_out_interval_needs_the_exact_sign_test(improved: int, passes: bool) -> None:
    """5 rows better and none worse in 40: a percentile bootstrap's lower end is above 0,
    but the exact one-sided p is 0.031, so no gain is shown; 6 (p = 0.016) is one."""
    ids = [f"r{k}" for k in range(40)]
    labels = {i: ["CANDIDATE"] for i in ids}
    before = {i: {"pairwise_choice": "BASELINE" if k < improved else "CANDIDATE"}
              for k, i in enumerate(ids)}  # fmt: skip
    after = {i: {"pairwise_choice": "CANDIDATE"} for i in ids}
    d = held_out_difference(before, after, labels, "pairwise_choice", ids)
    assert d.improved == improved and d.regressed == 0
    assert (d.ci95[0] > 0) is passes
    boot = np.random.default_rng(0).choice(np.r_[np.ones(improved), np.zeros(40 - improved)],
                                           size=(2000, 40)).mean(axis=1)  # fmt: skip
    assert np.percentile(boot, 2.5) > 0  # what a percentile bootstrap would claim


def test_a_run_scored_without_a_judge_has_nothing_to_align(tmp_path: Path) -> None:
    examples = Path(__file__).resolve().parents[3] / "examples"
    run_dir = tmp_path / "scored"
    done = run_cli("run", str(examples / "tool_calls.jsonl"), "-p", "tool-trajectory",
                   "--out", str(run_dir), "--quiet")  # fmt: skip
    assert done.returncode == 0, done.stderr
    ids = [json.loads(line)["id"] for line in (run_dir / "results.jsonl").open()]
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"id": i, "trajectory_match": 1}) + "\n" for i in ids))
    done = run_cli("align", str(run_dir), "--human", str(labels), "--optimizer", "local",
                   "--out", str(tmp_path / "aligned"))  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "calls no judge: there is no judge prompt to align" in done.stderr
    assert not (tmp_path / "aligned").exists()
