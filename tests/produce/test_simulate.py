"""`chatjudge simulate` against stand-in assistant and user servers (real HTTP on loopback):
turns, endings, the turn cap, faults, what each side sees, failures, resuming, samples."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import chatjudge
from chatjudge.errors import DataValidationError, UsageError
from chatjudge.produce.user import END_MARKER
from tests.support.golden_judge import verdict
from tests.support.stub_openai import StubServer
from tests.support.stub_replies import expected_reply

ROWS = [
    {
        "id": "tank",
        "question": "How long does it take to fill an empty 480-liter tank at 12 L/min in, 4 out?",
        "answer": "SECRET-ANSWER-60-MINUTES",
        "user_context": "PRIVATE-CONTEXT: the tank is in your garden.",
    },
    {
        "id": "rent",
        "question": "What will my new monthly rent be?",
        "answer": "SECRET-ANSWER-1300",
        "chat_history": [
            {"role": "user", "content": "My landlord wrote to me."},
            {"role": "assistant", "content": "What did the letter say?"},
        ],
    },
    {
        "id": "canberra",
        "question": "What is the capital of Australia?",
        "answer": "SECRET-CANBERRA",
    },
]
INSTRUCTIONS_LINE = "You are role-playing a human user who is chatting with an AI assistant."


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[StubServer, StubServer]]:
    """A stand-in assistant and a stand-in simulated user, each its own server."""
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    with StubServer(latency=0.002) as assistant, StubServer(latency=0.002) as user:
        yield assistant, user


def simulate(
    servers: tuple[StubServer, StubServer], out: Path, rows: list[dict] = ROWS, **options
) -> list[dict]:
    assistant, user = servers
    path = chatjudge.simulate(
        rows,
        "openai/assistant",
        "openai/user",
        out,
        assistant_base_url=assistant.base_url,
        user_base_url=user.base_url,
        **{"retry_wait": 0.01, **options},
    )
    return [json.loads(line) for line in path.read_text().splitlines()]


def summary_of(out: Path) -> dict:
    return json.loads(out.with_name(out.stem + ".summary.json").read_text())


def test_turns_alternate_and_the_user_ends_with_the_marker(servers, tmp_path: Path) -> None:
    servers[1].configure(user_ends_after=2)
    out = tmp_path / "conv.jsonl"
    rows = simulate(servers, out, max_turns=5)
    assert [r["id"] for r in rows] == ["tank", "rent", "canberra"]  # input order
    for row in rows:
        # The user has seen two assistant replies, the earlier conversation's included.
        turns = 2 - sum(m["role"] == "assistant" for m in row.get("chat_history", []))
        roles = [m["role"] for m in row["chat"]]
        assert roles == ["user", "assistant"] * turns + ["user"]
        assert (row["turns"], row["ended"], row["status"], row["error"]) == (
            turns,
            "user",
            "ok",
            None,
        )
        assert all(END_MARKER not in m["content"] for m in row["chat"])
        assert row["chat"][-1]["content"].endswith("Thanks, that settles it.")  # kept, marker cut
        assert row["usage"]["assistant"]["calls"] == turns
        assert row["usage"]["simulated_user"]["calls"] == turns + 1
        assert row["answer"].startswith("SECRET")  # the input fields are kept for the judge
    assert rows[0]["user_context"].startswith("PRIVATE") and rows[1]["chat_history"]
    summary = summary_of(out)
    assert summary["n_ok"] == 3 and summary["metrics"]["turns"]["value"] == pytest.approx(5 / 3)
    assert summary["metrics"]["ended_by_user"]["value"] == 1.0
    usage = summary["usage"]
    assert usage["assistant"]["calls"] == 5 and usage["simulated_user"]["calls"] == 8


def test_the_turn_cap_holds_and_the_user_is_not_called_after_it(servers, tmp_path) -> None:
    rows = simulate(servers, tmp_path / "conv.jsonl", max_turns=3)
    assert all((r["turns"], r["ended"], len(r["chat"])) == (3, "max_turns", 6) for r in rows)
    assert servers[0].stats.requests == 9  # 3 assistant replies per conversation
    assert servers[1].stats.requests == 9  # and the user was not asked a 4th time
    assert summary_of(tmp_path / "conv.jsonl")["metrics"]["ended_by_max_turns"]["value"] == 1.0


def test_nothing_hidden_reaches_the_other_side(servers, tmp_path: Path) -> None:
    """The assistant never sees the answer, the goal as an instruction, the user's context,
    the simulator's instructions or the user's thoughts; the user never sees the answer or
    the assistant's hidden reasoning."""
    assistant, user = servers
    assistant.configure(record=True, reasoning="HIDDEN-REASONING of the assistant")
    user.configure(record=True, user_ends_after=2)
    rows = simulate(servers, tmp_path / "conv.jsonl", max_turns=4)
    assistant_requests = [r["body"] for r in assistant.stats.recorded]
    user_requests = [r["body"] for r in user.stats.recorded]
    assert len(assistant_requests) == 5 and len(user_requests) == 8
    thoughts = [
        json.loads(expected_reply(b["messages"][-1]["content"], _schema(b)))["thought"]
        for b in user_requests
    ]
    for body in assistant_requests:
        text = json.dumps(body)
        for secret in ("SECRET", "PRIVATE-CONTEXT", INSTRUCTIONS_LINE, END_MARKER, *thoughts):
            assert secret not in text
        assert "response_format" not in body  # a plain chat model, no schema
        for message in body["messages"]:
            if message["role"] == "system":  # only what the row's own history held
                assert not any(row["question"] in message["content"] for row in ROWS)
        assert body["messages"][-1]["role"] == "user"
    for body in user_requests:
        text = json.dumps(body)
        assert "SECRET" not in text and "HIDDEN-REASONING" not in text
        assert INSTRUCTIONS_LINE in body["messages"][0]["content"]  # its own instructions
    # The rent conversation carries its earlier turns to both sides.
    rent = [b for b in assistant_requests if "My landlord wrote to me." in json.dumps(b)]
    assert len(rent) == 1 and rent[0]["messages"][0]["content"] == "My landlord wrote to me."
    # The transcript keeps what the assistant said, not what it thought.
    replies = [m["content"] for r in rows for m in r["chat"] if m["role"] == "assistant"]
    assert replies and all("HIDDEN" not in c and c.startswith("Stub reply") for c in replies)


