"""`--executor ray` on a local Ray cluster (2 CPUs, no dashboard, one per module) against
stand-in servers on loopback: the same results as one machine, a killed worker, a killed
driver, cluster-wide rate limits, the local judge as actors, and keys that stay put."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import ray
from ray import cloudpickle

import chatjudge
from chatjudge import evaluate
from chatjudge.errors import AuthError, UsageError
from chatjudge.models import get_model
from chatjudge.options import ClientOptions
from chatjudge.ray_executor.remote import ACTOR_PREFIX
from chatjudge.ray_executor.worker_spec import WorkerSpec
from tests.ray_executor.local import local_cluster
from tests.runner.conftest import pointwise_rows, read_results, write_jsonl
from tests.support.protocols import POLITE
from tests.support.stub_openai import StubServer

ROOT = Path(__file__).resolve().parents[2]
SECRET = "sk-test-RAY-WORKERS-ONLY-7d1e"
FAST = {"retry_wait": 0.01, "report": False}


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A local cluster; its workers inherit OPENAI_API_KEY=SECRET, this process does not."""
    with local_cluster(SECRET) as address:
        yield address


def _judge(stub: StubServer, rows, out: Path, protocol="interactivity-accuracy", **options):
    return evaluate(
        rows, protocol, "openai/stub", out, base_url=stub.base_url, **{**FAST, **options}
    )


def _comparable(run_dir: Path) -> dict:
    """What a run directory says, less what differs between any two runs (timings)."""
    results = read_results(run_dir)
    for record in results.values():
        for call in record["calls"]:
            call.pop("latency")
    summary = json.loads((run_dir / "summary.json").read_text())
    summary.pop("created")
    info = json.loads((run_dir / "run.json").read_text())
    info["config"].pop("executor")
    with sqlite3.connect(run_dir / "calls.sqlite") as db:
        store = sorted(db.execute("SELECT key, model, raw FROM calls"))
    files = sorted(p.name for p in run_dir.iterdir())
    return {"results": results, "summary": summary, "run": info, "store": store, "files": files}


def _actors() -> list:
    """The live chatjudge workers of the cluster (one may die while they are listed)."""
    found = []
    for a in ray.util.list_named_actors(all_namespaces=True):
        if a["name"].startswith(ACTOR_PREFIX + ":"):
            try:
                found.append(ray.get_actor(a["name"], namespace=a["namespace"]))
            except ValueError:  # gone since it was listed
                continue
    return found


def _no_worker_left() -> bool:
    """Whether every chatjudge worker is gone (`ray.kill` is asynchronous: wait a little)."""
    deadline = time.monotonic() + 15
    while _actors() and time.monotonic() < deadline:
        time.sleep(0.1)
    return _actors() == []


def _pairwise_rows(n: int) -> list[dict]:
    return [
        {
            "id": f"p{i}",
            "history": [{"role": "user", "content": f"Hello {i}"}],
            "prompt": f"Name a prime larger than {i}.",
            "baseline_model_response": f"{i + 1} maybe",
            "response": f"The next prime after {i} is worth computing: {i + 2}?",
        }
        for i in range(n)
    ]


def test_results_summary_and_store_are_those_of_one_machine(
    cluster: str, stub: StubServer, tmp_path: Path
) -> None:
    for protocol, rows in (
        ("interactivity-accuracy", pointwise_rows(30)),
        ("pairwise-chat-quality", _pairwise_rows(20)),
    ):
        local = _judge(stub, rows, tmp_path / f"{protocol}-local", protocol, report=True)
        on_ray = _judge(
            stub, rows, tmp_path / f"{protocol}-ray", protocol, report=True, executor="ray"
        )
        assert on_ray.summary["n_ok"] == len(rows)
        assert _comparable(tmp_path / f"{protocol}-ray") == _comparable(
            tmp_path / f"{protocol}-local"
        )
        info = json.loads((tmp_path / f"{protocol}-ray" / "run.json").read_text())
        assert info["config"]["executor"] == "ray"
        assert local.summary["metrics"] == on_ray.summary["metrics"]
    assert _no_worker_left()  # a finished run leaves no worker behind


