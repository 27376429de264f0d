"""`chatjudge.generate()` and `chatjudge generate`: a model under test answers every row,
over real HTTP to the stand-in OpenAI server (or as a Python callable where the test is
about what the model sees); the output is judged as it is."""

from __future__ import annotations

import asyncio
import json
from functools import partial
from pathlib import Path
from typing import Any

import pytest

import chatjudge
from chatjudge.chat.types import Reply
from chatjudge.errors import (
    AuthError,
    DataValidationError,
    FatalModelError,
    ServerError,
    UsageError,
)
from tests.support.cli import run_cli
from tests.support.golden_judge import verdict
from tests.support.stub_openai import StubServer
from tests.support.stub_replies import expected_reply

FAST = {"retry_wait": 0.01, "max_retries": 1}  # a permanent fault costs one quick retry
WORDS = ("kettle", "orbit", "saffron", "lantern", "quartz", "meadow", "violin", "harbor", "ember")


@pytest.fixture(autouse=True)
def _openai_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def dialogues(n: int, markers: dict[int, str] | None = None) -> list[dict[str, Any]]:
    """n rows with a two-message history and a prompt; ids run backwards (q-00n ... q-001),
    so that output sorted by id, not kept in input order, shows. `markers`: row index ->
    text appended to its prompt (for the stub's permanent faults)."""
    rows = []
    for i in range(n):
        word = WORDS[i % len(WORDS)]
        rows.append(
            {
                "id": f"q-{n - i:03d}",
                "history": [
                    {"role": "user", "content": f"Hi, I am writing a poem about a {word}."},
                    {"role": "assistant", "content": "Lovely! How can I help?"},
                ],
                "prompt": f"Row {i}: what rhymes with {word}?" + (markers or {}).get(i, ""),
            }
        )
    return rows


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def summary_of(rows_path: Path) -> dict[str, Any]:
    return json.loads(rows_path.with_name(rows_path.stem + ".summary.json").read_text())


chatjudge_cli = partial(run_cli, key="dummy")  # the OpenAI model wants some key


# --- 1. the whole A/B: baseline, candidate, judge -------------------------------------------


def test_ab_generate_baseline_then_candidate_then_judge(stub: StubServer, tmp_path: Path) -> None:
    rows = dialogues(12)
    for i, row in enumerate(rows):  # a column generate does not know, and usage of an earlier step
        row["topic"] = f"poems-{i}"
        row["usage"] = {"simulate": {"calls": 2, "input_tokens": 10, "output_tokens": 4}}
    data = write_jsonl(tmp_path / "dialogues.jsonl", rows)

    async def baseline(messages: list[dict[str, str]]) -> Reply:
        # Rows finish in reverse order: output order must still be input order.
        index = int(messages[-1]["content"].split(":")[0].removeprefix("Row "))
        await asyncio.sleep(0.002 * (12 - index))
        return Reply(f"Baseline: {messages[-1]['content'].upper()}", len(messages), 3)

    with_baseline = chatjudge.generate(
        data, baseline, "baseline_model_response", tmp_path / "baseline.jsonl"
    )
    stub.configure(jitter=0.02)  # the candidate's replies also come back out of order
    both = chatjudge.generate(
        with_baseline, "openai/stub", "response", tmp_path / "ab.jsonl", base_url=stub.base_url
    )
    assert with_baseline == tmp_path / "baseline.jsonl" and both == tmp_path / "ab.jsonl"
    assert stub.stats.requests == 12  # the baseline was a Python callable, not an HTTP call

    out = read_jsonl(both)
    assert [r["id"] for r in out] == [r["id"] for r in rows]
    for given, row in zip(rows, out, strict=True):
        assert row["history"] == given["history"] and row["prompt"] == given["prompt"]
        assert row["topic"] == given["topic"]
        assert row["baseline_model_response"] == f"Baseline: {given['prompt'].upper()}"
        assert row["response"] == expected_reply(given["prompt"])
        assert row["status"] == "ok" and row["error"] is None
        usage = row["usage"]
        assert usage["simulate"] == given["usage"]["simulate"]
        assert usage["baseline_model_response"] == {
            "calls": 1,
            "input_tokens": 3,
            "output_tokens": 3,
        }
        assert usage["response"]["calls"] == 1
        assert usage["response"]["input_tokens"] > 0 and usage["response"]["output_tokens"] > 0

    result = chatjudge.evaluate(
        both, "pairwise-chat-quality", judge=verdict, out=tmp_path / "judged", report=False
    )
    assert result.summary["n_items"] == 12
    assert result.summary["n_ok"] == 12 and result.summary["n_failed"] == 0
    judged = read_jsonl(tmp_path / "judged" / "results.jsonl")
    by_id = {r["id"]: r for r in judged}
    assert set(by_id) == {r["id"] for r in rows}
    for row in out:  # the judge saw the generated replies, each in its place
        fields = by_id[row["id"]]["fields"]
        assert fields["baseline_model_response"] == row["baseline_model_response"]
        assert fields["response"] == row["response"]