def _schema(body: dict) -> dict:
    return body["response_format"]["json_schema"]["schema"]


def test_a_30_percent_fault_rate_gives_the_same_conversations(servers, tmp_path: Path) -> None:
    servers[1].configure(user_ends_after=3)
    clean = simulate(servers, tmp_path / "clean.jsonl", max_turns=4, seed=3)
    for server in servers:  # transport faults: the replies that do come are the same
        server.stats.reset()
        server.configure(
            fault_rate=0.3,
            fault_kinds=["429", "500", "503", "reset"],
            faulty_attempts=2,
            retry_after=0.01,
        )
    faulty = simulate(servers, tmp_path / "faulty.jsonl", max_turns=4, seed=3)
    assert sum(sum(s.stats.faults.values()) for s in servers) >= 3  # faults did happen
    strip = ("usage",)
    assert [{k: v for k, v in r.items() if k not in strip} for r in faulty] == [
        {k: v for k, v in r.items() if k not in strip} for r in clean
    ]


def test_a_conversation_that_cannot_finish_is_a_failure_with_its_partial_transcript(
    servers, tmp_path: Path
) -> None:
    """The user's second message holds a marker the assistant's server refuses with a
    context-window error: the conversation stops there, recorded as failed with its cause."""
    assistant, user = servers
    user.configure(user_ends_after=1, user_appends="OVERFLOW-NOW")
    assistant.configure(permanent={"OVERFLOW-NOW": "context"})
    out = tmp_path / "conv.jsonl"
    rows = simulate(servers, out, rows=[ROWS[0], ROWS[2]], max_turns=4)
    for row in rows:
        assert row["status"] == "failed" and row["ended"] is None
        assert row["error"].startswith("context window exceeded: BadRequestError")
        assert [m["role"] for m in row["chat"]] == ["user", "assistant", "user"]
        assert row["turns"] == 1
    summary = summary_of(out)
    assert summary["n_failed"] == 2 and summary["failures"] == {"context window": 2}
    # `run` refuses to judge an unfinished conversation as if it were complete.
    with pytest.raises(DataValidationError, match=r"row 1, field 'status': .*context window"):
        chatjudge.evaluate(out, "interactivity-accuracy", verdict, tmp_path / "judged")