def test_a_killed_worker_costs_only_its_calls_in_flight(
    cluster: str, stub: StubServer, tmp_path: Path
) -> None:
    rows = pointwise_rows(60)
    reference = _judge(stub, rows, tmp_path / "reference")
    stub.stats.reset()
    stub.configure(latency=0.1)
    killed: list[str] = []

    def kill_one_worker() -> None:
        deadline = time.monotonic() + 60
        while stub.stats.requests < 12 and time.monotonic() < deadline:
            time.sleep(0.01)
        # Replies held until the kill: every slot of the run's concurrency is in flight,
        # both workers' (each is given calls as the less loaded), however slow the machine.
        stub.hold()
        try:
            while stub.stats.in_flight < 8 and time.monotonic() < deadline:
                time.sleep(0.01)
            actors = _actors()
            sent = stub.stats.requests
            ray.kill(actors[0])
            killed.append(str(actors[0]))
            # `ray.kill` is asynchronous: held until the worker's connections close or its
            # calls are sent again.
            while stub.stats.in_flight >= 8 and stub.stats.requests == sent:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.01)
        finally:
            stub.release()

    killer = threading.Thread(target=kill_one_worker)
    killer.start()
    result = _judge(stub, rows, tmp_path / "run", executor="ray", workers=2, concurrency=8)
    killer.join()
    assert killed
    assert result.summary["n_ok"] == 60 and result.summary["n_failed"] == 0
    assert (
        _comparable(tmp_path / "run")["results"] == _comparable(tmp_path / "reference")["results"]
    )
    assert reference.summary["metrics"] == result.summary["metrics"]
    # Sent again: at most what the killed worker had in flight (the run's concurrency).
    assert 60 < stub.stats.requests <= 60 + 8


