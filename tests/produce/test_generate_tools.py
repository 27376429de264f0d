"""`chatjudge generate` with tools: the model under test (the stand-in OpenAI server, which
calls the first tool it is offered `tool_steps` times, then quotes the results) has its
calls answered by `--tool-replay` or `--tools MODULE:OBJECT`, turn by turn up to
`--max-tool-steps`; every step in the store; the output judged as it is."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from contextlib import closing
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

import chatjudge
from chatjudge.calls.run_sync import run_sync
from chatjudge.errors import UsageError
from chatjudge.options import RunConfig
from chatjudge.produce import build_generation
from chatjudge.protocols import get_protocol
from chatjudge.report.terminal import produced_table
from tests.support.cli import run_cli, run_process
from tests.support.stub_openai import StubServer

chatjudge_cli = partial(run_cli, key="dummy")
# The user's module is found on PYTHONPATH, which a process reads as it starts.
chatjudge_process = partial(run_process, key="dummy")
PRICES = ("--price-in", "100", "--price-out", "200")


@pytest.fixture(autouse=True)
def _openai_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def call(ident: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": ident, "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}  # fmt: skip


def recorded_row(i: int, *, steps: int = 2, offset: int = 0) -> dict[str, Any]:
    """A row whose production assistant called `search` `steps` times with the arguments
    the stand-in writes for its prompt (step + `offset`: 0 matches, else none does), the
    results in `baseline_trajectory`; its history holds an earlier call with a result."""
    prompt = f"Row {i}: what is the weather in city {i}?"
    trajectory: list[dict[str, Any]] = []
    for step in range(1, steps + 1):
        # keys in another order and other spacing than the stand-in's: canonical JSON matches
        args = {"step": step + offset, "query": prompt}
        trajectory.append({"role": "assistant", "content": "",
                           "tool_calls": [call(f"b{i}-{step}", "search", args)]})  # fmt: skip
        trajectory.append({"role": "tool", "tool_call_id": f"b{i}-{step}",
                           "content": f"RESULT-{i}-{step}"})  # fmt: skip
    trajectory.append({"role": "assistant", "content": f"Baseline answer {i}."})
    return {
        "id": f"t{i}",
        "history": [
            {"role": "user", "content": "Hello"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [call(f"h{i}", "search", {"query": "Hello", "step": 1})],
            },
            {"role": "tool", "tool_call_id": f"h{i}", "content": "EARLIER"},
            {"role": "assistant", "content": "Hi!"},
        ],  # fmt: skip
        "prompt": prompt,
        "baseline_trajectory": trajectory,
        "baseline_model_response": f"Baseline answer {i}.",
    }


def plain_row(i: int) -> dict[str, Any]:
    return {"id": f"p{i}", "history": [{"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello!"}], "prompt": f"Plain question {i}?",
            "baseline_model_response": "Plain."}  # fmt: skip


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def summary_of(rows_path: Path) -> dict[str, Any]:
    return json.loads(rows_path.with_name(rows_path.stem + ".summary.json").read_text())


def tools_module(tmp_path: Path, body: str) -> str:
    """A module of the user's tool functions in `tmp_path`, under a name of its own."""
    name = f"user_tools_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(body, encoding="utf-8")
    return name


def with_path(tmp_path: Path) -> str:
    """PYTHONPATH for a CLI run that imports a module written in `tmp_path`."""
    return os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))


# --- --tool-replay ---------------------------------------------------------------------------


