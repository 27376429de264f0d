"""The command line through a real process: exit statuses, validation before sending,
resuming after SIGKILL, and secrets that never reach a file or a log."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chatjudge.__about__ import __version__
from chatjudge.chat.types import Reply
from chatjudge.options import OVERWRITE_HELP
from chatjudge.protocols import get_protocol
from tests.runner.conftest import pointwise_rows, read_results, write_jsonl
from tests.support.cli import run_cli
from tests.support.protocols import POLITE
from tests.support.stub_openai import StubServer

SECRET = "sk-test-DO-NOT-LEAK-4f9c2b"


def _judge(stub: StubServer, data: Path, out: Path, *extra: str, key: str | None = None):
    return run_cli(
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
        "--retry-wait",
        "0.01",
        *extra,
        key=key,
    )


def test_success_exit_0_and_outputs(stub: StubServer, tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", pointwise_rows(6))
    done = _judge(stub, data, tmp_path / "run")
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["n_items"] == 6 and summary["n_ok"] == 6
    assert {"interactivity", "itr", "accuracy"} <= set(summary["metrics"])
    assert "accuracy" in done.stdout  # the summary table
    # The page built while the run went on is the one `report` rebuilds from the files.
    built = (tmp_path / "run" / "report.html").read_bytes()
    again = run_cli("report", str(tmp_path / "run"))
    assert again.returncode == 0 and "accuracy" in again.stdout
    assert (tmp_path / "run" / "report.html").read_bytes() == built
    assert run_cli("report", str(tmp_path / "nowhere")).returncode == 2


def test_a_path_with_an_emoji_code_is_printed_as_it_is(stub: StubServer, tmp_path: Path) -> None:
    """rich would print `:thumbs_up:` as a thumbs-up sign (loading its table of codes)."""
    folder = tmp_path / "a:thumbs_up:b"
    folder.mkdir()
    data = write_jsonl(folder / "d.jsonl", pointwise_rows(2))
    done = _judge(stub, data, folder / "run")
    assert done.returncode == 0, done.stderr
    printed = done.stderr.replace("\n", "")  # a long path is folded over lines
    assert f"{data} with" in printed and f"{folder / 'run' / 'results.jsonl'}" in printed
    assert "\N{THUMBS UP SIGN}" not in printed


def test_failed_items_exit_1(stub: StubServer, tmp_path: Path) -> None:
    stub.configure(permanent={"POISON": "503"})
    data = write_jsonl(tmp_path / "d.jsonl", pointwise_rows(3, marker="POISON"))
    done = _judge(stub, data, tmp_path / "run", "--max-retries", "1")
    assert done.returncode == 1
    assert read_results(tmp_path / "run")["item-0000"]["error"].startswith("ServerError")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"chat": "x", "question": "q"}\n', "row 1, field 'answer': missing required field"),
        (
            '{"chat": "x", "question": "q", "answer": "a"}\nnot json\n',
            "row 2, field '(row)': unparseable JSON line",
        ),
        (
            '{"chat": [{"role": "bot", "content": "x"}], "question": "q", "answer": "a"}\n',
            "row 1, field 'chat': message 1: unknown role 'bot'",
        ),
        (
            '{"chat": 5.5, "question": ["q"], "answer": "a"}\n',
            "row 1, field 'question': expected a string, got a list",
        ),
        *(  # too deep for `json` (a RecursionError once), and too deep for a record
            (
                '{"chat": "x", "question": "q", "answer": "a"}\n'
                f'{{"chat": "x", "question": "q", "answer": {"[" * depth}{"]" * depth}}}\n',
                "row 2, field '(row)': unparseable JSON line: nested more than 200 levels deep",
            )
            for depth in (10_000, 1_000)
        ),
    ],
)
def test_invalid_data_exit_2_and_nothing_sent(
    stub: StubServer, tmp_path: Path, content: str, message: str
) -> None:
    data = tmp_path / "bad.jsonl"
    data.write_text(content)
    done = _judge(stub, data, tmp_path / "run")
    assert done.returncode == 2
    assert message in done.stderr and "nothing was sent" in done.stderr
    assert "Traceback" not in done.stderr
    assert stub.stats.requests == 0
    assert not (tmp_path / "run").exists()


def test_bad_usage_exit_2(stub: StubServer, tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", pointwise_rows(1))
    assert "unknown protocol" in run_cli("run", str(data), "-p", "nope").stderr
    assert run_cli("run", str(data), "-p", "nope").returncode == 2
    done = run_cli("run", str(data), "-p", "interactivity-accuracy", "-j", "acme/x")
    assert done.returncode == 2 and "unknown judge provider 'acme'" in done.stderr
    done = run_cli("run", str(data), "-p", "interactivity-accuracy", "--map", "oops")
    assert done.returncode == 2 and "COLUMN=FIELD" in done.stderr
    assert stub.stats.requests == 0


def test_map_renames_columns(stub: StubServer, tmp_path: Path) -> None:
    rows = [
        {("conversation" if k == "chat" else k): v for k, v in r.items()} for r in pointwise_rows(2)
    ]
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    assert _judge(stub, data, tmp_path / "r1").returncode == 2
    done = _judge(stub, data, tmp_path / "r2", "--map", "conversation=chat")
    assert done.returncode == 0, done.stderr


def test_auth_failure_stops_the_run_and_the_key_never_leaks(
    stub: StubServer, tmp_path: Path
) -> None:
    stub.configure(api_key="the-right-key")
    data = write_jsonl(tmp_path / "d.jsonl", pointwise_rows(20))
    done = _judge(stub, data, tmp_path / "run", "--concurrency", "1", key=SECRET)
    assert done.returncode == 2
    assert "AuthError" in done.stderr or "HTTP 401" in done.stderr
    assert stub.stats.requests < 5  # stopped, not retried 20 times
    assert SECRET not in done.stderr + done.stdout


def test_the_api_key_is_never_written(stub: StubServer, tmp_path: Path) -> None:
    stub.configure(api_key=SECRET, record=True)
    data = write_jsonl(tmp_path / "d.jsonl", pointwise_rows(3))
    done = _judge(stub, data, tmp_path / "run", key=SECRET)
    assert done.returncode == 0, done.stderr
    assert stub.stats.last_request["headers"]["Authorization"] == f"Bearer {SECRET}"
    assert SECRET not in done.stdout + done.stderr
    for path in (tmp_path / "run").iterdir():
        assert SECRET.encode() not in path.read_bytes(), path.name


def test_sigkill_halfway_then_rerun_sends_only_what_is_missing(
    stub: StubServer, tmp_path: Path
) -> None:
    stub.configure(latency=0.05)
    rows = pointwise_rows(120)
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    out = tmp_path / "run"
    args = [
        "run",
        str(data),
        "-p",
        "interactivity-accuracy",
        "-j",
        "openai/stub",
        "--base-url",
        stub.base_url,
        "--out",
        str(out),
        "--concurrency",
        "4",
        "--quiet",
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "chatjudge.cli", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    results = out / "results.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if results.exists() and len(results.read_text().splitlines()) >= 40:
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    finished = [json.loads(line) for line in results.read_text().splitlines() if line.endswith("}")]
    assert 40 <= len(finished) < 120
    before = stub.stats.requests
    done = run_cli(*args)
    assert done.returncode == 0, done.stderr
    # Every item finished before the kill was answered from the store, not sent again.
    protocol = get_protocol("interactivity-accuracy")
    from chatjudge.data import Source, iter_items

    prompts = {i.id: protocol.render(i.text) for i in iter_items(Source(rows), protocol.fields)}
    assert all(stub.stats.sends_of(prompts[r["id"]]) == 1 for r in finished)
    # Only what was missing was sent (items in flight at the kill may be sent twice).
    assert stub.stats.requests - before <= 120 - len(finished)
    assert stub.stats.requests <= 120 + 4
    final = read_results(out)
    assert len(final) == 120 and all(r["status"] == "ok" for r in final.values())


def test_prompt_prints_the_exact_prompt(tmp_path: Path) -> None:
    rows = pointwise_rows(2)
    rows[1]["answer"] = "{answer} and a lone { brace"
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    done = run_cli("prompt", str(data), "-p", "interactivity-accuracy", "--row", "2")
    assert done.returncode == 0
    assert "Ground Truth Answer: {answer} and a lone { brace" in done.stdout
    assert "**user**: Question 1:" in done.stdout
    assert (
        run_cli("prompt", str(data), "-p", "interactivity-accuracy", "--row", "3").returncode == 2
    )


TOOL_ROW = {
    "id": "t1",
    "prompt": "Weather in Oslo?",
    "baseline_model_response": "Cold.",
    "response": "It is -3 C.",
    "response_trajectory": [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "-3 C, snow"},
        {"role": "assistant", "content": "It is -3 C."},
    ],
}
SHOWN_TRAJECTORY = (
    '**assistant** called get_weather({"city": "Oslo"})\n'
    "**tool** (get_weather) returned: -3 C… [cut 6 of 10 characters]\n"
    "**assistant**: It is -3 C."
)


def test_prompt_shows_a_responses_tool_calls_as_asked(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", [TOOL_ROW])
    args = ("prompt", str(data), "-p", "pairwise-chat-quality")
    shown = run_cli(*args, "--tool-result-chars", "4")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.endswith("### Response B\n" + SHOWN_TRAJECTORY + "\n\n")
    final = run_cli(*args, "--judge-sees", "final")
    assert final.stdout.endswith("### Response B\nIt is -3 C.\n\n")
    bad = run_cli(*args, "--tool-result-chars", "0", COLUMNS="300")
    assert bad.returncode == 2 and "tool_result_chars (--tool-result-chars)" in bad.stderr


def test_run_sends_the_judge_the_trajectory_as_its_options_render_it(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", [TOOL_ROW])
    protocol = get_protocol("pairwise-chat-quality")
    texts = {"history": "", "prompt": "Weather in Oslo?", "baseline_model_response": "Cold."}
    with StubServer() as stub:
        for n, (extra, cut) in enumerate(((["--tool-result-chars", "4"], True), ([], False))):
            done = run_cli(
                "run", str(data), "-p", "pairwise-chat-quality", "-j", "openai/stub",
                "--base-url", stub.base_url, "--no-flip", "--out", str(tmp_path / f"run{n}"),
                *extra, key="dummy",
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
            shown = (
                SHOWN_TRAJECTORY
                if cut
                else SHOWN_TRAJECTORY.replace("-3 C… [cut 6 of 10 characters]", "-3 C, snow")
            )
            assert stub.stats.sends_of(protocol.render({**texts, "response": shown})) == 1
        assert stub.stats.requests == 2


def test_protocols_lists_both_with_fields() -> None:
    done = run_cli("protocols")
    assert done.returncode == 0
    for text in (
        "interactivity-accuracy",
        "pairwise-chat-quality",
        "chat_history",
        "baseline_model_response",
        "tool-trajectory (no judge)",
        "expected_tool_calls",
    ):
        assert text in done.stdout


def test_a_second_run_on_a_busy_directory_exits_2(stub: StubServer, tmp_path: Path) -> None:
    from chatjudge.store import Store

    data = write_jsonl(tmp_path / "d.jsonl", pointwise_rows(2))
    busy = Store(tmp_path / "run" / "calls.sqlite")
    busy.put("k", "j", Reply("r"), 0.1)
    done = _judge(stub, data, tmp_path / "run")
    busy.close()
    assert done.returncode == 2 and "in use by another chatjudge run" in done.stderr
    assert stub.stats.requests == 0


@pytest.fixture
def restored_gc():
    threshold = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)


def test_run_collects_garbage_less_often_in_its_own_process(
    stub: StubServer, tmp_path: Path, restored_gc: None
) -> None:
    """In-process, to see the collector's settings the command leaves behind."""
    from typer.testing import CliRunner

    from chatjudge.cli import app

    gc.unfreeze()
    data = write_jsonl(tmp_path / "d.jsonl", pointwise_rows(3))
    args = ["run", str(data), "-p", "interactivity-accuracy", "--judge", "openai/stub"]
    args += ["--base-url", stub.base_url, "--out", str(tmp_path / "run"), "-q"]
    done = CliRunner().invoke(app, args, env={"OPENAI_API_KEY": "dummy"})
    assert done.exit_code == 0, done.output
    assert gc.get_threshold()[0] == 10_000
    assert gc.get_freeze_count() > 0  # start-up objects are out of the collector's way