# --- 2. what the model sees -------------------------------------------------------------------


def test_request_holds_history_then_prompt_and_nothing_else(
    stub: StubServer, tmp_path: Path
) -> None:
    stub.configure(record=True)
    history = [
        {"role": "system", "content": "You are a patient tutor."},
        {"role": "user", "content": "I need help with fractions."},
        {"role": "assistant", "content": "Sure, what is the question?"},
    ]
    rows = [
        {  # every column but history and prompt must stay out of the request
            "id": "listed",
            "history": history,
            "prompt": "What is 1/2 + 1/3?",
            "baseline_model_response": "LEAK-BASELINE",
            "response": "LEAK-STALE-RESPONSE",
            "answer": "LEAK-ANSWER",
            "notes": {"secret": "LEAK-NOTES"},
            "usage": {"earlier": {"calls": 1, "input_tokens": 1, "output_tokens": 1}},
        },
        {
            "id": "messages",
            "history": history[1:],
            "prompt": [
                {"role": "system", "content": "Answer in one word."},
                {"role": "user", "content": "Is 1/2 bigger than 1/3?"},
            ],
        },
        {"id": "text", "history": "user: hi\nassistant: hello", "prompt": "Name a prime."},
        {"id": "none", "history": [], "prompt": "Say hi."},
        {"id": "absent", "prompt": "Say bye."},
    ]
    path = chatjudge.generate(
        rows, "openai/stub", out=tmp_path / "out.jsonl", base_url=stub.base_url
    )

    bodies = {
        body["messages"][-1]["content"]: body for body in (r["body"] for r in stub.stats.recorded)
    }
    assert len(stub.stats.recorded) == 5 and len(bodies) == 5
    assert bodies["What is 1/2 + 1/3?"]["messages"] == [
        *history,
        {"role": "user", "content": "What is 1/2 + 1/3?"},
    ]
    assert bodies["Is 1/2 bigger than 1/3?"]["messages"] == [
        *history[1:],
        {"role": "system", "content": "Answer in one word."},
        {"role": "user", "content": "Is 1/2 bigger than 1/3?"},
    ]
    assert bodies["Name a prime."]["messages"] == [
        {"role": "system", "content": "The conversation so far:\nuser: hi\nassistant: hello"},
        {"role": "user", "content": "Name a prime."},
    ]
    assert bodies["Say hi."]["messages"] == [{"role": "user", "content": "Say hi."}]
    assert bodies["Say bye."]["messages"] == [{"role": "user", "content": "Say bye."}]
    for body in bodies.values():
        assert body["model"] == "stub"
        assert "LEAK" not in json.dumps(body)

    out = {r["id"]: r for r in read_jsonl(path)}
    listed = out["listed"]
    assert listed["response"] == expected_reply("What is 1/2 + 1/3?")  # the stale one replaced
    assert listed["baseline_model_response"] == "LEAK-BASELINE"  # other columns kept as given
    assert listed["answer"] == "LEAK-ANSWER" and listed["notes"] == {"secret": "LEAK-NOTES"}
    assert set(listed["usage"]) == {"earlier", "response"}
    assert out["messages"]["prompt"] == rows[1]["prompt"]
    assert "history" not in out["absent"]


def test_generation_settings_reach_the_request(stub: StubServer, tmp_path: Path) -> None:
    stub.configure(record=True)
    data = write_jsonl(tmp_path / "d.jsonl", dialogues(2))
    chatjudge.generate(
        data,
        "openai/stub",
        out=tmp_path / "out.jsonl",
        base_url=stub.base_url,
        temperature=0.7,
        max_tokens=64,
        seed=11,
    )
    assert len(stub.stats.recorded) == 2
    for record in stub.stats.recorded:
        body = record["body"]
        assert (body["temperature"], body["max_tokens"], body["seed"]) == (0.7, 64, 11)
        assert record["headers"]["Authorization"] == "Bearer dummy"


