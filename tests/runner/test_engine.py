"""The run engine against a real HTTP server on loopback with injected faults."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

from chatjudge import evaluate
from chatjudge.options import RunConfig
from chatjudge.protocols import get_protocol
from chatjudge.runner import build_engine
from tests.runner.conftest import pointwise_rows, read_results
from tests.runner.test_tool_trajectory import ROWS, write_rows
from tests.support.stub_openai import StubServer

FAST = {"retry_wait": 0.01, "concurrency": 8}


def _run(stub: StubServer, rows, out: Path, **options):
    return evaluate(
        rows,
        "interactivity-accuracy",
        "openai/stub",
        out,
        base_url=stub.base_url,
        report=False,
        **{**FAST, **options},
    )


def _scores(run_dir: Path) -> dict[str, dict]:
    return {k: r["scores"] for k, r in read_results(run_dir).items()}


def test_transient_faults_give_the_same_results_as_a_fault_free_run(
    stub: StubServer, tmp_path: Path
) -> None:
    rows = pointwise_rows(60)
    clean = _run(stub, rows, tmp_path / "clean")
    assert clean.summary["n_ok"] == 60
    stub.stats.reset()
    stub.configure(
        fault_rate=0.3,
        fault_kinds=["429", "500", "503", "reset", "malformed", "truncated"],
        faulty_attempts=2,
    )
    faulty = _run(stub, rows, tmp_path / "faulty")
    assert sum(stub.stats.faults.values()) >= 10  # faults really happened
    assert faulty.summary["n_ok"] == 60 and faulty.summary["n_failed"] == 0
    assert _scores(tmp_path / "faulty") == _scores(tmp_path / "clean")
    assert faulty.summary["metrics"] == clean.summary["metrics"]
    assert stub.stats.max_answers == 1  # no item was judged twice


def test_retry_cap_records_failed_items_with_their_cause(stub: StubServer, tmp_path: Path) -> None:
    stub.configure(permanent={"POISON": "500"})
    result = _run(stub, pointwise_rows(5, marker="POISON"), tmp_path / "run", max_retries=2)
    results = read_results(tmp_path / "run")
    assert result.summary["n_failed"] == 1 and result.summary["n_ok"] == 4
    failed = results["item-0000"]
    assert failed["status"] == "failed" and failed["scores"] == {}
    assert failed["error"].startswith("ServerError: HTTP 500")
    assert failed["calls"][0]["raw"] is None
    assert all(
        r["status"] == "ok" and r["error"] is None for k, r in results.items() if k != "item-0000"
    )
    assert stub.stats.faults["500"] == 3  # first attempt + 2 retries, then given up


def test_a_hung_call_times_out_and_is_retried(stub: StubServer, tmp_path: Path) -> None:
    stub.configure(fault_rate=1.0, fault_kinds=["hang"], faulty_attempts=1)
    result = _run(stub, pointwise_rows(3), tmp_path / "run", timeout=0.5)
    assert result.summary["n_ok"] == 3
    assert stub.stats.faults["hang"] == 3


def test_retry_after_is_honoured(stub: StubServer, tmp_path: Path) -> None:
    stub.configure(fault_rate=1.0, fault_kinds=["429"], faulty_attempts=1, retry_after=0.6)
    started = time.monotonic()
    result = _run(stub, pointwise_rows(4), tmp_path / "run")
    assert time.monotonic() - started >= 0.6
    assert result.summary["n_ok"] == 4 and stub.stats.faults["429"] == 4


def test_unparseable_replies_are_retried_then_kept_for_reparsing(
    stub: StubServer, tmp_path: Path
) -> None:
    import sqlite3

    stub.configure(permanent={"GARBLE": "malformed"})
    rows = pointwise_rows(3, marker="GARBLE")
    first = _run(stub, rows, tmp_path / "run")
    bad = read_results(tmp_path / "run")["item-0000"]
    assert first.summary["n_failed"] == 1
    assert bad["error"].startswith("VerdictError") and bad["raw"]  # the raw reply is kept
    assert stub.stats.faults["malformed"] == 3  # asked again twice (parse_retries), then kept
    # A "parser fix" is simulated by correcting the stored reply: re-running re-parses the
    # store and sends nothing.
    requests = stub.stats.requests
    db = sqlite3.connect(tmp_path / "run" / "calls.sqlite")
    fixed = (
        '{"interactivity": {"thought": "t", "score": 3}, "accuracy": {"thought": "t", "score": 1}}'
    )
    db.execute("UPDATE calls SET raw = ? WHERE raw = ?", (fixed, bad["raw"]))
    db.commit()
    db.close()
    second = _run(stub, rows, tmp_path / "run")
    assert stub.stats.requests == requests
    assert second.summary["n_ok"] == 3
    assert read_results(tmp_path / "run")["item-0000"]["scores"] == {
        "interactivity": 3,
        "accuracy": 1,
    }


def test_rerun_resumes_from_the_store_and_no_cache_sends_again(
    stub: StubServer, tmp_path: Path
) -> None:
    rows = pointwise_rows(10)
    first = _run(stub, rows, tmp_path / "run")
    assert stub.stats.requests == 10 and first.summary["usage"]["cached_calls"] == 0
    # Concurrency and timeout are not part of the cache key.
    again = _run(stub, rows, tmp_path / "run", concurrency=3, timeout=30)
    assert stub.stats.requests == 10
    assert again.summary["usage"] == {
        **first.summary["usage"],
        "calls": 0,
        "cached_calls": 10,
        "input_tokens": 0,
        "output_tokens": 0,
    }
    assert again.summary["metrics"] == first.summary["metrics"]
    _run(stub, rows, tmp_path / "run", no_cache=True)
    assert stub.stats.requests == 20
    # What changes a reply is part of the key: another temperature is a new call.
    _run(stub, rows, tmp_path / "run", temperature=0.5, overwrite=True)
    assert stub.stats.requests == 30


def test_samples_are_independent_calls_reduced_per_item(stub: StubServer, tmp_path: Path) -> None:
    rows = pointwise_rows(4)
    result = _run(stub, rows, tmp_path / "run", samples=3, temperature=0.7)
    assert stub.stats.requests == 12 and stub.stats.max_sends == 3
    for record in read_results(tmp_path / "run").values():
        assert [c["sample"] for c in record["calls"]] == [0, 1, 2]
        assert record["agreement"] == 1.0  # the stub answers a prompt the same way each time
    assert result.summary["samples"] == 3


def test_replicas_share_the_load(tmp_path: Path) -> None:
    with StubServer(latency=0.02) as a, StubServer(latency=0.02) as b:
        evaluate(
            pointwise_rows(40),
            "interactivity-accuracy",
            "openai/stub",
            tmp_path / "run",
            base_url=[a.base_url, b.base_url],
            report=False,
            **FAST,
        )
        assert a.stats.requests + b.stats.requests == 40
        assert min(a.stats.requests, b.stats.requests) >= 12


def test_a_server_refusing_response_format_gets_the_instruction(
    stub: StubServer, tmp_path: Path
) -> None:
    stub.configure(reject_response_format=True, record=True)
    result = _run(stub, pointwise_rows(3), tmp_path / "run", concurrency=1)
    assert result.summary["n_ok"] == 3
    body = stub.stats.last_request["body"]
    assert "response_format" not in body
    instruction = get_protocol("interactivity-accuracy").output_instruction
    assert body["messages"][0]["content"].endswith(instruction)


def test_requests_per_minute_paces_the_run(stub: StubServer, tmp_path: Path) -> None:
    started = time.monotonic()
    _run(stub, pointwise_rows(30), tmp_path / "run", concurrency=30, requests_per_minute=600)
    assert time.monotonic() - started >= 1.5  # 10 at once, then 10 a second


def test_cost_from_prices(stub: StubServer, tmp_path: Path) -> None:
    result = _run(stub, pointwise_rows(3), tmp_path / "run", price_in=2.0, price_out=8.0)
    usage = result.summary["usage"]
    expected = usage["input_tokens"] * 2.0 / 1e6 + usage["output_tokens"] * 8.0 / 1e6
    assert usage["input_tokens"] > 0
    assert abs(result.summary["cost_usd"] - expected) < 1e-6


def test_tokens_per_minute_paces_the_run(stub: StubServer, tmp_path: Path) -> None:
    # Each prompt is about 1,000 tokens (length / 4); 60,000 a minute is 1,000 a second.
    started = time.monotonic()
    _run(stub, pointwise_rows(4), tmp_path / "run", concurrency=4, tokens_per_minute=60_000)
    assert time.monotonic() - started >= 2.0
    assert stub.stats.requests == 4


def test_tool_rows_are_judged_in_one_shape_and_their_counts_summarised(
    stub: StubServer, tmp_path: Path
) -> None:
    call = {"id": "t1", "type": "function",
            "function": {"name": "weather", "arguments": '{"city": "Par'}}  # fmt: skip
    normalised = [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "t1", "content": "21 °C"},
        {"role": "assistant", "content": "21 °C."},
    ]
    anthropic = [
        normalised[0],
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "weather",
                                           "input": '{"city": "Par'}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                      "content": "21 °C"}]},
        normalised[3],
    ]  # fmt: skip
    plain = pointwise_rows(2)
    rows = [*plain, {**plain[0], "id": "tools", "chat": anthropic}]
    result = _run(stub, rows, tmp_path / "run")
    assert result.summary["n_ok"] == 3
    assert result.summary["derived_tool_definitions"] == 1
    assert result.summary["unparsed_tool_arguments"] == 1
    results = read_results(tmp_path / "run")
    assert results["tools"]["fields"]["chat"] == normalised
    assert results["item-0000"]["fields"]["chat"] == plain[0]["chat"]
    assert "derived_tool_definitions" not in _run(stub, plain, tmp_path / "plain").summary


def _repeated(rows: list[dict], n: int) -> list[dict]:
    """n rows of the contents of `rows` in turn, each with its own id."""
    return [{**rows[i % len(rows)], "id": f"row-{i:03d}"} for i in range(n)]


def test_identical_calls_in_flight_are_sent_once(stub: StubServer, tmp_path: Path) -> None:
    """60 rows of 3 contents: 3 requests, every row recorded with its verdict, the later
    calls counted as cached, and the results those of a run of the 3 alone."""
    stub.configure(latency=0.05)  # the first calls are still in flight when their twins start
    distinct = pointwise_rows(3)
    result = _run(stub, _repeated(distinct, 60), tmp_path / "run", price_in=2.0, price_out=8.0)
    assert stub.stats.requests == 3
    assert result.summary["n_ok"] == 60
    assert result.summary["usage"]["calls"] == 3 and result.summary["usage"]["cached_calls"] == 57
    alone = _run(stub, distinct, tmp_path / "alone", price_in=2.0, price_out=8.0)
    assert result.summary["cost_usd"] == alone.summary["cost_usd"] > 0
    results = read_results(tmp_path / "run")
    scores = _scores(tmp_path / "alone")
    by_content = {r["chat"][0]["content"]: scores[r["id"]] for r in distinct}
    for i in range(60):
        record = results[f"row-{i:03d}"]
        assert record["scores"] == by_content[distinct[i % 3]["chat"][0]["content"]]
    assert sum(not c["cached"] for r in results.values() for c in r["calls"]) == 3


def test_identical_pairwise_items_send_each_order_once(stub: StubServer, tmp_path: Path) -> None:
    """Pairwise with both orders: 2 distinct calls per content, 6 for 60 rows of 3."""
    stub.configure(latency=0.05)
    rows = [
        {"id": f"p{i}", "history": [], "prompt": f"Question {i}?",
         "baseline_model_response": f"Answer {i}.", "response": f"A better answer {i}."}
        for i in range(3)
    ]  # fmt: skip
    result = evaluate(_repeated(rows, 60), "pairwise-chat-quality", "openai/stub",
                      tmp_path / "run", base_url=stub.base_url, report=False, **FAST)  # fmt: skip
    assert stub.stats.requests == 6
    assert result.summary["n_ok"] == 60 and result.summary["usage"]["cached_calls"] == 114


def test_a_failed_call_is_the_failure_of_its_twins_and_no_score(
    stub: StubServer, tmp_path: Path
) -> None:
    """The first call gives up after its retries: the twins waiting for it record the same
    error, send nothing, and the next run sends the call again."""
    stub.configure(latency=0.05, permanent={"POISON": "500"})
    rows = _repeated(pointwise_rows(2, marker="POISON"), 10)
    result = _run(stub, rows, tmp_path / "run", max_retries=1)
    assert stub.stats.faults["500"] == 2 and stub.stats.requests == 3  # 2 attempts, 1 other
    assert result.summary["n_failed"] == 5 and result.summary["n_ok"] == 5
    failed = [r for r in read_results(tmp_path / "run").values() if r["status"] == "failed"]
    assert {r["error"] for r in failed} == {failed[0]["error"]}
    assert failed[0]["error"].startswith("ServerError: HTTP 500")
    assert all(r["scores"] == {} for r in failed)
    stub.configure(permanent={})
    again = _run(stub, rows, tmp_path / "run", max_retries=1)
    assert again.summary["n_ok"] == 10 and stub.stats.requests == 4


async def test_a_judge_free_run_scores_in_the_callers_loop_and_thread(tmp_path: Path) -> None:
    """A deterministic protocol is one more lane of the run's one loop: its items are
    scored where the run is awaited, not on a second thread and event loop."""
    loop, thread = asyncio.get_running_loop(), threading.get_ident()
    seen: list[tuple[asyncio.AbstractEventLoop, int]] = []

    def on_item(record: dict[str, Any], line: bytes) -> None:
        seen.append((asyncio.get_running_loop(), threading.get_ident()))

    data = write_rows(tmp_path / "rows.jsonl", ROWS)
    config = RunConfig.from_options({}, progress=False)
    engine = build_engine(data, "tool-trajectory", None, tmp_path / "run", column_map=None,
                          config=config)  # fmt: skip
    outcome = await engine.run(on_item)
    assert outcome.summary["n_ok"] == len(ROWS) and outcome.summary["judge"] == "deterministic"
    assert seen == [(loop, thread)] * len(ROWS)
    assert [r["id"] for r in read_results(tmp_path / "run").values()] == [r["id"] for r in ROWS]