def test_skip_invalid_judges_the_valid_rows_and_lists_the_others(
    stub: StubServer, tmp_path: Path
) -> None:
    rows = pointwise_rows(4)
    rows[1]["chat"] = 42  # a conversation is text or messages
    del rows[3]["question"]
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    assert _judge(stub, data, tmp_path / "strict").returncode == 2
    assert stub.stats.requests == 0
    done = _judge(stub, data, tmp_path / "run", "--skip-invalid")
    assert done.returncode == 1, done.stderr
    assert "2 invalid row(s) skipped" in done.stderr
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert (summary["n_items"], summary["n_ok"], summary["n_skipped"]) == (2, 2, 2)
    assert summary["skipped"] == [
        {"row": 2, "field": "chat", "message": "expected a string or a list of messages, got int"},
        {"row": 4, "field": "question", "message": "missing required field"},
    ]
    assert set(read_results(tmp_path / "run")) == {"item-0000", "item-0002"}
    page = (tmp_path / "run" / "report.html").read_text()
    assert "2 invalid row(s) skipped" in page and "missing required field" in page


def test_prompt_row_0_says_rows_count_from_1() -> None:
    data = Path(__file__).parents[2] / "examples" / "interactivity_accuracy.jsonl"
    done = run_cli("prompt", str(data), "-p", "interactivity-accuracy", "--row", "0")
    assert done.returncode == 2
    assert "rows are numbered from 1" in done.stderr