# --- 3. resuming --------------------------------------------------------------------------------


def test_same_call_again_sends_nothing_and_writes_the_same_file(
    stub: StubServer, tmp_path: Path
) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", dialogues(8))
    out = tmp_path / "out.jsonl"

    def go(**options: Any) -> bytes:
        chatjudge.generate(data, "openai/stub", out=out, base_url=stub.base_url, **options)
        return out.read_bytes()

    first = go()
    assert stub.stats.requests == 8
    assert (tmp_path / "out.calls.sqlite").exists()

    assert go() == first
    assert stub.stats.requests == 8  # every reply came from the store
    usage = summary_of(out)["usage"]
    assert usage["calls"] == 0 and usage["cached_calls"] == 8

    # What does not change a reply is not in the cache key ...
    assert go(concurrency=2, max_retries=3, timeout=30.0) == first
    assert stub.stats.requests == 8

    # ... and --no-cache sends every call again (the stub answers the same).
    assert go(no_cache=True) == first
    assert stub.stats.requests == 16
    assert summary_of(out)["usage"]["calls"] == 8

    # A generation setting changes the key: sent again, into an output it may replace.
    with pytest.raises(UsageError, match=r"option temperature: 0\.0 vs 0\.5"):
        go(temperature=0.5)
    assert stub.stats.requests == 16 and out.read_bytes() == first
    go(temperature=0.5, overwrite=True)
    assert stub.stats.requests == 24


def test_rows_asking_the_same_are_sent_once(stub: StubServer, tmp_path: Path) -> None:
    """20 rows of 2 contents: 2 requests (the later rows wait for the first in flight), every
    row written with its reply, the later ones counted as cached."""
    stub.configure(latency=0.05)
    two = dialogues(2)
    rows = [{**two[i % 2], "id": f"r-{i:02d}"} for i in range(20)]
    out = chatjudge.generate(rows, "openai/stub", out=tmp_path / "out.jsonl",
                             base_url=stub.base_url, concurrency=8)  # fmt: skip
    assert stub.stats.requests == 2
    written = read_jsonl(out)
    assert len(written) == 20 and all(r["response"] for r in written)
    assert {r["prompt"]: r["response"] for r in written[:2]} == {
        r["prompt"]: r["response"] for r in written
    }
    usage = summary_of(out)["usage"]
    assert usage["calls"] == 2 and usage["cached_calls"] == 18