def test_replay_answers_with_the_recorded_results_and_a_rerun_sends_nothing(
    stub: StubServer, tmp_path: Path
) -> None:
    rows = [recorded_row(0), plain_row(0), recorded_row(1), plain_row(1)]
    data = write_jsonl(tmp_path / "rows.jsonl", rows)
    out = chatjudge.generate(data, "openai/stub", "response", tmp_path / "out.jsonl",
                             base_url=stub.base_url, tool_replay=True)  # fmt: skip
    assert stub.stats.requests == 2 * 3 + 2  # 3 steps per row with tools, 1 per plain row
    written = read_jsonl(out)
    for i in (0, 1):
        row = written[2 * i]
        prompt = rows[2 * i]["prompt"]
        final = f"From the tool: RESULT-{i}-1 | RESULT-{i}-2"
        assert row["response"] == final and row["response_ended"] == "final"
        trajectory = row["response_trajectory"]
        assert [m["role"] for m in trajectory] == ["assistant", "tool"] * 2 + ["assistant"]
        calls = [m["tool_calls"][0] for m in trajectory[0:4:2]]
        assert [json.loads(c["function"]["arguments"]) for c in calls] == [
            {"query": prompt, "step": 1}, {"query": prompt, "step": 2}
        ]  # fmt: skip
        assert [m["tool_call_id"] for m in trajectory[1:4:2]] == [c["id"] for c in calls]
        assert trajectory[-1] == {"role": "assistant", "content": final}
        assert row["usage"]["response"]["calls"] == 3
        assert row["baseline_trajectory"] == rows[2 * i]["baseline_trajectory"]
    # Rows without tools: no new field, written as a generate without tools writes them.
    plain = write_jsonl(tmp_path / "plain.jsonl", [plain_row(0), plain_row(1)])
    alone = chatjudge.generate(plain, "openai/stub", "response", tmp_path / "alone.jsonl",
                               base_url=stub.base_url)  # fmt: skip
    lines, alone_lines = out.read_text().splitlines(), alone.read_text().splitlines()
    assert [lines[1], lines[3]] == alone_lines
    summary = summary_of(out)
    assert (summary["tool_steps"], summary["unmatched_tool_calls"], summary["tool_errors"]) == (
        6, 0, 0
    )  # fmt: skip
    assert summary_of(alone)["tool_steps"] == 0

    # The model was sent the history's tool call and result, and offered the row's tools
    # (derived from its calls: the rows have no `tools` column).
    stub.configure(record=True)
    stub.stats.reset()
    first = out.read_bytes()
    again = chatjudge.generate(data, "openai/stub", "response", tmp_path / "out.jsonl",
                               base_url=stub.base_url, tool_replay=True)  # fmt: skip
    assert stub.stats.requests == 0 and again.read_bytes() == first
    chatjudge.generate(data, "openai/stub", "response", tmp_path / "fresh.jsonl",
                       base_url=stub.base_url, tool_replay=True, limit=1)  # fmt: skip
    body = stub.stats.recorded[0]["body"]
    assert body["messages"][1]["tool_calls"][0]["id"] == "h0"
    assert body["messages"][2] == {"role": "tool", "tool_call_id": "h0", "content": "EARLIER"}
    assert body["tools"] == [{"type": "function", "function": {
        "name": "search", "description": "", "parameters": {"type": "object"}}}]  # fmt: skip


def test_a_call_without_a_recorded_result_is_told_so_and_counted(
    stub: StubServer, tmp_path: Path
) -> None:
    rows = [recorded_row(0, offset=10), recorded_row(1, steps=1)]  # none match; one matches
    out = chatjudge.generate(rows, "openai/stub", "response", tmp_path / "out.jsonl",
                             base_url=stub.base_url, tool_replay=True)  # fmt: skip
    first, second = read_jsonl(out)
    told = [m["content"] for m in first["response_trajectory"] if m["role"] == "tool"]
    assert len(told) == 2
    assert all(t.startswith("no recorded result: the recording holds no call of search")
               for t in told)  # fmt: skip
    assert first["response"] == "From the tool: " + " | ".join(told)
    told = [m["content"] for m in second["response_trajectory"] if m["role"] == "tool"]
    assert told[0] == "RESULT-1-1" and told[1].startswith("no recorded result")
    summary = summary_of(out)
    assert summary["unmatched_tool_calls"] == 3
    console = Console(record=True, width=160, color_system=None)
    console.print(produced_table(summary))
    rows = [[c.strip() for c in line.strip("│").split("│")]
            for line in console.export_text().splitlines()]  # fmt: skip
    assert ["tool steps", str(summary["tool_steps"]), "model calls", ""] in rows
    assert ["unmatched tool calls", "3", "no recorded result to replay", ""] in rows
    assert not any(r[0] == "tool errors" for r in rows)  # none: not shown


# --- --tools MODULE:OBJECT -------------------------------------------------------------------