N = 14  # items judged, each ~0.3 s of CPU: the first block is written after 3 of them
# The ids are not in the prompt: ~1.5 KB ids make a results line of ~3.5 KB (the id is in it
# twice), so the first 8 KB block is written after 3 items, not 16, with 11 still to judge.
PADDED_ID = "-" + "x" * 1500


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def test_a_local_worker_killed_by_sigsegv_stops_the_run_cleanly_and_it_resumes(
    tmp_path: Path,
) -> None:
    """A native crash in llama.cpp is an error naming the signal, the model and the fix; what
    finished stays in results.jsonl and the store; exit 1; the same command then resumes.
    Calls of ~50 prompt tokens and a one-number verdict (~0.3 s of CPU each, where a
    built-in template's ~1,000 tokens cost 10 s): enough of them to fill the first 8 KB."""
    protocol = tmp_path / "polite.toml"
    protocol.write_text(POLITE, encoding="utf-8")
    rows = [
        {"id": f"r{i:02d}{PADDED_ID}", "response": f"Thanks for asking: it is {i}."}
        for i in range(N)
    ]
    data = write_jsonl(tmp_path / "replies.jsonl", rows)
    out = tmp_path / "run"
    args = ["run", str(data), "-p", str(protocol), "--judge", "local"]
    args += ["--local-workers", "2", "--out", str(out), "--quiet"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "chatjudge.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    results = out / "results.jsonl"
    deadline = time.monotonic() + 240
    while not (results.exists() and results.stat().st_size) and time.monotonic() < deadline:
        time.sleep(0.05)  # results are written in 8 KB blocks: a few items are done
    workers = _children(proc.pid)
    assert len(workers) == 2
    os.kill(workers[0], signal.SIGSEGV)
    stdout, stderr = proc.communicate(timeout=240)
    assert proc.returncode == 1, stderr
    assert "killed by SIGSEGV (a segmentation fault)" in stderr
    assert "SmolLM2-135M-Instruct.Q4_1.gguf" in stderr and "CMAKE_ARGS=" in stderr
    finished = [json.loads(line) for line in results.read_text().splitlines()]
    assert 1 <= len(finished) < N and all(r["status"] == "ok" for r in finished)
    assert f"{len(finished)} finished item(s) are kept" in stderr
    with contextlib.closing(sqlite3.connect(out / "calls.sqlite")) as db:
        assert db.execute("SELECT count(*) FROM calls").fetchone()[0] >= len(finished)

    done = run_cli(*args)
    assert done.returncode == 0, done.stderr
    again = read_results(out)
    assert len(again) == N
    assert all(again[r["id"]]["calls"][0]["cached"] for r in finished)
    assert all(again[r["id"]]["scores"] == r["scores"] for r in finished)


def test_version_prints_the_package_version() -> None:
    done = run_cli("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"chatjudge {__version__}\n"


def help_text(command: str) -> str:
    """`chatjudge COMMAND --help` as one line of words, without the panels' borders."""
    done = run_cli(command, "--help", COLUMNS="200")
    assert done.returncode == 0, done.stderr
    return " ".join(done.stdout.replace("│", " ").split())


def test_base_url_help_names_the_model_each_command_calls() -> None:
    assert "--base-url <list[str]> The judges' endpoint" in help_text("run")
    generate = help_text("generate")
    assert "--base-url <list[str]> The endpoint of the model under test" in generate
    for command in ("generate", "simulate"):
        assert "judge endpoint" not in help_text(command).lower()


@pytest.mark.parametrize("command", ["run", "generate", "simulate", "import", "merge", "gate"])
def test_every_command_that_writes_takes_overwrite_with_one_help(command: str) -> None:
    assert f"--overwrite {OVERWRITE_HELP}" in help_text(command)


def test_paths_with_brackets_are_printed_as_they_are(tmp_path: Path) -> None:
    """A run directory named like rich markup ("[/x]", "[bold]") is printed whole: brackets
    are text, not styles, and a closing tag with no opening one does not crash the run."""
    examples = Path(__file__).resolve().parents[2] / "examples"
    out = tmp_path / "[/x] [bold]" / "run"
    done = run_cli("run", str(examples / "tool_calls.jsonl"), "-p", "tool-trajectory",
                   "--out", str(out), COLUMNS="400")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"-> {out}\n" in done.stderr
    assert f"results: {out / 'results.jsonl'}\n" in done.stderr
    assert f"report:  {out / 'report.html'}" in done.stderr
