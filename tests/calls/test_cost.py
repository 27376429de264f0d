"""Cost through the real command line: `--max-cost-usd` stops before going over and a
larger budget resumes to the results of an unbudgeted run; `--dry-run` sends nothing and
counts the calls the real run sends; cost per role in `simulate`. A stand-in server counts
the requests. A run whose command line is not the point (an unbudgeted reference, the real
run between two dry runs) goes through the API in this process (`api_run`)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

import chatjudge
from chatjudge.errors import BudgetReachedError
from tests.runner.conftest import pointwise_rows, write_jsonl
from tests.support.budget import largest_worst_case
from tests.support.cli import run_cli, run_process
from tests.support.stub_openai import StubServer

PRICES = ("--price-in", "100", "--price-out", "200")  # USD per million: visible sums


def judge(stub: StubServer, data: Path, out: Path, *extra: str):
    return run_cli(
        "run", str(data), "-p", "interactivity-accuracy", "-j", "openai/stub",
        "--base-url", stub.base_url, "--out", str(out), "--concurrency", "4",
        "--retry-wait", "0.01", *PRICES, *extra, COLUMNS="200",
    )  # fmt: skip


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stand-in's key for the runs made through the API."""
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")


def api_run(stub: StubServer, data: Path, out: Path, **options: object) -> None:
    """`judge`'s run through the API."""
    chatjudge.evaluate(data, "interactivity-accuracy", "openai/stub", out,
                       base_url=stub.base_url, concurrency=4, retry_wait=0.01, price_in=100,
                       price_out=200, **options)  # fmt: skip


def summary(run_dir: Path) -> dict:
    return json.loads((run_dir / "summary.json").read_text())


def verdicts(run_dir: Path) -> dict[str, dict]:
    lines = (run_dir / "results.jsonl").read_text().splitlines()
    return {r["id"]: r["scores"] for r in map(json.loads, lines)}


def dry_run_calls(stdout: str) -> list[str]:
    """The `calls` cell of each role's row of the dry run's table."""
    rows = [line for line in stdout.splitlines() if "openai/" in line and "│" in line]
    return [line.split("│")[2].strip() for line in rows]


def test_a_budget_stops_before_going_over_and_a_larger_one_resumes_to_the_same_results(
    stub: StubServer, tmp_path: Path
) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", pointwise_rows(24))
    api_run(stub, data, tmp_path / "free")
    full_cost = summary(tmp_path / "free")["cost"]["total_usd"]
    full_requests = stub.stats.requests
    assert full_requests == 24 and full_cost > 0
    stub.stats.reset()

    limit = round(full_cost / 2, 4)
    stopped = judge(stub, data, tmp_path / "run", "--max-cost-usd", str(limit))
    assert stopped.returncode == 4, stopped.stderr
    assert "budget" in stopped.stderr and "resumes" in stopped.stderr
    cut = summary(tmp_path / "run")
    assert cut["cost"]["total_usd"] <= limit  # never over
    assert cut["cost"]["budget"] == {
        "max_usd": limit, "spent_usd": cut["cost"]["total_usd"], "reached": True,
        "done": cut["n_items"], "total": 24,
    }  # fmt: skip
    assert 0 < cut["n_items"] < 24 and stub.stats.requests < full_requests
    assert (tmp_path / "run" / "report.html").is_file()  # everything is written
    paid_first = stub.stats.requests
    stub.stats.reset()

    resumed = judge(stub, data, tmp_path / "run", "--max-cost-usd", str(10 * full_cost))
    assert resumed.returncode == 0, resumed.stderr
    assert paid_first + stub.stats.requests == full_requests  # nothing paid twice
    assert verdicts(tmp_path / "run") == verdicts(tmp_path / "free")
    after = summary(tmp_path / "run")["cost"]
    assert after["budget"]["reached"] is False and after["budget"]["done"] == 24
    # The cost is what the results cost in all, as a fresh run's; the spend of each
    # invocation beside it, and the two add up to it.
    assert after["total_usd"] == full_cost and summary(tmp_path / "run")["cost_usd"] == full_cost
    assert 0 < after["invocation_usd"] < full_cost
    assert cut["cost"]["invocation_usd"] == cut["cost"]["total_usd"]
    spent = cut["cost"]["invocation_usd"] + after["invocation_usd"]
    assert spent == pytest.approx(full_cost, abs=1e-5)