USER_TOOLS = """
import asyncio, time

def sync_tool(query, step):
    return f"sync {step}: {query[:6]}"

async def async_tool(query, step):
    await asyncio.sleep(0.01)
    return {"step": step, "async": True}

def raising_tool(query, step):
    raise ValueError(f"no data for step {step}")

def hanging_tool(query, step):
    time.sleep(60)

TOOLS = {"sync_tool": sync_tool, "async_tool": async_tool, "raising_tool": raising_tool,
         "hanging_tool": hanging_tool}
"""


def test_user_functions_answer_sync_async_and_their_failures_go_back_to_the_model(
    stub: StubServer, tmp_path: Path
) -> None:
    """Each row offers one tool first (the stand-in calls it twice): sync, async, raising,
    hanging past --tool-timeout, and a name the dict does not hold. The command, its
    own process, ends although a function still hangs in its thread."""
    module = tools_module(tmp_path, USER_TOOLS)
    names = ["sync_tool", "async_tool", "raising_tool", "hanging_tool", "unknown_tool"]
    rows = [
        {
            "id": name,
            "prompt": f"Question for {name}",
            "tools": [{"name": name, "parameters": {"type": "object"}}],
        }
        for name in names
    ]
    data = write_jsonl(tmp_path / "rows.jsonl", rows)
    out = tmp_path / "out.jsonl"
    started = time.monotonic()
    done = chatjudge_process(
        "generate", str(data), "-m", "openai/stub", "--base-url", stub.base_url,
        "--out", str(out), "--tools", f"{module}:TOOLS", "--tool-timeout", "0.5",
        PYTHONPATH=with_path(tmp_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 30  # not held by the hanging thread (60 s)
    results = {
        row["id"]: [m["content"] for m in row["response_trajectory"] if m["role"] == "tool"]
        for row in read_jsonl(out)
    }
    assert results["sync_tool"] == ["sync 1: Questi", "sync 2: Questi"]
    assert results["async_tool"] == ['{"step": 1, "async": true}', '{"step": 2, "async": true}']
    assert results["raising_tool"] == [
        "error: ValueError: no data for step 1", "error: ValueError: no data for step 2"
    ]  # fmt: skip
    assert results["hanging_tool"] == ["error: hanging_tool timed out after 0.5 s"] * 2
    assert (
        results["unknown_tool"]
        == [
            "error: no tool named 'unknown_tool' (tools: async_tool, hanging_tool, raising_tool, "
            "sync_tool)"
        ]
        * 2
    )
    for row in read_jsonl(out):
        assert row["response"] == "From the tool: " + " | ".join(results[row["id"]])
    summary = summary_of(out)
    assert summary["tool_errors"] == 6 and summary["tool_steps"] == 15
    assert summary["unmatched_tool_calls"] == 0


PLAIN_TOOLS = '''
def search(query: str, step: int) -> str:
    """Look something up."""
    return f"found {step}"

TOOLS = {"search": search}
'''


def test_user_functions_are_offered_to_rows_without_tools_as_simulate_offers_them(
    stub: StubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows without a tools column (nor calls) are offered definitions made from the
    functions; a row's own tools still win; a model that cannot be offered tools is refused."""
    module = tools_module(tmp_path, PLAIN_TOOLS)
    monkeypatch.syspath_prepend(str(tmp_path))
    stub.configure(record=True)
    own = {**plain_row(1), "tools": [{"name": "lookup", "parameters": {"type": "object"}}]}
    out = chatjudge.generate([plain_row(0), own], "openai/stub", "response",
                             tmp_path / "out.jsonl", base_url=stub.base_url,
                             tools=f"{module}:TOOLS")  # fmt: skip
    plain, with_own = read_jsonl(out)
    assert [m["content"] for m in plain["response_trajectory"] if m["role"] == "tool"] == [
        "found 1", "found 2"
    ]  # fmt: skip
    assert plain["response"] == "From the tool: found 1 | found 2"
    assert plain["response_ended"] == "final"
    offered = {
        body["messages"][-1]["content"]: [t["function"] for t in body["tools"]]
        for body in (r["body"] for r in stub.stats.recorded)
        if body["messages"][-1]["role"] == "user"
    }
    assert offered["Plain question 0?"] == [
        {
            "name": "search",
            "description": "Look something up.",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}, "step": {"type": "integer"}},
                "required": ["query", "step"],
            },
        }
    ]
    assert [f["name"] for f in offered["Plain question 1?"]] == ["lookup"]
    assert with_own["response_trajectory"][1]["content"].startswith("error: no tool named 'lookup'")
    assert summary_of(out)["tool_steps"] == 6
    local = run_cli("generate", str(write_jsonl(tmp_path / "plain.jsonl", [plain_row(0)])),
                    "-m", "local", "--out", str(tmp_path / "l.jsonl"), "--tools",
                    f"{module}:TOOLS")  # fmt: skip
    assert local.returncode == 2
    assert "--tools: local cannot be offered tools" in local.stderr