def test_a_user_reply_without_json_is_the_message_and_is_counted(servers, tmp_path) -> None:
    """A user model whose server ignores the reply schema answers prose: with no JSON object
    there is no private thought to leak, so the prose is the message (counted in the summary)."""
    prose = "I'm sorry, I can't rate this conversation."
    servers[1].configure(permanent={"My landlord wrote to me.": "malformed"})
    rows = simulate(servers, tmp_path / "conv.jsonl", max_turns=2)
    rent = {r["id"]: r for r in rows}["rent"]
    assert rent["status"] == "ok" and rent["turns"] == 2
    assert [m["content"] for m in rent["chat"] if m["role"] == "user"] == [prose, prose]
    assert rent["usage"]["simulated_user"]["calls"] == 2  # no retry: each reply was a message
    summary = summary_of(tmp_path / "conv.jsonl")
    assert summary["plain_user_replies"] == 2 and summary["n_failed"] == 0


def test_a_json_user_reply_without_a_response_is_retried_once_then_a_failure(
    servers, tmp_path
) -> None:
    """A reply that holds a JSON object without `response` (here cut off after its thought)
    stays strict: asked once more, then that conversation fails and the others go on."""
    servers[1].configure(permanent={"My landlord wrote to me.": "truncated"})
    rows = simulate(servers, tmp_path / "conv.jsonl", max_turns=2)
    failed = {r["id"]: r for r in rows}["rent"]
    assert failed["status"] == "failed" and failed["chat"] == []
    assert failed["error"].startswith("the simulated user's reply held no message after one")
    assert failed["usage"]["simulated_user"]["calls"] == 2  # asked once more, with another seed
    assert all(r["status"] == "ok" for r in rows if r["id"] != "rent")
    summary = summary_of(tmp_path / "conv.jsonl")
    assert summary["failures"] == {"no user message": 1} and summary["plain_user_replies"] == 0


def test_samples_are_distinct_conversations_with_their_own_seeds(servers, tmp_path) -> None:
    servers[1].configure(record=True)
    rows = simulate(servers, tmp_path / "conv.jsonl", rows=ROWS[:2], samples=2, seed=7, max_turns=1)
    assert [(r["id"], r["sample"]) for r in rows] == [
        ("tank#0", 0), ("tank#1", 1), ("rent#0", 0), ("rent#1", 1),
    ]  # fmt: skip
    seeds = sorted({r["body"]["seed"] for r in servers[1].stats.recorded})
    assert seeds == [7, 8]
    summary = summary_of(tmp_path / "conv.jsonl")
    assert [p["sample"] for p in summary["per_sample"]] == [0, 1]
    assert set(summary["spread"]) == set(summary["metrics"])
    assert summary["n_conversations"] == 4


def test_bad_input_is_refused_before_anything_is_sent(servers, tmp_path: Path) -> None:
    rows = [ROWS[0], {"id": "x", "answer": "a"}, {"id": "y", "question": ""}]
    with pytest.raises(DataValidationError) as info:
        simulate(servers, tmp_path / "conv.jsonl", rows=rows)
    assert [str(p) for p in info.value.problems] == [
        "row 2, field 'question': missing required field",
        "row 3, field 'question': required field is empty",
    ]
    assert servers[0].stats.requests == servers[1].stats.requests == 0


def test_the_first_message_restating_the_goal_is_counted(tmp_path: Path) -> None:
    def parrot(messages: list[dict]) -> str:  # a lazy simulated user: it pastes its goal
        goal = messages[0]["content"].split("<goal>\n")[1].split("\n</goal>")[0]
        return json.dumps({"thought": "t", "response": goal})

    out = chatjudge.simulate(
        ROWS, lambda messages: "Sure.", parrot, tmp_path / "c.jsonl", max_turns=1
    )
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert all(r["first_message_restates_question"] for r in rows)
    assert summary_of(out)["metrics"]["first_message_restates_question"]["value"] == 1.0