def test_resume_sends_only_the_rows_missing(stub: StubServer, tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", dialogues(7))
    out = tmp_path / "out.jsonl"
    chatjudge.generate(data, "openai/stub", out=out, base_url=stub.base_url, limit=3)
    assert stub.stats.requests == 3 and len(read_jsonl(out)) == 3

    chatjudge.generate(data, "openai/stub", out=out, base_url=stub.base_url)
    assert stub.stats.requests == 7 and stub.stats.max_sends == 1
    rows = read_jsonl(out)
    assert [r["id"] for r in rows] == [r["id"] for r in dialogues(7)]
    assert all(r["status"] == "ok" for r in rows)
    usage = summary_of(out)["usage"]
    assert usage["calls"] == 4 and usage["cached_calls"] == 3


def test_default_output_is_named_after_the_command_and_resumes(
    stub: StubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    data = write_jsonl(tmp_path / "d.jsonl", dialogues(3))
    first = chatjudge.generate(data, "openai/stub", base_url=stub.base_url)
    assert first.suffix == ".jsonl" and first.exists()
    assert "chatjudge-runs" in first.parts
    assert first.with_name(first.stem + ".summary.json").exists()

    again = chatjudge.generate(data, "openai/stub", base_url=stub.base_url)
    assert again == first and stub.stats.requests == 3

    other = chatjudge.generate(
        data, "openai/stub", "baseline_model_response", base_url=stub.base_url
    )
    assert other != first


def test_a_rejected_key_stops_the_run_after_the_calls_in_flight(
    stub: StubServer, tmp_path: Path
) -> None:
    stub.configure(api_key="the-right-key")
    with pytest.raises(FatalModelError, match="401") as caught:
        chatjudge.generate(
            dialogues(30),
            "openai/stub",
            out=tmp_path / "o.jsonl",
            base_url=stub.base_url,
            concurrency=4,
            **FAST,
        )
    assert caught.value.finished == 0
    assert 1 <= stub.stats.requests <= 4  # not one call per row


def test_a_stop_keeps_the_finished_rows_and_the_same_call_resumes(tmp_path: Path) -> None:
    broken = True
    answered: list[str] = []

    def assistant(messages: list[dict[str, str]]) -> str:
        prompt = messages[-1]["content"]
        if broken and prompt.startswith("Row 3:"):
            raise AuthError("key revoked")
        answered.append(prompt)
        return f"re: {prompt}"

    rows = dialogues(6)
    out = tmp_path / "out.jsonl"
    with pytest.raises(FatalModelError) as caught:
        chatjudge.generate(rows, assistant, out=out, concurrency=1)
    assert caught.value.finished == 3
    assert [r["id"] for r in read_jsonl(out)] == [r["id"] for r in rows[:3]]

    broken = False
    answered.clear()
    chatjudge.generate(rows, assistant, out=out, concurrency=1)
    assert answered == [r["prompt"] for r in rows[3:]]  # the first three from the store
    got = read_jsonl(out)
    assert [r["id"] for r in got] == [r["id"] for r in rows]
    assert [r["response"] for r in got] == [f"re: {r['prompt']}" for r in rows]


# --- 4. failures ------------------------------------------------------------------------------


def test_a_failed_row_is_recorded_without_the_field(stub: StubServer, tmp_path: Path) -> None:
    stub.configure(permanent={"POISON": "500", "TOOLONG": "context", "REFUSEME": "400"})
    rows = dialogues(5, markers={1: " POISON", 2: " TOOLONG", 3: " REFUSEME"})
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    out = chatjudge.generate(
        data, "openai/stub", out=tmp_path / "out.jsonl", base_url=stub.base_url, **FAST
    )

    got = read_jsonl(out)
    assert [r["id"] for r in got] == [r["id"] for r in rows]
    for i in (0, 4):
        assert got[i]["status"] == "ok" and got[i]["response"] == expected_reply(rows[i]["prompt"])
    expected = {
        1: ("retries exhausted:", "500", 2),  # a transient fault: tried, retried once, given up
        2: ("context window exceeded:", "maximum context length", 1),  # never retried
        3: ("refused:", "400", 1),
    }
    for i, (prefix, cause, sends) in expected.items():
        row = got[i]
        assert row["status"] == "failed", row
        assert row["error"].startswith(prefix) and cause in row["error"]
        assert "response" not in row and "usage" not in row
        assert row["prompt"] == rows[i]["prompt"] and row["history"] == rows[i]["history"]
        assert stub.stats.sends_of(rows[i]["prompt"]) == sends

    summary = summary_of(out)
    assert (summary["n_rows"], summary["n_ok"], summary["n_failed"]) == (5, 2, 3)
    assert summary["failures"] == {"retries exhausted": 1, "context window": 1, "refused": 1}
    assert summary["metrics"]["output_tokens"]["n"] == 2

    # After the fix, the same call sends only the failed rows and completes the file.
    stub.configure(permanent={})
    before = stub.stats.requests
    chatjudge.generate(data, "openai/stub", out=out, base_url=stub.base_url, **FAST)
    assert stub.stats.requests - before == 3
    fixed = read_jsonl(out)
    assert all(r["status"] == "ok" and r["error"] is None for r in fixed)
    assert [r["response"] for r in fixed] == [expected_reply(r["prompt"]) for r in rows]
    assert summary_of(out)["n_failed"] == 0 and summary_of(out)["failures"] == {}


def test_cli_failed_row_exit_1_then_run_refuses_it_or_skips_it(
    stub: StubServer, tmp_path: Path
) -> None:
    stub.configure(permanent={"POISON": "500"})
    rows = dialogues(3, markers={1: " POISON"})
    for i, row in enumerate(rows):
        row["baseline_model_response"] = f"Try '{WORDS[i]}' with 'bottle'."
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    out = tmp_path / "generated.jsonl"

    done = chatjudge_cli(
        "generate", str(data), "--model", "openai/stub", "--base-url", stub.base_url,
        "--field", "response", "--out", str(out), "--max-retries", "1", "--retry-wait", "0.01",
        "--quiet",
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    got = read_jsonl(out)
    assert [r["status"] for r in got] == ["ok", "failed", "ok"]
    assert got[1]["error"].startswith("retries exhausted:") and "response" not in got[1]
    assert summary_of(out)["n_failed"] == 1
    sent = stub.stats.requests

    judge = ["-p", "pairwise-chat-quality", "--judge", "openai/stub", "--base-url", stub.base_url]
    judge += ["--retry-wait", "0.01", "--out", str(tmp_path / "judged")]
    refused = chatjudge_cli("run", str(out), *judge)
    assert refused.returncode == 2, refused.stderr
    assert "row 2, field 'status'" in refused.stderr and "retries exhausted" in refused.stderr
    assert "nothing was sent" in refused.stderr
    assert stub.stats.requests == sent
    assert not (tmp_path / "judged").exists()

    skipped = chatjudge_cli("run", str(out), *judge, "--skip-invalid")
    assert skipped.returncode == 1, skipped.stderr
    summary = json.loads((tmp_path / "judged" / "summary.json").read_text())
    assert summary["n_items"] == 2 and summary["n_ok"] == 2 and summary["n_skipped"] == 1
    assert {s["row"] for s in summary["skipped"]} == {2}
    assert "status" in {s["field"] for s in summary["skipped"]}
    judged = read_jsonl(tmp_path / "judged" / "results.jsonl")
    assert {r["id"] for r in judged} == {rows[0]["id"], rows[2]["id"]}
    assert stub.stats.requests > sent


# --- 5. transient faults ----------------------------------------------------------------------


def test_transient_faults_give_the_same_output_as_none(stub: StubServer, tmp_path: Path) -> None:
    # Faults a retry cures. (A `malformed` or `truncated` 200 is a reply like any other to
    # `generate`, which parses nothing, so those kinds are not drawn here.)
    stub.configure(fault_rate=0.3, fault_kinds=["429", "500", "503", "reset"])
    data = write_jsonl(tmp_path / "d.jsonl", dialogues(20))
    faulty = chatjudge.generate(
        data, "openai/stub", out=tmp_path / "faulty.jsonl", base_url=stub.base_url, retry_wait=0.01
    )
    assert sum(stub.stats.faults.values()) >= 3  # ~30% of 20 rows faulted at least once

    stub.configure(fault_rate=0.0)
    faults = sum(stub.stats.faults.values())
    clean = chatjudge.generate(
        data, "openai/stub", out=tmp_path / "clean.jsonl", base_url=stub.base_url, retry_wait=0.01
    )
    assert sum(stub.stats.faults.values()) == faults
    assert faulty.read_bytes() == clean.read_bytes()
    assert summary_of(faulty)["n_failed"] == 0
    assert all(r["usage"]["response"]["calls"] == 1 for r in read_jsonl(faulty))


# --- 6. bad input and bad usage ---------------------------------------------------------------


def test_invalid_rows_are_refused_before_any_call(stub: StubServer, tmp_path: Path) -> None:
    rows = [
        *dialogues(1),
        {"id": "no-prompt", "history": []},
        {"id": "empty", "prompt": "   "},
        {"id": "bot", "prompt": [{"role": "bot", "content": "hi"}]},
        {"id": "number", "prompt": "fine", "history": 5},
    ]
    out = tmp_path / "out.jsonl"
    with pytest.raises(DataValidationError) as caught:
        chatjudge.generate(rows, "openai/stub", out=out, base_url=stub.base_url)
    message = str(caught.value)
    assert "row 2, field 'prompt': missing required field" in message
    assert "row 3, field 'prompt'" in message
    assert "row 4, field 'prompt': message 1: unknown role 'bot'" in message
    assert "row 5, field 'history'" in message
    assert {(p.row, p.field) for p in caught.value.problems} == {
        (2, "prompt"),
        (3, "prompt"),
        (4, "prompt"),
        (5, "history"),
    }
    assert stub.stats.requests == 0
    assert not out.exists() and not (tmp_path / "out.calls.sqlite").exists()

    # --skip-invalid answers the valid rows and lists the others.
    chatjudge.generate(rows, "openai/stub", out=out, base_url=stub.base_url, skip_invalid=True)
    assert stub.stats.requests == 1
    assert [r["id"] for r in read_jsonl(out)] == [rows[0]["id"]]
    summary = summary_of(out)
    assert summary["n_skipped"] == 4 and {s["row"] for s in summary["skipped"]} == {2, 3, 4, 5}


def test_a_failed_baseline_row_is_refused_by_the_next_generate(
    stub: StubServer, tmp_path: Path
) -> None:
    stub.configure(permanent={"POISON": "500"})
    data = write_jsonl(tmp_path / "d.jsonl", dialogues(3, markers={2: " POISON"}))
    baseline = chatjudge.generate(
        data,
        "openai/stub",
        "baseline_model_response",
        tmp_path / "b.jsonl",
        base_url=stub.base_url,
        **FAST,
    )
    sent = stub.stats.requests
    with pytest.raises(DataValidationError, match=r"row 3, field 'status'"):
        chatjudge.generate(
            baseline, "openai/stub", out=tmp_path / "ab.jsonl", base_url=stub.base_url, **FAST
        )
    assert stub.stats.requests == sent


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"samples": 0}, "samples"),
        ({"flip": True}, "not an option of generate: 'flip'"),
        ({"temprature": 0.5}, "did you mean 'temperature'"),
        ({"concurrency": 0}, "concurrency"),
    ],
)
def test_bad_options_are_usage_errors(
    stub: StubServer, tmp_path: Path, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        chatjudge.generate(
            dialogues(2), "openai/stub", out=tmp_path / "o.jsonl", base_url=stub.base_url, **options
        )
    assert stub.stats.requests == 0 and not (tmp_path / "o.jsonl").exists()


def test_bad_field_or_model_options_are_usage_errors(stub: StubServer, tmp_path: Path) -> None:
    with pytest.raises(
        UsageError, match="--field must be one of response, baseline_model_response"
    ):
        chatjudge.generate(dialogues(2), "openai/stub", "answer", base_url=stub.base_url)
    with pytest.raises(UsageError, match="cannot honour --temperature"):
        chatjudge.generate(
            dialogues(2), lambda messages: "hi", out=tmp_path / "o.jsonl", temperature=0.7
        )
    with pytest.raises(UsageError, match="unknown judge provider 'nope'"):
        chatjudge.generate(dialogues(2), "nope/model", out=tmp_path / "o.jsonl")
    assert stub.stats.requests == 0 and not (tmp_path / "o.jsonl").exists()


def test_cli_bad_data_or_field_exit_2_and_nothing_sent(stub: StubServer, tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "bad.jsonl", [*dialogues(1), {"id": "x", "history": []}])
    out = tmp_path / "out.jsonl"
    common = ["--model", "openai/stub", "--base-url", stub.base_url, "--out", str(out), "--quiet"]
    done = chatjudge_cli("generate", str(data), *common)
    assert done.returncode == 2
    assert "row 2, field 'prompt': missing required field" in done.stderr
    assert "nothing was sent" in done.stderr

    good = write_jsonl(tmp_path / "good.jsonl", dialogues(1))
    wrong = chatjudge_cli("generate", str(good), *common, "--field", "answer")
    assert wrong.returncode == 2
    assert "--field must be one of" in wrong.stderr
    assert stub.stats.requests == 0 and not out.exists()


@pytest.mark.parametrize("depth", [10_000, 1_000])
def test_a_row_nested_too_deep_is_a_row_error(stub: StubServer, tmp_path: Path, depth: int) -> None:
    """10,000 levels were a RecursionError of `json`; 1,000 (orjson reads them) one of
    writing the output, after the model was paid."""
    data = write_jsonl(tmp_path / "deep.jsonl", dialogues(1))
    with data.open("a") as fh:
        fh.write(f'{{"id": "x", "prompt": "Hi", "extra": {"[" * depth}{"]" * depth}}}\n')
    out = tmp_path / "out.jsonl"
    common = ["--model", "openai/stub", "--base-url", stub.base_url, "--out", str(out)]
    done = chatjudge_cli("generate", str(data), *common)
    assert done.returncode == 2, done.stderr
    said = " ".join(done.stderr.split())
    assert "row 2, field '(row)': unparseable JSON line: nested more than 200 levels" in said
    assert "Traceback" not in done.stderr
    assert stub.stats.requests == 0 and not out.exists()


def test_writing_over_the_input_loses_no_row(tmp_path: Path) -> None:
    rows = dialogues(3)
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    before = data.read_bytes()
    try:
        chatjudge.generate(data, lambda messages: "reply", out=data)
    except UsageError:  # refusing is fine, with the input untouched
        assert data.read_bytes() == before
    else:  # so is writing safely over it
        got = read_jsonl(data)
        assert [r["id"] for r in got] == [r["id"] for r in rows]
        assert [r["response"] for r in got] == ["reply"] * 3


def test_a_usage_column_that_is_not_a_dict_is_refused_or_replaced(tmp_path: Path) -> None:
    # A CSV round trip turns the usage dict into text, for instance.
    rows = [{"id": "a", "prompt": "hi", "usage": '{"response": {"calls": 1}}'}]
    try:
        out = chatjudge.generate(rows, lambda messages: "reply", out=tmp_path / "o.jsonl")
    except DataValidationError as exc:  # told before anything is sent
        assert "row 1, field 'usage'" in str(exc)
    else:
        row = read_jsonl(out)[0]
        assert row["response"] == "reply" and row["usage"]["response"]["calls"] == 1


# --- 7. the summary ---------------------------------------------------------------------------


def test_summary_counts_tokens_calls_and_cost(stub: StubServer, tmp_path: Path) -> None:
    stub.configure(permanent={"POISON": "503"})
    data = write_jsonl(tmp_path / "d.jsonl", dialogues(6, markers={4: " POISON"}))
    out = chatjudge.generate(
        data,
        "openai/stub",
        out=tmp_path / "out.jsonl",
        base_url=stub.base_url,
        price_in=2.0,
        price_out=10.0,
        **FAST,
    )
    rows = read_jsonl(out)
    ok = [r for r in rows if r["status"] == "ok"]
    assert len(ok) == 5

    summary = summary_of(out)
    assert summary["kind"] == "generation"
    assert summary["model"] == "openai/stub" and summary["field"] == "response"
    assert (summary["n_rows"], summary["n_ok"], summary["n_failed"]) == (6, 5, 1)
    assert summary["failures"] == {"retries exhausted": 1}
    tokens = summary["metrics"]["output_tokens"]
    assert tokens["n"] == 5
    per_row = [r["usage"]["response"]["output_tokens"] for r in ok]
    assert tokens["value"] == pytest.approx(sum(per_row) / len(per_row))
    # tokens have no known range: 5 replies are too few for an interval valid at 5
    assert tokens["ci95"] is None and tokens["too_few"].startswith("too few to say: 5 items")

    usage = summary["usage"]
    assert usage["calls"] == 5 and usage["cached_calls"] == 0  # the failed row's tries: none
    assert usage["input_tokens"] == sum(r["usage"]["response"]["input_tokens"] for r in ok)
    assert usage["output_tokens"] == sum(per_row)
    assert summary["cost_usd"] == pytest.approx(
        (usage["input_tokens"] * 2.0 + usage["output_tokens"] * 10.0) / 1e6
    )
    assert summary["options"]["max_retries"] == 1
    assert summary["options"]["base_url"] == [stub.base_url]
    assert summary["options"]["samples"] == 1

    # Run again: every reply from the store, which costs this invocation nothing; the
    # replies cost what they did.
    chatjudge.generate(
        data, "openai/stub", out=out, base_url=stub.base_url, price_in=2.0, price_out=10.0, **FAST
    )
    again = summary_of(out)
    assert again["usage"]["calls"] == 0 and again["usage"]["cached_calls"] == 5
    assert again["cost_usd"] == summary["cost_usd"] and again["cost"]["invocation_usd"] == 0
    assert again["metrics"]["output_tokens"]["n"] == 5


# --- 8. a Python callable as the model --------------------------------------------------------


def test_callable_model_receives_the_messages(tmp_path: Path) -> None:
    seen: list[Any] = []

    def assistant(messages: list[dict[str, str]]) -> str:
        seen.append(messages)
        return f"{len(messages)} message(s), last: {messages[-1]['content']}"

    rows = dialogues(2)
    rows[1]["history"] = "We talked about cats."
    out = chatjudge.generate(rows, assistant, out=tmp_path / "out.jsonl")

    assert len(seen) == 2
    by_prompt = {m[-1]["content"]: m for m in seen}
    assert by_prompt[rows[0]["prompt"]] == [
        *rows[0]["history"],
        {"role": "user", "content": rows[0]["prompt"]},
    ]
    assert by_prompt[rows[1]["prompt"]] == [
        {"role": "system", "content": "The conversation so far:\nWe talked about cats."},
        {"role": "user", "content": rows[1]["prompt"]},
    ]
    got = read_jsonl(out)
    assert got[0]["response"] == f"3 message(s), last: {rows[0]['prompt']}"
    assert got[1]["response"] == f"2 message(s), last: {rows[1]['prompt']}"
    assert (
        summary_of(out)["model"]
        == "python/test_callable_model_receives_the_messages.<locals>.assistant"
    )


def test_callable_model_errors_fail_only_their_row(tmp_path: Path) -> None:
    calls: dict[str, int] = {}

    async def assistant(messages: list[dict[str, str]]) -> str:
        prompt = messages[-1]["content"]
        calls[prompt] = calls.get(prompt, 0) + 1
        if "orbit" in prompt:
            raise ValueError("no rhyme for orbit")
        if "saffron" in prompt:
            raise ServerError("overloaded", status=503)
        return "rhyme"

    rows = dialogues(4)
    out = chatjudge.generate(rows, assistant, out=tmp_path / "out.jsonl", **FAST)
    got = read_jsonl(out)
    assert [r["status"] for r in got] == ["ok", "failed", "failed", "ok"]
    assert got[1]["error"].startswith("refused:") and "no rhyme for orbit" in got[1]["error"]
    assert got[2]["error"].startswith("retries exhausted:") and "overloaded" in got[2]["error"]
    assert calls[rows[1]["prompt"]] == 1 and calls[rows[2]["prompt"]] == 2
    assert all("response" not in got[i] for i in (1, 2))
    assert summary_of(out)["failures"] == {"refused": 1, "retries exhausted": 1}


# --- samples: tries of one task ------------------------------------------------------------


def test_samples_are_replies_with_their_own_seeds_and_tries_of_one_task(
    stub: StubServer, tmp_path: Path
) -> None:
    stub.configure(record=True, seeded=True)  # a sampling model: its reply follows the seed
    rows = dialogues(3)
    for row in rows:
        row["baseline_model_response"] = "A short answer."
    data = write_jsonl(tmp_path / "rows.jsonl", rows)
    out = tmp_path / "cand.jsonl"
    args = ("generate", str(data), "-m", "openai/stub", "--base-url", stub.base_url,
            "--samples", "3", "--seed", "5", "--out", str(out), "--quiet")  # fmt: skip
    done = chatjudge_cli(*args)
    assert done.returncode == 0, done.stderr
    written = read_jsonl(out)
    assert [(r["id"], r["sample"]) for r in written] == [
        (f"{row['id']}#{k}", k) for row in rows for k in range(3)
    ]  # input order, then sample
    assert sorted({r["body"]["seed"] for r in stub.stats.recorded}) == [5, 6, 7]
    for i in range(3):  # one row's samples: distinct replies to the same messages
        replies = {r["response"] for r in written[3 * i : 3 * i + 3]}
        assert len(replies) == 3
    summary = summary_of(out)
    assert summary["n_ok"] == 9 and summary["n_rows"] == 3
    assert summary["options"]["samples"] == 3 and summary["metrics"]["output_tokens"]["n"] == 9
    sent = stub.stats.requests
    assert chatjudge_cli(*args).returncode == 0 and stub.stats.requests == sent  # resumed

    # judged, the samples are tries of their row: pass^k of each 0/1 metric, k = 1..3
    run = tmp_path / "run"
    done = chatjudge_cli("run", str(out), "-p", "pairwise-chat-quality", "--judge", "openai/stub",
                         "--base-url", stub.base_url, "--out", str(run), "--quiet")  # fmt: skip
    assert done.returncode == 0, done.stderr
    judged = json.loads((run / "summary.json").read_text())
    assert judged["pass_k"]["n_tasks"] == 3 and judged["pass_k"]["max_k"] == 3
    assert judged["pass_k"]["metrics"] == ["candidate_win_rate", "baseline_win_rate", "tie_rate"]
    results = read_jsonl(run / "results.jsonl")
    wins = [[r["scores"]["pairwise_choice"] == "CANDIDATE" for r in results
             if r["id"].startswith(f"{row['id']}#")] for row in rows]  # fmt: skip
    hat3 = sum(all(w) for w in wins) / 3
    assert judged["metrics"]["candidate_win_rate_pass_hat_3"]["value"] == pytest.approx(hat3)
    at1 = sum(sum(w) / 3 for w in wins) / 3
    assert judged["metrics"]["candidate_win_rate_pass_at_1"]["value"] == pytest.approx(at1)