# --- the cap, and what the judge sees --------------------------------------------------------


def test_the_cap_ends_a_turn_on_its_calls_and_the_judge_sees_calls_arguments_and_results(
    stub: StubServer, tmp_path: Path
) -> None:
    rows = [recorded_row(0), recorded_row(1)]
    data = write_jsonl(tmp_path / "rows.jsonl", rows)
    stub.configure(tool_steps=5)  # row 1 would call 5 times: the cap of 2 cuts it
    capped = tmp_path / "capped.jsonl"
    done = chatjudge_cli("generate", str(data), "-m", "openai/stub", "--base-url",
                         stub.base_url, "--out", str(capped), "--tool-replay",
                         "--max-tool-steps", "2")  # fmt: skip
    assert done.returncode == 0, done.stderr
    row = read_jsonl(capped)[0]
    assert row["response_ended"] == "max_tool_steps" and row["response"] == ""
    assert [m["role"] for m in row["response_trajectory"]] == ["assistant", "tool", "assistant"]
    assert row["response_trajectory"][-1]["tool_calls"]  # ends on a call without a result
    assert summary_of(capped)["tool_steps"] == 4

    stub.configure(tool_steps=2)
    full = tmp_path / "full.jsonl"
    assert chatjudge_cli("generate", str(data), "-m", "openai/stub", "--base-url",
                         stub.base_url, "--out", str(full),
                         "--tool-replay").returncode == 0  # fmt: skip
    protocol = get_protocol("pairwise-chat-quality")
    with StubServer() as judge:
        for path in (capped, full):
            judged = chatjudge_cli("run", str(path), "-p", "pairwise-chat-quality", "-j",
                                   "openai/stub", "--base-url", judge.base_url, "--no-flip",
                                   "--out", str(tmp_path / f"run-{path.stem}"))  # fmt: skip
            assert judged.returncode == 0, judged.stderr
        prompt = rows[0]["prompt"]
        args = [json.dumps({"query": prompt, "step": n}) for n in (1, 2)]
        candidate = (
            f"**assistant** called search({args[0]})\n"
            f"**tool** (search) returned: RESULT-0-1\n"
            f"**assistant** called search({args[1]})\n"
            f"**tool** (search) returned: RESULT-0-2\n"
            f"**assistant**: From the tool: RESULT-0-1 | RESULT-0-2"
        )
        baseline = (
            f"**assistant** called search({args[0]})\n**tool** (search) returned: RESULT-0-1\n"
            f"**assistant** called search({args[1]})\n**tool** (search) returned: RESULT-0-2\n"
            "**assistant**: Baseline answer 0."
        )
        history = (
            "**user**: Hello\n"
            + '**assistant** called search({"query": "Hello", "step": 1})\n'
            + "**tool** (search) returned: EARLIER\n**assistant**: Hi!"
        )
        texts = {"history": history, "prompt": prompt, "baseline_model_response": baseline}
        assert judge.stats.sends_of(protocol.render({**texts, "response": candidate})) == 1
        cut = f"**assistant** called search({args[0]})\n**tool** (search) returned: RESULT-0-1\n"
        cut += f"**assistant** called search({args[1]})"
        assert judge.stats.sends_of(protocol.render({**texts, "response": cut})) == 1
        assert judge.stats.requests == 4


# --- resuming --------------------------------------------------------------------------------