def test_a_run_resumed_after_limit_costs_what_a_fresh_run_costs(
    stub: StubServer, tmp_path: Path
) -> None:
    """Rows of repeated contents (each distinct call priced once), judged in halves: the
    resumed run's cost is the fresh run's, its own spend beside it."""
    rows = [{**r, "id": f"r{i}"} for i, r in enumerate(pointwise_rows(6) * 4)]
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    api_run(stub, data, tmp_path / "fresh")
    fresh = summary(tmp_path / "fresh")["cost"]
    assert fresh["total_usd"] == fresh["invocation_usd"] > 0
    assert judge(stub, data, tmp_path / "run", "--limit", "4").returncode == 0
    half = summary(tmp_path / "run")["cost"]
    assert 0 < half["total_usd"] == half["invocation_usd"] < fresh["total_usd"]
    assert judge(stub, data, tmp_path / "run").returncode == 0
    resumed = summary(tmp_path / "run")
    assert resumed["cost"]["total_usd"] == resumed["cost_usd"] == fresh["total_usd"]
    assert resumed["cost"]["roles"]["judge"]["usd"] == fresh["roles"]["judge"]["usd"]
    assert resumed["cost"]["invocation_usd"] == pytest.approx(
        fresh["total_usd"] - half["total_usd"], abs=1e-5
    )
    assert resumed["cost"]["roles"]["judge"]["invocation_usd"] == resumed["cost"]["invocation_usd"]


def cut_at_half_cost(command: tuple[str, ...], tmp_path: Path, name: str) -> tuple[float, dict]:
    """Run `command` unbudgeted (to `all-NAME.jsonl`), then with half its cost as budget
    (to `NAME.jsonl`), which must stop at it (exit 4): the budget and that run's summary."""
    assert run_cli(*command, "--out", str(tmp_path / f"all-{name}.jsonl")).returncode == 0
    full = json.loads((tmp_path / f"all-{name}.summary.json").read_text())["cost"]["total_usd"]
    limit = round(full / 2, 4)
    cut = run_cli(*command, "--out", str(tmp_path / f"{name}.jsonl"), "--max-cost-usd", str(limit))
    assert cut.returncode == 4, cut.stderr
    return limit, json.loads((tmp_path / f"{name}.summary.json").read_text())


def test_generate_and_simulate_stop_at_their_budget_with_what_finished_written(
    stub: StubServer, tmp_path: Path
) -> None:
    prompts = write_jsonl(tmp_path / "p.jsonl", [
        {"id": f"p{i}", "prompt": f"Question {i}: say hi"} for i in range(30)
    ])  # fmt: skip
    common = ("--retry-wait", "0.01", "--concurrency", "2", *PRICES, "--max-tokens", "50")
    generate = ("generate", str(prompts), "-m", "openai/stub", "--base-url", stub.base_url,
                *common)  # fmt: skip
    limit, gen_summary = cut_at_half_cost(generate, tmp_path, "gen")
    rows = (tmp_path / "gen.jsonl").read_text().splitlines()
    assert gen_summary["cost"]["total_usd"] <= limit
    assert 0 < len(rows) == gen_summary["cost"]["budget"]["done"] < 30
    assert all(json.loads(r)["status"] == "ok" for r in rows)  # cut rows are not failures

    questions = write_jsonl(tmp_path / "q.jsonl", [
        {"id": f"q{i}", "question": f"Question {i}: what is 2+{i}?", "answer": str(2 + i)}
        for i in range(12)
    ])  # fmt: skip
    stub.configure(user_ends_after=2)
    simulate = ("simulate", str(questions), "-a", "openai/stub", "--assistant-base-url",
                stub.base_url, "--max-turns", "3", "--user-max-tokens", "50", *common)  # fmt: skip
    limit, sim_summary = cut_at_half_cost(simulate, tmp_path, "sim")
    cost = sim_summary["cost"]
    assert cost["total_usd"] <= limit and set(cost["roles"]) == {"assistant", "simulated_user"}
    finished = [json.loads(r) for r in (tmp_path / "sim.jsonl").read_text().splitlines()]
    assert 0 < len(finished) == cost["budget"]["done"] < 12
    assert all(r["status"] == "ok" and r["ended"] == "user" for r in finished)