def test_the_judged_run_shows_the_simulation_and_compare_ranks_assistants(tmp_path) -> None:
    """From questions to an interactivity-accuracy report in one simulate and one run; two
    assistants simulated on the same rows are ranked by `compare`."""

    def asks(messages: list[dict]) -> str:
        return "Before I answer: what exactly do you need?"

    def tells(messages: list[dict]) -> str:
        return "Here is the answer."

    def user(messages: list[dict]) -> str:
        done = messages[-1]["content"].count("**assistant**:") >= 2
        return json.dumps({"thought": "t", "response": "ok " + (END_MARKER if done else "more")})

    def judge(prompt: str) -> str:  # interactivity from the assistant's questions
        follow_up = prompt.split("Follow-up Conversation to be Evaluated|>")[1].split("<|The End")[
            0
        ]
        score = 3 if "?" in follow_up else 1
        return json.dumps(
            {
                "interactivity": {"thought": "", "score": score},
                "accuracy": {"thought": "", "score": 0},
            }
        )

    runs = {}
    for name, assistant in (("asks", asks), ("tells", tells)):
        rows = [ROWS[0], ROWS[2]]  # no earlier conversation: two turns each
        data = chatjudge.simulate(rows, assistant, user, tmp_path / f"{name}.jsonl", max_turns=3)
        result = chatjudge.evaluate(data, "interactivity-accuracy", judge, tmp_path / f"run-{name}")
        assert result.summary["simulation"]["turns"]["value"] == 2.0
        assert result.summary["simulation"]["ended_by_user"]["value"] == 1.0
        page = (tmp_path / f"run-{name}" / "report.html").read_text()
        assert 'id="simulation"' in page and "Simulated conversations" in page
        record = json.loads(
            (tmp_path / f"run-{name}" / "results.jsonl").read_text().splitlines()[0]
        )
        assert record["simulation"]["turns"] == 2 and record["simulation"]["ended"] == "user"
        runs[name] = tmp_path / f"run-{name}"
    from chatjudge.analysis import compare_runs

    comparison = compare_runs(runs)
    assert [r["model"] for r in comparison["ratings"]] == ["asks", "tells"]
    assert comparison["outcomes"]["asks"] == {"won": 2, "tied": 0, "lost": 0}


def test_a_killed_simulate_resumes_turn_by_turn(tmp_path: Path, monkeypatch) -> None:
    """SIGKILL mid-run, then the same command: calls made before the kill are not sent again
    (only those in flight may be), and the file equals an uninterrupted run's."""
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    rows = [{"id": f"r{i}", "question": f"Question number {i}?", "answer": "a"} for i in range(40)]
    data = tmp_path / "q.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with StubServer(latency=0.03) as assistant, StubServer(latency=0.03) as user:
        args = [
            sys.executable, "-m", "chatjudge.cli", "simulate", str(data),
            "--assistant", "openai/assistant", "--user", "openai/user",
            "--assistant-base-url", assistant.base_url, "--user-base-url", user.base_url,
            "--max-turns", "3", "--concurrency", "4", "--seed", "1", "--quiet",
        ]  # fmt: skip
        proc = subprocess.Popen([*args, "--out", str(tmp_path / "conv.jsonl")])
        deadline = time.monotonic() + 60
        while assistant.stats.requests + user.stats.requests < 100 and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        before = assistant.stats.requests + user.stats.requests
        assert 100 <= before < 240  # 40 conversations x 6 calls
        done = subprocess.run([*args, "--out", str(tmp_path / "conv.jsonl")], capture_output=True)
        assert done.returncode == 0, done.stderr
        sent_again = assistant.stats.requests + user.stats.requests - before
        assert sent_again <= 240 - before + 8  # at most the calls in flight (4 x 2) again
        fresh = subprocess.run([*args, "--out", str(tmp_path / "fresh.jsonl")], capture_output=True)
        assert fresh.returncode == 0
    resumed = [json.loads(line) for line in (tmp_path / "conv.jsonl").read_text().splitlines()]
    again = [json.loads(line) for line in (tmp_path / "fresh.jsonl").read_text().splitlines()]
    assert [r["chat"] for r in resumed] == [r["chat"] for r in again]
    assert len(resumed) == 40 and all(r["turns"] == 3 for r in resumed)