def test_a_killed_run_resumes_from_the_last_committed_step(tmp_path: Path) -> None:
    """SIGKILL mid-loop, then the same command: only the steps the store does not hold are
    sent (those in flight at the kill among them), and the file equals an uninterrupted
    run's."""
    rows = [recorded_row(i) for i in range(12)]
    data = write_jsonl(tmp_path / "rows.jsonl", rows)
    with StubServer(latency=0.15) as stub:
        args = [
            sys.executable, "-m", "chatjudge.cli", "generate", str(data), "-m", "openai/stub",
            "--base-url", stub.base_url, "--tool-replay", "--concurrency", "6", "--quiet",
        ]  # fmt: skip
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
        env["OPENAI_API_KEY"] = "dummy"
        out = tmp_path / "out.jsonl"
        proc = subprocess.Popen([*args, "--out", str(out)], env=env)
        deadline = time.monotonic() + 60
        while stub.stats.requests < 14 and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        store = out.with_name("out.calls.sqlite")
        with closing(sqlite3.connect(store)) as db:
            committed = db.execute("select count(*) from calls").fetchone()[0]
        assert 6 <= committed < 36  # some rows' first steps, not every step
        before = stub.stats.requests
        done = subprocess.run([*args, "--out", str(out)], env=env, capture_output=True)
        assert done.returncode == 0, done.stderr
        assert stub.stats.requests - before == 36 - committed
        fresh = subprocess.run([*args, "--out", str(tmp_path / "fresh.jsonl")], env=env,
                               capture_output=True)  # fmt: skip
        assert fresh.returncode == 0
    assert out.read_bytes() == (tmp_path / "fresh.jsonl").read_bytes()
    assert all(r["response_ended"] == "final" for r in read_jsonl(out))


# --- the dry run -----------------------------------------------------------------------------


def test_a_dry_run_counts_one_step_to_the_cap_per_row_with_tools(
    stub: StubServer, tmp_path: Path
) -> None:
    data = write_jsonl(tmp_path / "rows.jsonl", [recorded_row(i) for i in range(3)]
                       + [plain_row(0), plain_row(1)])  # fmt: skip
    args = ("generate", str(data), "-m", "openai/stub", "--base-url", stub.base_url,
            "--out", str(tmp_path / "out.jsonl"), "--tool-replay", "--max-tool-steps", "4",
            *PRICES)  # fmt: skip
    dry = chatjudge_cli(*args, "--dry-run", COLUMNS="200")
    assert dry.returncode == 0, dry.stderr
    assert stub.stats.requests == 0 and not (tmp_path / "out.jsonl").exists()
    row = next(line for line in dry.stdout.splitlines() if "openai/stub" in line)
    assert row.split("│")[2].strip() == "5-14"  # 3 x (1 to 4) + 2
    assert "model_under_test: a turn offered tools takes 1 to 4 model calls" in dry.stdout
    config = RunConfig.from_options(
        {"base_url": stub.base_url, "tool_replay": True, "max_tool_steps": 4},
        command="generate", progress=False,
    )  # fmt: skip
    generation = build_generation(data, "openai/stub", "response", tmp_path / "out.jsonl",
                                  column_map=None, config=config, dry_run=True)  # fmt: skip
    role = run_sync(generation.estimate()).model_dump()["roles"][0]
    assert role["calls"] == (5, 14) and (role["tool_turns"], role["max_tool_steps"]) == (3, 4)
    assert chatjudge_cli(*args).returncode == 0 and stub.stats.requests == 3 * 3 + 2
    again = chatjudge_cli(*args, "--dry-run", COLUMNS="200")
    row = next(line for line in again.stdout.splitlines() if "openai/stub" in line)
    assert row.split("│")[2].strip() == "0"


# --- bad input: exit 2, nothing sent ---------------------------------------------------------