def test_a_killed_driver_resumes_with_or_without_ray(
    cluster: str, stub: StubServer, tmp_path: Path
) -> None:
    stub.configure(latency=0.05)
    rows = pointwise_rows(100)
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    out = tmp_path / "run"
    args = ["run", str(data), "-p", "interactivity-accuracy", "-j", "openai/stub"]
    args += ["--base-url", stub.base_url, "--out", str(out), "--concurrency", "4", "--quiet"]
    env = {**os.environ, "RAY_ADDRESS": cluster}
    proc = subprocess.Popen(
        [sys.executable, "-m", "chatjudge.cli", *args, "--executor", "ray"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    results = out / "results.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if results.exists() and len(results.read_text().splitlines()) >= 30:
            break
        time.sleep(0.02)
    assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    finished = [json.loads(line) for line in results.read_text().splitlines() if line.endswith("}")]
    assert 30 <= len(finished) < 100
    before = stub.stats.requests
    done = subprocess.run(  # resumed on one machine
        [sys.executable, "-m", "chatjudge.cli", *args], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    assert stub.stats.requests - before <= 100 - len(finished)
    assert stub.stats.requests <= 100 + 4  # at most the calls in flight at the kill, twice
    assert stub.stats.max_answers <= 2
    final = read_results(out)
    assert len(final) == 100 and all(r["status"] == "ok" for r in final.values())
    again = subprocess.run(  # and once more on Ray: nothing is left to send
        [sys.executable, "-m", "chatjudge.cli", *args, "--executor", "ray"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert again.returncode == 0, again.stderr
    assert stub.stats.requests - before <= 100 - len(finished)


def test_rate_limits_hold_for_the_whole_cluster(
    cluster: str, stub: StubServer, tmp_path: Path
) -> None:
    stub.configure(latency=0.0)
    started = time.monotonic()
    result = _judge(
        stub,
        pointwise_rows(30),
        tmp_path / "run",
        executor="ray",
        workers=2,
        concurrency=16,
        requests_per_minute=600,
    )
    assert result.summary["n_ok"] == 30
    # 10 requests a second for the cluster: 30 need at least 2 s after a first burst of 10
    # (two workers with 10 a second each would take about 1 s).
    assert time.monotonic() - started >= 2.0


def test_the_local_judge_runs_as_actors(cluster: str, tmp_path: Path) -> None:
    """One llama.cpp process judging one call at a time, here and on Ray: the same prompts
    in the same order, each reusing the same cached prefix, give the same tokens whatever
    the machine's load (with two, which process got which call could differ; and a call
    timed out on a saturated machine would be sent again onto another cached prefix)."""
    protocol = tmp_path / "polite.toml"
    protocol.write_text(POLITE, encoding="utf-8")
    rows = [{"id": f"r{i}", "response": f"Thanks for asking: it is {i}."} for i in range(4)]
    options = {"report": False, "concurrency": 1, "timeout": 800.0}
    one = evaluate(rows, protocol, "local", tmp_path / "one", local_workers=1, **options)
    on_ray = evaluate(
        rows, protocol, "local", tmp_path / "ray", executor="ray", workers=1, **options
    )
    assert on_ray.summary["n_ok"] == one.summary["n_ok"] == 4
    assert _comparable(tmp_path / "ray")["results"] == _comparable(tmp_path / "one")["results"]


def test_simulate_and_generate_on_ray_give_the_same_rows(cluster: str, tmp_path: Path) -> None:
    questions = [
        {"id": f"q{i}", "question": f"What is {i} + {i}?", "answer": str(2 * i)} for i in range(6)
    ]
    prompts = [{"id": f"g{i}", "prompt": f"Say {i}."} for i in range(6)]
    with (
        StubServer(latency=0.002) as assistant,
        StubServer(latency=0.002, user_ends_after=2) as user,
    ):
        options = {
            "assistant_base_url": assistant.base_url,
            "user_base_url": user.base_url,
            "max_turns": 4,
            "retry_wait": 0.01,
        }
        simulated = {
            executor: chatjudge.simulate(
                questions,
                "openai/assistant",
                "openai/user",
                tmp_path / f"sim-{executor}.jsonl",
                executor=executor,
                **options,
            ).read_text()
            for executor in ("local", "ray")
        }
        generated = {
            executor: chatjudge.generate(
                prompts,
                "openai/assistant",
                out=tmp_path / f"gen-{executor}.jsonl",
                executor=executor,
                base_url=assistant.base_url,
            ).read_text()
            for executor in ("local", "ray")
        }
    sim_rows = [json.loads(line) for line in simulated["ray"].splitlines()]
    assert len(sim_rows) == 6 and all(r["ended"] == "user" for r in sim_rows)
    assert simulated["ray"] == simulated["local"]
    assert generated["ray"] == generated["local"]


def test_keys_come_from_the_workers_and_are_written_nowhere(
    cluster: str, stub: StubServer, tmp_path: Path
) -> None:
    stub.configure(api_key=SECRET)  # only a request carrying the workers' key is answered
    assert "OPENAI_API_KEY" not in os.environ
    result = _judge(stub, pointwise_rows(5), tmp_path / "run", executor="ray", report=True)
    assert result.summary["n_ok"] == 5
    model = get_model("openai/stub", ClientOptions(base_url=(stub.base_url,)))
    assert SECRET.encode() not in cloudpickle.dumps(WorkerSpec.of(model))
    for path in (tmp_path / "run").iterdir():
        assert SECRET.encode() not in path.read_bytes(), path.name
    session = Path(ray._private.worker._global_node.get_session_dir_path())
    for path in session.rglob("*"):
        if path.is_file() and not path.is_symlink() and path.stat().st_size < 50_000_000:
            assert SECRET.encode() not in path.read_bytes(), path


def test_a_worker_without_its_key_stops_the_run_before_any_call(
    cluster: str, tmp_path: Path
) -> None:
    with pytest.raises(AuthError, match="ANTHROPIC_API_KEY"):
        evaluate(
            pointwise_rows(3),
            "interactivity-accuracy",
            "anthropic/claude",
            tmp_path / "r",
            executor="ray",
            **FAST,
        )
    assert _no_worker_left()
    assert not (tmp_path / "r" / "results.jsonl").exists()
    # Two models: the one that could start leaves no worker behind when the other cannot.
    with StubServer() as assistant, pytest.raises(AuthError, match="ANTHROPIC_API_KEY"):
        chatjudge.simulate(
            [{"question": "Why?", "answer": "Because."}],
            "openai/assistant",
            "anthropic/claude",
            tmp_path / "s.jsonl",
            assistant_base_url=assistant.base_url,
            executor="ray",
        )
    assert assistant.stats.requests == 0
    assert _no_worker_left()


def test_executor_options_are_checked(
    monkeypatch: pytest.MonkeyPatch, stub: StubServer, tmp_path: Path
) -> None:
    with pytest.raises(UsageError, match="--executor ray only"):
        _judge(stub, pointwise_rows(2), tmp_path / "a", workers=2)
    with pytest.raises(UsageError, match="executor"):
        _judge(stub, pointwise_rows(2), tmp_path / "b", executor="dask")
    monkeypatch.setitem(sys.modules, "ray", None)  # as without the extra
    with pytest.raises(UsageError, match=r"pip install 'chatjudge\[ray\]'"):
        _judge(stub, pointwise_rows(2), tmp_path / "c", executor="ray")


def test_an_unreachable_cluster_is_exit_2_at_once_naming_the_address(
    stub: StubServer, tmp_path: Path
) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", pointwise_rows(2))
    env = {**os.environ, "RAY_ADDRESS": "127.0.0.1:1"}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "chatjudge.cli", "run", str(data), "-p", "interactivity-accuracy",
         "-j", "openai/stub", "--base-url", stub.base_url, "--executor", "ray",
         "--out", str(tmp_path / "run")],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "RAY_ADDRESS=127.0.0.1:1" in done.stderr and "unset RAY_ADDRESS" in done.stderr
    assert time.monotonic() - started < 30
    assert stub.stats.requests == 0


def test_a_cluster_that_never_answers_is_given_up_within_the_bound(tmp_path: Path) -> None:
    """A port that accepts connections but is no Ray head: Ray would wait for minutes;
    chatjudge gives up after CONNECT_TIMEOUT (3 s here) with the address and the fix."""
    import socket

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        script = (
            "import chatjudge.ray_executor as c\n"
            "c.CONNECT_TIMEOUT = 3\n"
            "try:\n    c.connect()\nexcept c.UsageError as e:\n    print(e)\n"
        )
        env = {**os.environ, "RAY_ADDRESS": f"127.0.0.1:{port}"}
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60
        )
    assert f"RAY_ADDRESS=127.0.0.1:{port} did not answer within 3 s" in done.stdout, done.stderr
    assert time.monotonic() - started < 40