def test_both_roles_through_llama_cpp_s_real_server(
    llama_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The small model's conversations are poor; this checks the machinery over the real
    OpenAI-compatible wire format: turns alternate, the cap holds, every field is there.
    One conversation, with a history: the server spends ~10 ms of CPU a prompt token."""
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    out = tmp_path / "conv.jsonl"
    chatjudge.simulate(
        ROWS[1:2],
        f"openai/{llama_server.model}",
        None,  # the same model plays the user
        out,
        assistant_base_url=llama_server.base_url,
        max_turns=2,
        max_tokens=48,
        user_max_tokens=160,
        user_temperature=0.0,
        seed=0,
    )
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["rent"]
    for row in rows:
        assert row["status"] == "ok", row["error"]
        assert row["ended"] in ("user", "max_turns") and 1 <= row["turns"] <= 2
        roles = [m["role"] for m in row["chat"]]
        assert roles[: 2 * row["turns"]] == ["user", "assistant"] * row["turns"]
        assert all(isinstance(m["content"], str) for m in row["chat"])
        assert row["usage"]["assistant"]["output_tokens"] > 0
        assert row["usage"]["simulated_user"]["input_tokens"] > 0
    summary = summary_of(out)
    assert summary["n_ok"] == 1 and summary["user"] == summary["assistant"]


def test_a_user_prompt_file_replaces_the_instructions(servers, tmp_path: Path) -> None:
    """`--user-prompt` is what the simulated user gets, filled in; a bad one costs nothing."""
    assistant, user = servers
    user.configure(record=True, user_ends_after=1)
    own = tmp_path / "user.txt"
    own.write_text("MY-OWN-USER: want {question}; know {user_context}; end with {end_marker}")
    simulate(servers, tmp_path / "conv.jsonl", rows=ROWS[2:], max_turns=2, user_prompt=own)
    first = user.stats.recorded[0]["body"]["messages"][0]["content"]
    assert first.startswith("MY-OWN-USER: want What is the capital of Australia?")
    assert END_MARKER in first and INSTRUCTIONS_LINE not in first
    bad = tmp_path / "bad.txt"
    bad.write_text("no goal here, only {answer}")
    before = assistant.stats.requests + user.stats.requests
    with pytest.raises(UsageError, match="user-prompt"):
        simulate(servers, tmp_path / "bad.jsonl", user_prompt=bad)
    assert assistant.stats.requests + user.stats.requests == before


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"thought": "t", "response": "Hi there"}', ("Hi there", False, False)),
        ("Hi there", ("Hi there", False, True)),
        ("Use {braces} freely", ("Use {braces} freely", False, True)),
        ("<think>my goal is X</think>Hello", ("Hello", False, True)),
        ("Thanks! [[TERMINATE CHAT]]", ("Thanks!", True, True)),
        ('{"thought": "no response here"}', None),
        ('{"thought": "cut off", "resp', None),
    ],
)
def test_what_a_user_reply_says(reply: str, expected) -> None:
    from chatjudge.produce.user import parse_turn

    turn = parse_turn(reply, replied=True)
    assert (turn and (turn.text, turn.ends, turn.plain)) == expected


# --- the assistant with tools (--tools MODULE:OBJECT) ---------------------------------------

SIM_TOOLS = '''
def search(query: str, step: int) -> str:
    """Look something up."""
    # The stand-in assistant quotes a result's first 200 characters: the rest only the
    # tool message holds.
    return f"found {step}: " + "x" * 200 + f" TOOL-ONLY-{step}"

TOOLS = {"search": search}
'''


def tools_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The user's functions as a module of the current directory (`tmp_path`)."""
    name = f"sim_tools_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(SIM_TOOLS, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return f"{name}:TOOLS"


def test_with_tools_the_user_never_sees_a_call_or_a_result_and_the_judge_sees_them(
    servers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each assistant turn calls `search` twice (the stand-in), answered by the user's
    function: the assistant's requests offer the tool and carry the calls and results;
    the simulated user's requests hold the assistant's final text only; `chat` holds the
    calls and results as OpenAI messages, and the judge's prompt shows them."""
    assistant, user = servers
    assistant.configure(record=True)
    user.configure(record=True, user_ends_after=2)
    spec = tools_module(tmp_path, monkeypatch)
    rows = simulate(servers, tmp_path / "conv.jsonl", rows=[ROWS[0], ROWS[2]], max_turns=4,
                    tools=spec)  # fmt: skip
    assert assistant.stats.requests == 2 * 2 * 3  # 2 conversations x 2 turns x 3 steps
    for body in (r["body"] for r in assistant.stats.recorded):
        assert body["tools"][0]["function"]["name"] == "search"
        assert body["tools"][0]["function"]["description"] == "Look something up."
    last = assistant.stats.recorded[-1]["body"]["messages"]
    assert [m["role"] for m in last[-4:]] == ["assistant", "tool", "assistant", "tool"]
    assert "TOOL-ONLY-2" in last[-1]["content"]
    user_requests = [json.dumps(r["body"]) for r in user.stats.recorded]
    assert len(user_requests) == 2 * 3
    for text in user_requests:
        for hidden in ("TOOL-ONLY", "tool_calls", "called search", "**tool**", "call_"):
            assert hidden not in text
    for row in rows:
        chat = row["chat"]
        assert row["ended"] == "user" and row["turns"] == 2 and row["status"] == "ok"
        assert [m["role"] for m in chat] == (
            ["user", "assistant", "tool", "assistant", "tool", "assistant"] * 2 + ["user"]
        )
        finals = [m["content"] for m in chat if m["role"] == "assistant" and "tool_calls" not in m]
        assert all(f.startswith("From the tool: found 1: ") for f in finals)
        assert row["usage"]["assistant"]["calls"] == 6
        # What the simulated user was shown of this conversation: the finals, no more.
        shown = [t for t in user_requests if json.dumps(finals[0])[1:-1] in t]
        assert shown
    prompts: list[str] = []

    def judge(prompt: str) -> str:
        prompts.append(prompt)
        return verdict(prompt)

    chatjudge.evaluate(tmp_path / "conv.jsonl", "interactivity-accuracy", judge, tmp_path / "run")
    assert len(prompts) == 2
    assert all('**assistant** called search({"query": ' in p for p in prompts)
    assert all("**tool** (search) returned: found 1: " in p and "TOOL-ONLY-1" in p
               for p in prompts)  # fmt: skip


FLAKY_TOOLS = '''
calls = []

def search(query: str, step: int) -> str:
    """Look something up."""
    calls.append(step)
    if len(calls) == 1:
        raise RuntimeError("the index is rebuilding")
    return f"found {step}"

TOOLS = {"search": search}
'''


def test_the_summary_counts_tool_steps_and_errors_only_with_tools(
    servers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The user's function raises on its first call: that call's error goes back to the
    assistant and is counted (`tool_errors`), every model call of its turns is a step
    (`tool_steps`), and the terminal summary shows both; without --tools neither is
    written."""
    from rich.console import Console

    from chatjudge.report.terminal import produced_table

    servers[1].configure(user_ends_after=2)
    name = f"flaky_tools_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(FLAKY_TOOLS, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "conv.jsonl"
    rows = simulate(servers, out, rows=[ROWS[0], ROWS[2]], max_turns=4, tools=f"{name}:TOOLS")
    errors = [m["content"] for r in rows for m in r["chat"] if m["role"] == "tool"
              and m["content"].startswith("error: ")]  # fmt: skip
    assert errors == ["error: RuntimeError: the index is rebuilding"]
    summary = summary_of(out)
    assert summary["tool_errors"] == 1
    # 2 conversations x 2 turns x 3 steps: each a call sent for the assistant
    assert summary["tool_steps"] == summary["usage"]["assistant"]["calls"] == 12
    console = Console(record=True, width=160, color_system=None)
    console.print(produced_table(summary))
    lines = [[c.strip() for c in line.strip("│").split("│")]
             for line in console.export_text().splitlines()]  # fmt: skip
    assert ["tool steps", "12", "model calls", ""] in lines
    assert ["tool errors", "1", "raised, timed out or unknown", ""] in lines
    simulate(servers, tmp_path / "plain.jsonl", rows=[ROWS[0], ROWS[2]], max_turns=4)
    plain = summary_of(tmp_path / "plain.jsonl")
    assert "tool_steps" not in plain and "tool_errors" not in plain


def test_simulate_tools_are_checked_before_anything_is_sent(
    servers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = tools_module(tmp_path, monkeypatch)
    with pytest.raises(UsageError, match="not an option of simulate: 'tool_replay'"):
        simulate(servers, tmp_path / "a.jsonl", tool_replay=True)
    with pytest.raises(UsageError, match="must be a dict of tool name to function"):
        simulate(servers, tmp_path / "b.jsonl", tools=spec.replace(":TOOLS", ":search"))
    with pytest.raises(UsageError, match="local cannot be offered tools"):
        chatjudge.simulate(ROWS, "local", None, tmp_path / "c.jsonl", tools=spec)
    assert servers[0].stats.requests == servers[1].stats.requests == 0
    assert not (tmp_path / "a.jsonl").exists() and not (tmp_path / "c.jsonl").exists()


def test_a_dry_run_with_tools_counts_1_to_max_tool_steps_calls_per_assistant_turn(
    servers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chatjudge.calls.run_sync import run_sync
    from chatjudge.options import RunConfig
    from chatjudge.produce import build_simulation

    spec = tools_module(tmp_path, monkeypatch)
    options = {"assistant_base_url": servers[0].base_url, "max_turns": 4, "tools": spec,
               "max_tool_steps": 3}  # fmt: skip
    config = RunConfig.from_options(options, command="simulate", progress=False)
    built = build_simulation([ROWS[0], ROWS[2]], "openai/stub", None, tmp_path / "s.jsonl",
                             column_map=None, config=config, dry_run=True)  # fmt: skip
    assistant, user = run_sync(built.estimate()).roles
    assert assistant.calls == (2, 2 * 4 * 3) and assistant.max_tool_steps == 3
    assert user.calls == (4, 8) and servers[0].stats.requests == 0


def test_a_turn_cut_at_max_tool_steps_ends_the_conversation_and_is_judged(
    servers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    servers[0].configure(tool_steps=5)  # the assistant would call 5 times: the cap is 2
    spec = tools_module(tmp_path, monkeypatch)
    (row,) = simulate(servers, tmp_path / "conv.jsonl", rows=[ROWS[2]], max_turns=4, tools=spec,
                      max_tool_steps=2)  # fmt: skip
    assert (row["ended"], row["turns"], row["status"]) == ("max_tool_steps", 1, "ok")
    assert [m["role"] for m in row["chat"]] == ["user", "assistant", "tool", "assistant"]
    assert row["chat"][-1]["tool_calls"]  # ends on a call without a result: data
    assert servers[1].stats.requests == 1  # the user is not asked again
    result = chatjudge.evaluate(tmp_path / "conv.jsonl", "interactivity-accuracy", verdict,
                                tmp_path / "run", report=False)  # fmt: skip
    assert result.summary["n_failed"] == 0


def test_a_row_without_an_answer_is_simulated(servers, tmp_path: Path) -> None:
    """`answer` is for interactivity-accuracy's judge only: simulate does without it (the goals
    `chatjudge realism` writes from real conversations have none)."""
    servers[1].configure(user_ends_after=1)
    rows = simulate(servers, tmp_path / "conv.jsonl", rows=[{"id": "g", "question": "Why?"}])
    assert [(r["id"], r["status"], "answer" in r) for r in rows] == [("g", "ok", False)]