def test_every_bad_tool_setting_is_exit_2_before_anything_is_sent(
    stub: StubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the CLI (exit 2) for a setting of each kind (a flag's value, --tools's
    import); the others through the API, whose UsageError is the CLI's exit 2."""
    data = write_jsonl(tmp_path / "rows.jsonl", [recorded_row(0), plain_row(0)])
    module = tools_module(tmp_path, "TOOLS = {'search': len}\nNOT_A_DICT = [len]\n"
                                    "NOT_CALLABLE = {'search': 3, 'other': len}\n")  # fmt: skip
    cli_cases = {
        ("--tools", "no_such_module_xyz:TOOLS"): "cannot import no_such_module_xyz",
        ("--tool-replay", "--max-tool-steps", "0"): "max_tool_steps (--max-tool-steps)",
        ("--no-tools", "--tool-replay"): "--no-tools offers the model no tools",
    }
    for extra, message in cli_cases.items():
        out = tmp_path / "out.jsonl"
        done = chatjudge_process("generate", str(data), "-m", "openai/stub", "--base-url",
                             stub.base_url, "--out", str(out), *extra,
                             PYTHONPATH=with_path(tmp_path), COLUMNS="300")  # fmt: skip
        assert done.returncode == 2, (extra, done.stderr)
        assert message in done.stderr, (extra, done.stderr)
        assert not out.exists()
    monkeypatch.syspath_prepend(str(tmp_path))
    api_cases: list[tuple[dict[str, Any], str]] = [
        ({}, "1 row(s) have tools"),
        ({"tool_replay": True, "tools": f"{module}:TOOLS"}, "--tool-replay and --tools both"),
        ({"tools": f"{module}:NOT_A_DICT"}, "must be a dict of tool name to function, got list"),
        ({"tools": f"{module}:MISSING"}, "must be a dict of tool name to function, got nothing"),
        ({"tools": f"{module}:NOT_CALLABLE"}, "not a name and a function: search"),
        ({"tools": module}, "expected MODULE:OBJECT"),
        ({"tool_replay": True, "tool_timeout": 0}, "tool_timeout (--tool-timeout)"),
        ({"no_tools": True, "tools": f"{module}:TOOLS"}, "--no-tools offers the model no tools"),
    ]
    for options, message in api_cases:
        out = tmp_path / "out.jsonl"
        with pytest.raises(UsageError) as refusal:
            chatjudge.generate(data, "openai/stub", "response", out, base_url=stub.base_url,
                               **options)  # fmt: skip
        assert message in " ".join(str(refusal.value).split()), (options, refusal.value)
        assert not out.exists()
    local = run_cli("generate", str(data), "-m", "local", "--out", str(tmp_path / "l.jsonl"),
                    "--tool-replay")  # fmt: skip
    assert local.returncode == 2
    assert "local cannot be offered tools" in local.stderr
    assert stub.stats.requests == 0
    # Without rows that have tools, nothing is asked of the tool options but a sound --tools.
    plain = write_jsonl(tmp_path / "plain.jsonl", [plain_row(0)])
    done = chatjudge_process(
        "generate",
        str(plain),
        "-m",
        "openai/stub",
        "--base-url",
        stub.base_url,
        "--out",
        str(tmp_path / "p.jsonl"),
        "--tools",
        f"{module}:NOT_A_DICT",
        PYTHONPATH=with_path(tmp_path),
    )
    assert done.returncode == 2 and stub.stats.requests == 0


def test_no_tools_answers_a_tool_row_reading_its_calls_as_text_and_says_so(
    stub: StubServer, tmp_path: Path
) -> None:
    """`--no-tools`, for a model that cannot call tools: offered none, it reads the row's
    tool calls and results as the judge does, in assistant messages; the rows are counted."""
    stub.configure(record=True)
    out = chatjudge.generate([recorded_row(0), plain_row(1)], "openai/stub", "response",
                             tmp_path / "out.jsonl", base_url=stub.base_url,
                             no_tools=True)  # fmt: skip
    tool_row, plain = read_jsonl(out)
    sent = {json.dumps(r["body"]["messages"]): r["body"] for r in stub.stats.recorded}
    assert len(sent) == 2 and not any("tools" in body for body in sent.values())
    asked = next(b["messages"] for b in sent.values() if "Hello" in json.dumps(b))
    assert [m["role"] for m in asked] == ["user", "assistant", "user"]
    assert asked[1]["content"] == (
        '**assistant** called search({"query": "Hello", "step": 1})\n'
        "**tool** (search) returned: EARLIER\n"
        "**assistant**: Hi!"
    )
    assert tool_row["response"].startswith("Stub reply")  # a text answer, no tool loop
    assert "response_trajectory" not in tool_row and "response_ended" not in tool_row
    assert plain["response"].startswith("Stub reply")
    summary = summary_of(out)
    assert summary["rows_without_tools"] == 1 and summary["tool_steps"] == 0
    console = Console(record=True, width=160, color_system=None)
    console.print(produced_table(summary))
    rows = [[c.strip() for c in line.strip("│").split("│")]
            for line in console.export_text().splitlines()]  # fmt: skip
    assert ["rows without their tools", "1", "--no-tools: not like for like", ""] in rows