def test_cost_per_role_in_simulate_adds_up_at_each_models_price(tmp_path: Path) -> None:
    """Two models, two prices (a --prices file): each role is priced at its own model's
    price from its own tokens, and the total is their sum."""
    with StubServer(latency=0.002) as assistant, StubServer(latency=0.002) as user:
        user.configure(user_ends_after=2)
        questions = write_jsonl(tmp_path / "q.jsonl", [
            {"id": f"q{i}", "question": f"What is 3+{i}?", "answer": str(3 + i)} for i in range(5)
        ])  # fmt: skip
        prices = tmp_path / "prices.toml"
        prices.write_text(
            '[models."openai/assistant"]\ninput = 2.0\noutput = 8.0\n'
            '[models."openai/user"]\ninput = 0.5\noutput = 1.0\n'
        )
        done = run_cli(
            "simulate", str(questions), "-a", "openai/assistant", "-u", "openai/user",
            "--assistant-base-url", assistant.base_url, "--user-base-url", user.base_url,
            "--max-turns", "4", "--prices", str(prices), "--out", str(tmp_path / "s.jsonl"),
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    s = json.loads((tmp_path / "s.summary.json").read_text())
    expected = {
        "assistant": (s["usage"]["assistant"], 2.0, 8.0),
        "simulated_user": (s["usage"]["simulated_user"], 0.5, 1.0),
    }
    for role, (usage, p_in, p_out) in expected.items():
        usd = (usage["input_tokens"] * p_in + usage["output_tokens"] * p_out) / 1e6
        assert s["cost"]["roles"][role]["usd"] == pytest.approx(usd, abs=1e-6)
        assert s["cost"]["roles"][role]["source"] == f"--prices {prices}"
    assert s["cost"]["total_usd"] == pytest.approx(
        sum(r["usd"] for r in s["cost"]["roles"].values()), abs=1e-6
    )
    assert "cost · assistant" in done.stdout and "cost · simulated_user" in done.stdout


def test_a_budget_with_an_unknown_price_is_exit_2_before_anything_is_sent(
    stub: StubServer, tmp_path: Path
) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", pointwise_rows(3))
    done = run_cli(
        "run", str(data), "-p", "interactivity-accuracy", "-j", "openai/stub",
        "--base-url", stub.base_url, "--out", str(tmp_path / "run"), "--max-cost-usd", "1",
    )  # fmt: skip
    assert done.returncode == 2
    assert "price of openai/stub is unknown" in done.stderr and "--price-in" in done.stderr
    assert stub.stats.requests == 0
    assert not (tmp_path / "run" / "results.jsonl").exists()


def test_a_dry_run_sends_nothing_and_counts_what_the_real_run_sends(
    stub: StubServer, tmp_path: Path
) -> None:
    """Before anything, after a run cut by its budget, and for generate: the dry run's
    count of calls is the real run's count of requests; nothing is sent, nothing written."""
    data = write_jsonl(tmp_path / "d.jsonl", pointwise_rows(10))
    out = tmp_path / "run"
    dry = judge(stub, data, out, "--dry-run", "--samples", "2")
    assert dry.returncode == 0, dry.stderr
    assert dry_run_calls(dry.stdout) == ["20"] and stub.stats.requests == 0
    assert not out.exists()  # nothing written, not even the directory
    with pytest.raises(BudgetReachedError):
        api_run(stub, data, out, samples=2, max_cost_usd=1.5)
    sent = stub.stats.requests
    assert 0 < sent < 20
    stub.stats.reset()
    again = judge(stub, data, out, "--dry-run", "--samples", "2")
    assert dry_run_calls(again.stdout) == [str(20 - sent)] and stub.stats.requests == 0
    api_run(stub, data, out, samples=2)
    assert stub.stats.requests == 20 - sent

    prompts = write_jsonl(tmp_path / "p.jsonl", [
        {"id": f"p{i}", "prompt": f"Question {i}: say hi"} for i in range(7)
    ])  # fmt: skip
    gen = ("generate", str(prompts), "-m", "openai/stub", "--base-url", stub.base_url,
           "--out", str(tmp_path / "gen" / "g.jsonl"), *PRICES)  # fmt: skip
    stub.stats.reset()
    dry = run_cli(*gen, "--dry-run", COLUMNS="200")
    assert dry.returncode == 0 and dry_run_calls(dry.stdout) == ["7"]
    assert stub.stats.requests == 0 and not (tmp_path / "gen").exists()
    chatjudge.generate(prompts, "openai/stub", out=tmp_path / "gen" / "g.jsonl",
                       base_url=stub.base_url, price_in=100, price_out=200)  # fmt: skip
    assert stub.stats.requests == 7
    assert dry_run_calls(run_cli(*gen, "--dry-run", COLUMNS="200").stdout) == ["0"]


def test_a_dry_run_of_simulate_gives_the_range_from_one_turn_to_the_cap(
    stub: StubServer, tmp_path: Path
) -> None:
    questions = write_jsonl(tmp_path / "q.jsonl", [
        {"id": f"q{i}", "question": f"What is 5+{i}?", "answer": str(5 + i)} for i in range(6)
    ])  # fmt: skip
    args = ("simulate", str(questions), "-a", "openai/stub", "--assistant-base-url",
            stub.base_url, "--max-turns", "4", "--out", str(tmp_path / "s.jsonl"),
            *PRICES)  # fmt: skip
    dry = run_cli(*args, "--dry-run", COLUMNS="200")
    assert dry.returncode == 0, dry.stderr
    assert dry_run_calls(dry.stdout) == ["6-24", "12-24"]  # assistant, simulated user
    assert stub.stats.requests == 0
    stub.configure(user_ends_after=2)
    chatjudge.simulate(questions, "openai/stub", out=tmp_path / "s.jsonl",
                       assistant_base_url=stub.base_url, max_turns=4, price_in=100,
                       price_out=200)  # fmt: skip
    assert 6 + 12 <= stub.stats.requests <= 24 + 24
    assert dry_run_calls(run_cli(*args, "--dry-run", COLUMNS="200").stdout) == ["0", "0"]


def test_a_dry_run_counts_openai_tokens_with_the_shipped_encoding_offline(
    tmp_path: Path,
) -> None:
    """gpt-4o's tokens by tiktoken's o200k_base, read from the files chatjudge ships: with
    every connection refused (a proxy on a closed port) and tiktoken's own cache elsewhere."""
    import tiktoken  # noqa: F401 - the test needs it installed

    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    data = write_jsonl(tmp_path / "d.jsonl", pointwise_rows(3))
    done = run_process(  # a process: this one may have read the encoding already
        "run", str(data), "-p", "interactivity-accuracy", "-j", "openai/gpt-4o",
        "--out", str(tmp_path / "run"), "--dry-run", key="sk-unused-in-a-dry-run",
        HTTPS_PROXY=f"http://127.0.0.1:{port}", HTTP_PROXY=f"http://127.0.0.1:{port}",
        TIKTOKEN_CACHE_DIR=str(tmp_path / "empty-cache"), COLUMNS="200",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "tiktoken o200k_base" not in done.stdout  # exact: no approximation note
    assert "approximation" not in done.stdout
    assert dry_run_calls(done.stdout) == ["3"]
    assert "genai-prices" not in done.stderr
    assert not (tmp_path / "empty-cache").exists() or not any((tmp_path / "empty-cache").iterdir())


# A one-line protocol over the rows' own texts: the tokens are counted on the model's
# vocabulary and chat template whatever the template (a built-in's ~1,000 prompt tokens cost
# the embedded model ~10 s of CPU a call).
REPLY_CHECK = """name = "reply-check"
kind = "pointwise"
template = "Does this reply answer the question? Question: {prompt} Reply: {response}"

[[fields]]
name = "prompt"

[[fields]]
name = "response"

[[scores]]
name = "answers"
path = "answers"
min = 1
max = 3
"""


def test_a_dry_run_counts_the_local_judges_input_tokens_exactly(tmp_path: Path) -> None:
    """The GGUF model's own vocabulary and chat template: the dry run's input tokens are
    the ones llama.cpp reports for the same calls."""
    examples = Path(__file__).resolve().parents[2] / "examples" / "pairwise_chat_quality.jsonl"
    protocol = tmp_path / "reply-check.toml"
    protocol.write_text(REPLY_CHECK, encoding="utf-8")
    estimate = chatjudge.estimate(examples, protocol, "local", tmp_path / "r", limit=3,
                                  max_tokens=32)  # fmt: skip
    (judge_account,) = estimate.roles
    assert judge_account.exact and judge_account.tokenizer.startswith("llama.cpp vocabulary")
    assert judge_account.calls == (3, 3)  # 3 rows, one call each
    assert estimate.total_usd == (0.0, 0.0)  # local: free
    done = chatjudge.evaluate(examples, protocol, "local", tmp_path / "r", limit=3,
                              max_tokens=32, report=False, local_workers=1)  # fmt: skip
    assert judge_account.input_tokens[0] == done.summary["usage"]["input_tokens"]


# --- the budget at high concurrency: spent to within one call's worst case ---------------

P_IN, P_OUT = 100.0, 200.0  # USD per million tokens, as PRICES


def spent_to_within_one_worst_case(cost: dict, stub: StubServer) -> None:
    """The spend ends below the budget by less than the largest call's worst case."""
    budget = cost["budget"]
    worst = largest_worst_case(stub.stats.recorded, P_IN, P_OUT)
    assert budget["reached"] is True
    assert budget["spent_usd"] <= budget["max_usd"]
    assert budget["max_usd"] - budget["spent_usd"] <= worst, (budget, worst)


def test_run_at_concurrency_100_spends_its_budget_and_a_larger_one_resumes(
    stub: StubServer, tmp_path: Path
) -> None:
    """100 calls in flight would reserve 100 worst cases, far more than the budget: calls
    wait for room instead of stopping the run, which spends to within one worst case of
    the budget; the same command with a larger one finishes, sending no call twice. A
    budget below one call's worst case sends nothing and still writes everything."""
    data = write_jsonl(tmp_path / "d.jsonl", pointwise_rows(150))
    stub.configure(record=True, latency=0.02)
    args = ("--concurrency", "100", "--max-tokens", "256")
    never = judge(stub, data, tmp_path / "run", *args, "--max-cost-usd", "0.1")
    assert never.returncode == 4 and "could cost up to" in never.stderr
    assert stub.stats.requests == 0 and summary(tmp_path / "run")["cost"]["budget"]["done"] == 0
    assert (tmp_path / "run" / "report.html").is_file()
    cut = judge(stub, data, tmp_path / "run", *args, "--max-cost-usd", "5")
    assert cut.returncode == 4, cut.stderr
    cost = summary(tmp_path / "run")["cost"]
    spent_to_within_one_worst_case(cost, stub)
    assert 0 < cost["budget"]["done"] < 150
    done = judge(stub, data, tmp_path / "run", *args, "--max-cost-usd", "100")
    assert done.returncode == 0, done.stderr
    assert summary(tmp_path / "run")["n_items"] == 150
    assert stub.stats.requests == 150 and stub.stats.max_sends == 1  # none paid twice


def test_simulate_at_concurrency_100_finishes_the_conversations_its_money_allows(
    stub: StubServer, tmp_path: Path
) -> None:
    """3 turns, 8 questions. A budget that fits all 8 at concurrency 1 finishes all 8 at
    concurrency 100 too. Half the cost stops within one worst case of the budget, having
    finished as many conversations as concurrency 1 does (they are not all started at
    once to finish none), and a larger budget resumes, paying for no call twice."""
    questions = write_jsonl(tmp_path / "q.jsonl", [
        {"id": f"q{i}", "question": f"Question {i}: what is 2+{i}?", "answer": str(2 + i)}
        for i in range(8)
    ])  # fmt: skip
    stub.configure(record=True, latency=0.02)

    def simulate(name: str, concurrency: int, *budget: str):
        return run_cli(
            "simulate", str(questions), "-a", "openai/stub", "--assistant-base-url",
            stub.base_url, "--max-turns", "3", "--max-tokens", "200", "--user-max-tokens",
            "100", "--retry-wait", "0.01", *PRICES, "--concurrency", str(concurrency),
            "--out", str(tmp_path / f"{name}.jsonl"), *budget,
        )  # fmt: skip

    def finished(name: str) -> int:
        rows = (tmp_path / f"{name}.jsonl").read_text().splitlines()
        return sum(json.loads(r)["status"] == "ok" for r in rows)

    assert simulate("free", 1).returncode == 0
    full = json.loads((tmp_path / "free.summary.json").read_text())["cost"]["total_usd"]
    calls = stub.stats.requests
    worst = largest_worst_case(stub.stats.recorded, P_IN, P_OUT)
    enough = f"{full + worst:.4f}"  # the last call's worst case fits beside all the others
    assert simulate("one", 1, "--max-cost-usd", enough).returncode == 0
    assert finished("one") == 8
    assert simulate("many", 100, "--max-cost-usd", enough).returncode == 0
    assert finished("many") == 8

    half = f"{full / 2:.4f}"
    assert simulate("half-one", 1, "--max-cost-usd", half).returncode == 4
    stub.stats.reset()
    cut = simulate("cut", 100, "--max-cost-usd", half)
    assert cut.returncode == 4, cut.stderr
    cost = json.loads((tmp_path / "cut.summary.json").read_text())["cost"]
    spent_to_within_one_worst_case(cost, stub)
    assert finished("cut") == cost["budget"]["done"] == finished("half-one") > 0
    resumed = simulate("cut", 100, "--max-cost-usd", str(10 * full))
    assert resumed.returncode == 0, resumed.stderr
    assert finished("cut") == 8 and stub.stats.requests == calls  # none paid twice


def test_a_server_that_ignores_max_tokens_is_charged_its_tokens_and_counted(
    stub: StubServer, tmp_path: Path
) -> None:
    """Replies of 500 tokens to calls capped at 50: each is charged its 500 tokens and
    counted in `over_cap_replies`; with a budget, they take the spend over it by no more
    than what they ran past the cap."""
    prompts = write_jsonl(tmp_path / "p.jsonl", [
        {"id": f"p{i}", "prompt": f"Question {i}: say hi"} for i in range(6)
    ])  # fmt: skip
    stub.configure(completion_tokens=500)
    generate = ("generate", str(prompts), "-m", "openai/stub", "--base-url", stub.base_url,
                "--max-tokens", "50", "--concurrency", "1", *PRICES)  # fmt: skip
    assert run_cli(*generate, "--out", str(tmp_path / "all.jsonl")).returncode == 0
    s = json.loads((tmp_path / "all.summary.json").read_text())
    role = s["cost"]["roles"]["model_under_test"]
    assert role["over_cap_replies"] == 6 and s["usage"]["output_tokens"] == 6 * 500
    assert role["usd"] == pytest.approx(
        (s["usage"]["input_tokens"] * P_IN + 6 * 500 * P_OUT) / 1e6, abs=1e-6
    )
    one_call = role["usd"] / 6
    cut = run_cli(*generate, "--out", str(tmp_path / "cut.jsonl"), "--max-cost-usd",
                  f"{one_call / 2:.4f}")  # fmt: skip
    assert cut.returncode == 4, cut.stderr
    s = json.loads((tmp_path / "cut.summary.json").read_text())
    budget, role = s["cost"]["budget"], s["cost"]["roles"]["model_under_test"]
    assert role["over_cap_replies"] == 1 and budget["spent_usd"] == role["usd"]
    assert budget["spent_usd"] > budget["max_usd"]  # its worst case fitted; its reply did not
    assert budget["spent_usd"] - budget["max_usd"] <= (500 - 50) * P_OUT / 1e6


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (("--prices", "{prices}"), "--prices {prices}: model 'openai/stub', field 'input'"),
        (("--price-in", "inf", "--price-out", "1"), "--price-in"),
        (("--price-in", "1", "--price-out", "nan"), "--price-out"),
        (("--max-cost-usd", "inf", *PRICES), "--max-cost-usd"),
    ],
)
def test_a_price_or_budget_that_is_not_a_finite_number_is_refused_before_anything_is_sent(
    stub: StubServer, tmp_path: Path, flags: tuple[str, ...], named: str
) -> None:
    """NaN and infinity (TOML's `nan` and `inf`, or on the command line) for a price or a
    budget: exit 2 naming it, nothing sent, nothing written, by `run`, `generate` and
    `gate --sequential` alike."""
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."openai/stub"]\ninput = nan\noutput = 1.0\n')
    flags = tuple(f.format(prices=prices) for f in flags)
    named = named.format(prices=prices)
    data = write_jsonl(tmp_path / "d.jsonl", pointwise_rows(3))
    pairs = write_jsonl(tmp_path / "pairs.jsonl", [
        {"id": f"p{i}", "prompt": f"prompt {i}", "response": f"r {i}",
         "baseline_model_response": f"b {i}"} for i in range(3)
    ])  # fmt: skip
    endpoint = ("--base-url", stub.base_url)
    commands = {
        "run": ("run", str(data), "-p", "interactivity-accuracy", "-j", "openai/stub"),
        "generate": ("generate", str(pairs), "-m", "openai/stub"),
        "gate": ("gate", str(pairs), "-p", "pairwise-chat-quality", "--sequential",
                 "-j", "openai/stub"),
    }  # fmt: skip
    for name, command in commands.items():
        out = tmp_path / name
        done = run_cli(*command, *endpoint, *flags, "--out", str(out / "o.jsonl"), key="sk-t")
        assert done.returncode == 2, (name, done.stderr)
        assert named in done.stderr.replace("\n", " ") and "Traceback" not in done.stderr
        assert not [f for f in out.rglob("*") if f.is_file()]  # nothing written
    assert stub.stats.requests == 0
