"""`--shard I/N` and `chatjudge merge`: N drivers, each with its share of the rows and its own
store, merged into what one unsharded driver writes, over real HTTP to the stand-in server.
Each command's `--shard`, `merge`'s refusals (exit 2) and a budget's stop (exit 4) go
through the CLI in real processes; the other runs, whose command line is not the point,
call the API (`chatjudge.evaluate`, `generate`, `simulate`) in this process.

"Identical" is checked field by field with the wall-clock fields removed (`WALL_CLOCK`:
`created`, when a file was written, and `latency`, how long a call took); every other field
of results, summaries, run.json, rows and the report's data must be equal.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import chatjudge
from chatjudge.errors import DataValidationError, UsageError
from chatjudge.formats.cost import BudgetRecord, Cost, RoleCostRecord
from chatjudge.merge import merge
from chatjudge.merge.parts import sum_costs
from chatjudge.options.shard import Shard
from chatjudge.stats import bootstrap_metrics
from chatjudge.summarize.generate_summary import token_metrics
from chatjudge.summarize.simulate_summary import simulation_summary
from tests.support.cli import run_cli
from tests.support.report_page import embedded_index, embedded_items
from tests.support.stub_openai import StubServer

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
POINTWISE = EXAMPLES / "interactivity_accuracy.jsonl"  # 15 rows
PAIRWISE = EXAMPLES / "pairwise_chat_quality.jsonl"  # 16 rows, with history and prompt
QUESTIONS = EXAMPLES / "questions.jsonl"  # 8 rows, for simulate
FED = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "fed" / "fed_data.json"
WALL_CLOCK = frozenset({"created", "latency"})
N = 3
PRICES = ("--price-in", "1.5", "--price-out", "4")  # so that costs are summed, not unknown


def without_wall_clock(value: Any) -> Any:
    """`value` with the `WALL_CLOCK` fields removed, at any depth."""
    if isinstance(value, dict):
        return {k: without_wall_clock(v) for k, v in value.items() if k not in WALL_CLOCK}
    if isinstance(value, list):
        return [without_wall_clock(v) for v in value]
    return value


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def read_json(path: Path) -> Any:
    return json.loads(path.read_text("utf-8"))


def results(run_dir: Path) -> list[dict[str, Any]]:
    """results.jsonl by row index (an unsharded run writes items as they finish)."""
    return without_wall_clock(
        sorted(read_jsonl(run_dir / "results.jsonl"), key=lambda r: r["index"])
    )


def uncached(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records without the calls' `cached` flags (a resumed run's calls come from the store)."""
    return [{**r, "calls": [{**c, "cached": None} for c in r["calls"]]} for r in records]


def summary_of(path: Path) -> dict[str, Any]:
    """A summary without its wall-clock fields, its dollar amounts compared to 1e-6 a shard:
    each shard rounds its cost to 6 decimals, so their sum may differ from the unsharded
    total in the last place; every other field is compared exactly."""
    summary = without_wall_clock(read_json(path))
    if "cost_usd" in summary:
        summary["cost_usd"] = _usd(summary["cost_usd"])
    cost = summary.get("cost")
    if cost:
        cost["total_usd"] = _usd(cost["total_usd"])
        for role in cost["roles"].values():
            role["usd"] = _usd(role["usd"])
    return summary


def _usd(value: float | None) -> Any:
    return None if value is None else pytest.approx(value, abs=N * 1e-6)


def report_data(run_dir: Path, summary: dict[str, Any]) -> tuple[Any, Any, str]:
    """The page's embedded items (by id, without latencies), its config (without the run's
    creation time) and the rest of the page with the summary's `created` and the items
    (compressed in an order the shards set, and their index) taken out."""
    html = (run_dir / "report.html").read_text("utf-8")
    blocks = dict(re.findall(r'<script type="[^"]+" id="([\w-]+)">(.*?)</script>',
                             html, re.S))  # fmt: skip
    items = sorted(embedded_items(html), key=lambda item: str(item["id"]))
    assert embedded_index(html)["id"] == [item["id"] for item in embedded_items(html)]
    config = json.loads(blocks["page-config"])
    config["label"]["run"] = config["label"]["run"].rsplit("|", 1)[0]
    page = html
    for name in ("items-data", "items-index", "page-config"):
        page = page.replace(blocks[name], "")
    return without_wall_clock(items), config, page.replace(summary["created"], "CREATED")


@pytest.fixture(scope="module")
def server() -> Iterator[StubServer]:
    """One stand-in server for the module (its request count is read between commands)."""
    # Replies come back out of order (jitter): figures that depended on it would differ.
    with StubServer(latency=0.002, jitter=0.03, retry_after=0.05) as stub:
        yield stub


def sent(stub: StubServer) -> int:
    return stub.stats.requests


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stand-in's key for the runs made through the API, in this process."""
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")


def cli(*args: str) -> None:
    done = run_cli(*args, key="dummy")
    assert done.returncode == 0, done.stderr


def judge(stub: StubServer, data: Path, protocol: str, out: Path, **options: Any) -> None:
    """`judge_args`'s run through the API."""
    chatjudge.evaluate(data, protocol, "openai/judge", out, base_url=stub.base_url,
                       price_in=1.5, price_out=4, **options)  # fmt: skip


def judge_args(stub: StubServer, data: Path, protocol: str, out: Path, *extra: str) -> list[str]:
    return ["run", str(data), "--protocol", protocol, "--judge", "openai/judge", "--base-url",
            stub.base_url, "--out", str(out), "--quiet", *PRICES, *extra]  # fmt: skip


@pytest.fixture(scope="module")
def pointwise_shards(
    server: StubServer, tmp_path_factory: pytest.TempPathFactory
) -> tuple[list[Path], Path]:
    """Three shard runs (--samples 2) and the unsharded run of the same data and options:
    the first shard through the CLI, the others through the API, in this process."""
    root = tmp_path_factory.mktemp("pointwise")
    shards = [root / f"shard{i}" for i in range(N)]
    cli(*judge_args(server, POINTWISE, "interactivity-accuracy", shards[0],
                    "--samples", "2", "--shard", f"0/{N}"))  # fmt: skip
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "dummy")
        for i, out in enumerate(shards[1:], 1):
            judge(server, POINTWISE, "interactivity-accuracy", out, samples=2, shard=f"{i}/{N}")
        judge(server, POINTWISE, "interactivity-accuracy", root / "whole", samples=2)
    return shards, root / "whole"


def assert_merged_equals_whole(merged: Path, whole: Path) -> None:
    assert results(merged) == results(whole)
    assert [r["index"] for r in read_jsonl(merged / "results.jsonl")] == list(
        range(len(results(whole)))
    )  # the merged file is in input order
    assert summary_of(merged / "summary.json") == summary_of(whole / "summary.json")
    assert read_json(merged / "run.json") == read_json(whole / "run.json")
    assert report_data(merged, read_json(merged / "summary.json")) == report_data(
        whole, read_json(whole / "summary.json")
    )


def test_shards_merged_equal_an_unsharded_pointwise_run_with_samples(
    pointwise_shards: tuple[list[Path], Path], server: StubServer, tmp_path: Path
) -> None:
    shards, whole = pointwise_shards
    n_rows = [read_json(s / "run.json")["n_rows"] for s in shards]
    assert n_rows == [len(read_jsonl(s / "results.jsonl")) for s in shards]  # each its share
    assert sum(n_rows) == 15 and all(n < 15 for n in n_rows)
    assert [read_json(s / "run.json")["config"]["shard"] for s in shards] == ["0/3", "1/3", "2/3"]
    done = run_cli("merge", *map(str, shards), "--out", str(tmp_path / "merged"))
    assert done.returncode == 0, done.stderr
    assert_merged_equals_whole(tmp_path / "merged", whole)
    # The merged directory resumes as the unsharded run would: nothing is sent again.
    before = sent(server)
    judge(server, POINTWISE, "interactivity-accuracy", tmp_path / "merged", samples=2)
    assert sent(server) == before
    resumed = results(tmp_path / "merged")
    assert all(call["cached"] for r in resumed for call in r["calls"])  # from the store
    assert uncached(resumed) == uncached(results(whole))


def test_shards_merged_equal_an_unsharded_pairwise_run(server: StubServer, tmp_path: Path) -> None:
    """Both presentation orders, position consistency and the style-controlled preference
    (whose logistic fit and intervals depend on the items' order) come out the same."""
    shards = [tmp_path / f"shard{i}" for i in range(N)]
    for i, out in enumerate(shards):
        judge(server, PAIRWISE, "pairwise-chat-quality", out, shard=f"{i}/{N}")
    judge(server, PAIRWISE, "pairwise-chat-quality", tmp_path / "whole")
    # Given in any order.
    merge([shards[2], shards[0], shards[1]], tmp_path / "merged")
    assert_merged_equals_whole(tmp_path / "merged", tmp_path / "whole")
    summary = read_json(tmp_path / "merged" / "summary.json")
    assert "style_controlled_preference" in summary["metrics"]
    assert summary["metrics"]["position_consistency"]["n"] == 16
    before = sent(server)
    judge(server, PAIRWISE, "pairwise-chat-quality", tmp_path / "merged")
    assert sent(server) == before


def test_a_shard_stopped_by_its_budget_merges_and_the_unsharded_command_finishes_it(
    server: StubServer, tmp_path: Path
) -> None:
    shards = [tmp_path / f"shard{i}" for i in range(N)]
    judge(server, POINTWISE, "interactivity-accuracy", shards[0], shard=f"0/{N}")
    judge(server, POINTWISE, "interactivity-accuracy", shards[2], shard=f"2/{N}")
    args = judge_args(server, POINTWISE, "interactivity-accuracy", shards[1], "--shard", f"1/{N}")
    stopped = run_cli(*args, "--max-cost-usd", "0.01", key="dummy")
    assert stopped.returncode == 4, stopped.stderr
    budget = read_json(shards[1] / "summary.json")["cost"]["budget"]
    assert budget["reached"] and budget["done"] < budget["total"]
    merge(shards, tmp_path / "merged")
    merged = read_json(tmp_path / "merged" / "summary.json")
    assert merged["n_items"] == 15 - (budget["total"] - budget["done"])
    assert merged["cost"]["budget"]["reached"] is True
    judge(server, POINTWISE, "interactivity-accuracy", tmp_path / "whole")
    before = sent(server)
    judge(server, POINTWISE, "interactivity-accuracy", tmp_path / "merged")
    assert sent(server) - before == budget["total"] - budget["done"]  # only what was missing
    assert uncached(results(tmp_path / "merged")) == uncached(results(tmp_path / "whole"))


def produce(stub: StubServer, command: str, data: Path, out: Path, **options: Any) -> None:
    """`produce_args`'s command through the API."""
    if command == "generate":
        chatjudge.generate(data, "openai/candidate", out=out, base_url=stub.base_url,
                           price_in=1.5, price_out=4, **options)  # fmt: skip
    else:
        chatjudge.simulate(data, "openai/assistant", "openai/user", out,
                           assistant_base_url=stub.base_url, user_base_url=stub.base_url,
                           price_in=1.5, price_out=4, **options)  # fmt: skip


def produce_args(stub: StubServer, command: str, data: Path, out: Path, *extra: str) -> list[str]:
    if command == "generate":
        models = ["--model", "openai/candidate", "--base-url", stub.base_url]
    else:
        models = ["--assistant", "openai/assistant", "--user", "openai/user",
                  "--assistant-base-url", stub.base_url,
                  "--user-base-url", stub.base_url]  # fmt: skip
    return [command, str(data), *models, "--out", str(out), "--quiet", *PRICES, *extra]


def flags(**options: Any) -> list[str]:
    """`options` as the CLI's flags."""
    return [arg for k, v in options.items() for arg in (f"--{k.replace('_', '-')}", str(v))]


@pytest.mark.parametrize(
    ("command", "data", "extra"),
    [
        ("generate", PAIRWISE, {}),
        ("simulate", QUESTIONS, {"samples": 2, "max_turns": 3, "seed": 5}),
    ],
)
def test_produced_shards_merged_equal_an_unsharded_output(
    server: StubServer, tmp_path: Path, command: str, data: Path, extra: dict[str, Any]
) -> None:
    shards = [tmp_path / f"shard{i}.jsonl" for i in range(N)]
    cli(*produce_args(server, command, data, shards[0], *flags(**extra, shard=f"0/{N}")))
    for i, out in enumerate(shards[1:], 1):
        produce(server, command, data, out, **extra, shard=f"{i}/{N}")
    whole = tmp_path / "whole.jsonl"
    produce(server, command, data, whole, **extra)
    shard_summaries = [read_json(s.with_name(s.stem + ".summary.json")) for s in shards]
    assert [s["shard"]["shard"] for s in shard_summaries] == ["0/3", "1/3", "2/3"]
    assert sum(s["n_rows"] for s in shard_summaries) == len(read_jsonl(data))
    merged = tmp_path / "merged.jsonl"
    done = run_cli("merge", *map(str, shards), "--out", str(merged))
    assert done.returncode == 0, done.stderr
    assert read_jsonl(merged) == read_jsonl(whole)  # the same rows, in input order
    assert summary_of(tmp_path / "merged.summary.json") == summary_of(
        tmp_path / "whole.summary.json"
    )
    before = sent(server)
    produce(server, command, data, merged, **extra)
    assert sent(server) == before  # the merged store answers every call
    assert read_jsonl(merged) == read_jsonl(whole)


def test_generate_shards_with_tools_merge_with_their_tool_totals(
    server: StubServer, tmp_path: Path
) -> None:
    """The tool totals are not in the rows: the merged summary adds the shards' up, and
    equals the unsharded one (half the rows' recorded results match, half do not)."""
    rows = []
    for i in range(8):
        prompt = f"Row {i}: where is order {i}?"
        arguments = json.dumps({"query": prompt, "step": 1 + 10 * (i % 2)})
        call = {"id": f"c{i}", "type": "function",
                "function": {"name": "lookup", "arguments": arguments}}  # fmt: skip
        rows.append({"id": f"r{i}", "prompt": prompt, "baseline_model_response": "B.",
                     "baseline_trajectory": [
                         {"role": "assistant", "content": "", "tool_calls": [call]},
                         {"role": "tool", "tool_call_id": f"c{i}", "content": f"at {i}"},
                         {"role": "assistant", "content": "B."}]})  # fmt: skip
    data = tmp_path / "tools.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    shards = [tmp_path / f"shard{i}.jsonl" for i in range(2)]
    for i, out in enumerate(shards):
        produce(server, "generate", data, out, tool_replay=True, shard=f"{i}/2")
    whole = tmp_path / "whole.jsonl"
    produce(server, "generate", data, whole, tool_replay=True)
    merged = tmp_path / "merged.jsonl"
    done = run_cli("merge", *map(str, shards), "--out", str(merged))
    assert done.returncode == 0, done.stderr
    summary = summary_of(tmp_path / "merged.summary.json")
    assert summary == summary_of(tmp_path / "whole.summary.json")
    # 3 steps a row; each row's 2nd call never matches, its 1st in every other row
    assert (summary["tool_steps"], summary["unmatched_tool_calls"]) == (24, 12)
    assert read_jsonl(merged) == read_jsonl(whole)
    # The merged store keeps every step's tool calls: the same command resumes it, sending
    # nothing, and writes the same rows.
    sent = server.stats.requests
    produce(server, "generate", data, merged, tool_replay=True)
    assert server.stats.requests == sent
    assert read_jsonl(merged) == read_jsonl(whole)


SIM_TOOLS = '''
def search(query: str, step: int) -> str:
    """Look something up."""
    if step == 2 and len(query) % 2:  # by the arguments: the same in every process
        raise ValueError("no such page")
    return f"found {step}"

TOOLS = {"search": search}
'''


def test_simulate_shards_with_tools_merge_with_their_tool_totals(
    server: StubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """simulate's tool totals are not in the rows either: the merged summary adds the
    shards' up, and equals the unsharded one."""
    (tmp_path / "sim_shard_tools.py").write_text(SIM_TOOLS, encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # where --tools finds the module, as `python -m` would
    extra = ("--tools", "sim_shard_tools:TOOLS", "--max-turns", "2")
    shards = [tmp_path / f"shard{i}.jsonl" for i in range(2)]
    for i, out in enumerate(shards):
        cli(*produce_args(server, "simulate", QUESTIONS, out, *extra, "--shard", f"{i}/2"))
    whole = tmp_path / "whole.jsonl"
    cli(*produce_args(server, "simulate", QUESTIONS, whole, *extra))
    merged = tmp_path / "merged.jsonl"
    done = run_cli("merge", *map(str, shards), "--out", str(merged))
    assert done.returncode == 0, done.stderr
    summary = summary_of(tmp_path / "merged.summary.json")
    assert summary == summary_of(tmp_path / "whole.summary.json")
    assert summary["tool_steps"] == summary["usage"]["assistant"]["calls"] > 0
    errors = sum(m["content"].startswith("error: ValueError") for r in read_jsonl(whole)
                 for m in r["chat"] if m["role"] == "tool")  # fmt: skip
    assert summary["tool_errors"] == errors > 0
    assert read_jsonl(merged) == read_jsonl(whole)


def test_produced_figures_do_not_depend_on_the_order_rows_finish() -> None:
    """The stand-in's replies are all of one length, so the tests above cannot see this:
    the bootstrap resamples rows in input order, whichever finished first (and however the
    rows were sharded), for generate's tokens and simulate's conversations alike."""
    tokens = {i: float(i * 37 % 101) for i in range(40)}  # enough for an interval
    shuffled = {i: tokens[i] for i in sorted(tokens, key=lambda i: i * 7 % 40)}
    assert token_metrics(shuffled) == token_metrics(tokens)
    expected = bootstrap_metrics({"output_tokens": list(tokens.values())})["output_tokens"]
    assert token_metrics(shuffled)["output_tokens"] == expected.to_dict()
    assert token_metrics(shuffled)["output_tokens"]["ci95"] != (
        bootstrap_metrics({"output_tokens": list(shuffled.values())})["output_tokens"].ci95
    )  # the order does matter to a seeded bootstrap: hence input order
    records = [
        {"order": i, "sample": i % 2, "ok": True, "cause": None, "turns": t, "plain": 0,
         "assistant_tokens": 10 * t + i, "ended": "user" if t < 3 else "max_turns",
         "restates": i % 3 == 0}
        for i, t in enumerate([1, 3, 2, 3, 1, 2, 3, 1])
    ]  # fmt: skip

    def summarize(conversations: list[dict[str, Any]]) -> dict[str, Any]:
        built = simulation_summary(
            conversations, samples=2, assistant="a", user="u", n_rows=4, max_turns=3,
            usage={}, cost=None, options={}, extras={},
        )  # fmt: skip
        return built.model_dump(exclude={"created"})

    assert summarize(records[::-1]) == summarize(records)
    assert summarize(records[3:] + records[:3]) == summarize(records)


# Refused merges: exit 2, every problem listed, nothing written


def refused(*shards: Path, out: Path) -> str:
    done = run_cli("merge", *map(str, shards), "--out", str(out))
    assert done.returncode == 2, done.stderr
    assert not out.exists()
    return " ".join(done.stderr.split())


def test_shards_of_a_different_configuration_are_refused(
    pointwise_shards: tuple[list[Path], Path], server: StubServer, tmp_path: Path
) -> None:
    shards, _ = pointwise_shards
    other = tmp_path / "other"  # shard 1 again, with another judge and temperature
    chatjudge.evaluate(POINTWISE, "interactivity-accuracy", "openai/other", other,
                       base_url=server.base_url, samples=2, temperature=0.5,
                       shard=f"1/{N}")  # fmt: skip
    message = refused(shards[0], other, shards[2], out=tmp_path / "merged")
    assert "different configurations" in message
    assert "judges: openai/judge vs openai/other" in message
    assert "option temperature: 0.0 vs 0.5" in message
    no_samples = tmp_path / "no-samples"  # samples must match too (a run may grow them)
    judge(server, POINTWISE, "interactivity-accuracy", no_samples, shard=f"2/{N}")
    message = refused(shards[0], shards[1], no_samples, out=tmp_path / "merged")
    assert "option samples: 2 vs 1" in message


def test_a_missing_or_repeated_shard_is_refused(
    pointwise_shards: tuple[list[Path], Path], tmp_path: Path
) -> None:
    shards, whole = pointwise_shards
    message = refused(shards[0], shards[2], out=tmp_path / "merged")
    assert "missing shard(s) 1/3" in message
    message = refused(shards[0], shards[1], shards[1], out=tmp_path / "merged")
    assert f"shard 1/3 is given 2 times: {shards[1]}, {shards[1]}" in message
    assert "missing shard(s) 2/3" in message
    message = refused(*shards, whole, out=tmp_path / "merged")
    assert f"not written with --shard: {whole}" in message


def test_shards_of_different_n_are_refused(
    pointwise_shards: tuple[list[Path], Path], server: StubServer, tmp_path: Path
) -> None:
    shards, _ = pointwise_shards
    half = tmp_path / "half"
    judge(server, POINTWISE, "interactivity-accuracy", half, samples=2, shard="1/2")
    message = refused(shards[0], half, shards[2], out=tmp_path / "merged")
    assert "shards of different N (2, 3)" in message and f"{half}: shard 1/2" in message


def test_a_merge_never_writes_over_a_run_or_a_shard(
    pointwise_shards: tuple[list[Path], Path], tmp_path: Path
) -> None:
    shards, whole = pointwise_shards
    done = run_cli("merge", *map(str, shards), "--out", str(whole))
    assert done.returncode == 2 and "already holds" in done.stderr
    done = run_cli("merge", *map(str, shards), "--out", str(shards[0]))
    assert done.returncode == 2 and "is one of the shards" in done.stderr
    with pytest.raises(UsageError, match="not both"):
        merge([shards[0], POINTWISE], tmp_path / "merged")


def test_a_merge_replaces_an_earlier_output_only_with_overwrite(
    pointwise_shards: tuple[list[Path], Path], tmp_path: Path
) -> None:
    shards, whole = pointwise_shards
    earlier = Path(shutil.copytree(shards[1], tmp_path / "earlier"))  # another run
    (earlier / "calls.sqlite-wal").write_bytes(b"the journal of a store killed mid-write")
    before = results(earlier)
    done = run_cli("merge", *map(str, shards), "--out", str(earlier))
    assert done.returncode == 2 and "or --overwrite to replace them" in done.stderr
    assert results(earlier) == before != results(whole)
    done = run_cli("merge", *map(str, shards), "--out", str(shards[0]), "--overwrite")
    assert done.returncode == 2 and "is one of the shards" in done.stderr
    done = run_cli("merge", *map(str, shards), "--out", str(earlier), "--overwrite")
    assert done.returncode == 0, done.stderr
    assert not (earlier / "calls.sqlite-wal").exists()  # the old store's, not applied to the new
    assert_merged_equals_whole(earlier, whole)


def test_produced_shards_of_different_models_or_unfinished_are_refused(
    server: StubServer, tmp_path: Path
) -> None:
    shards = [tmp_path / f"shard{i}.jsonl" for i in range(2)]
    produce(server, "generate", PAIRWISE, shards[0], shard="0/2")
    cli("generate", str(PAIRWISE), "--model", "openai/other", "--base-url", server.base_url,
        "--out", str(shards[1]), "--quiet", "--shard", "1/2", "--max-tokens", "99")  # fmt: skip
    message = refused(*shards, out=tmp_path / "merged.jsonl")
    assert "model: openai/candidate vs openai/other" in message
    assert "option max_tokens: 1024 vs 99" in message
    produce(server, "generate", PAIRWISE, shards[1], shard="1/2", overwrite=True)
    lines = shards[1].read_text("utf-8").splitlines(keepends=True)
    shards[1].write_text("".join(lines[:-1]), "utf-8")  # as if killed before its last row
    message = refused(*shards, out=tmp_path / "merged.jsonl")
    assert f"{shards[1]}: {len(lines) - 1} of {len(lines)} row(s) written" in message


# The share


def test_the_share_is_a_stable_hash_of_the_id() -> None:
    ids = [f"row-{i}" for i in range(300)]
    shards = [Shard.parse(f"{i}/4") for i in range(4)]
    owners = [[s.index for s in shards if s.holds(i)] for i in ids]
    assert all(len(o) == 1 for o in owners)  # every row in exactly one shard
    assert all(40 < sum(o == [k] for o in owners) < 110 for k in range(4))  # roughly even
    # SHA-256 of the id's text, not Python's salted hash: the same in every process.
    digest = int(hashlib.sha256(b"item-0001").hexdigest(), 16)
    assert [Shard.parse(f"{i}/3").holds("item-0001") for i in range(3)] == [
        digest % 3 == i for i in range(3)
    ]
    assert Shard.parse("0/1").holds("anything") and str(Shard.parse(" 2 / 5 ")) == "2/5"


@pytest.mark.parametrize("bad", ["3/3", "-1/2", "1/0", "a/b", "1", "1/2/3"])
def test_a_bad_shard_is_a_usage_error_naming_the_flag(bad: str, tmp_path: Path) -> None:
    done = run_cli("run", str(POINTWISE), "--protocol", "interactivity-accuracy",
                   "--shard", bad, "--out", str(tmp_path / "r"))  # fmt: skip
    assert done.returncode == 2
    assert "shard (--shard)" in done.stderr and repr(bad) in done.stderr
    assert not (tmp_path / "r").exists()


def python_judge(prompt: str) -> str:
    return (
        '{"interactivity": {"thought": "t", "score": 3}, "accuracy": {"thought": "t", "score": 1}}'
    )


def test_limit_applies_before_the_share_and_each_shard_has_its_own_default_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    whole = chatjudge.evaluate(POINTWISE, judge=python_judge, limit=9, report=False)
    shards = [
        chatjudge.evaluate(POINTWISE, judge=python_judge, limit=9, shard=f"{i}/{N}", report=False)
        for i in range(N)
    ]
    taken = [list(result.table["id"]) for result in shards]
    assert sorted(x for t in taken for x in t) == sorted(whole.table["id"])  # the first 9 rows
    assert all(t for t in taken)
    assert [s.summary["n_items"] for s in shards] == [len(t) for t in taken]
    out_dirs = {whole.out_dir, *(s.out_dir for s in shards)}
    assert len(out_dirs) == N + 1  # each shard its own default run directory (and store)


def test_skipped_rows_are_listed_once_and_every_shard_refuses_bad_data(tmp_path: Path) -> None:
    rows = read_jsonl(POINTWISE)
    rows[4] = {**rows[4], "chat": []}  # an empty conversation: invalid
    options: dict[str, Any] = {"judge": python_judge, "report": False}
    for i in range(N):  # without --skip-invalid, every shard refuses it, whichever holds it
        with pytest.raises(DataValidationError, match="row 5, field 'chat'"):
            chatjudge.evaluate(rows, out=tmp_path / f"bad{i}", shard=f"{i}/{N}", **options)
    options["skip_invalid"] = True
    for i in range(N):
        chatjudge.evaluate(rows, out=tmp_path / f"s{i}", shard=f"{i}/{N}", **options)
    chatjudge.evaluate(rows, out=tmp_path / "whole", **options)
    merged = merge([tmp_path / f"s{i}" for i in range(N)], tmp_path / "merged").summary
    whole = read_json(tmp_path / "whole" / "summary.json")
    assert merged["n_skipped"] == 1 and merged["n_items"] == 14
    assert without_wall_clock(merged) == without_wall_clock(whole)
    assert results(tmp_path / "merged") == results(tmp_path / "whole")


def test_a_dry_run_of_a_shard_counts_its_share(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    options = {"judge": "openai/judge", "base_url": "http://127.0.0.1:9/v1", "samples": 2}
    shares = [
        chatjudge.estimate(POINTWISE, out=tmp_path / f"s{i}", shard=f"{i}/{N}", **options)
        for i in range(N)
    ]
    whole = chatjudge.estimate(POINTWISE, out=tmp_path / "whole", **options)
    assert [e.rows for e in shares] == [
        sum(Shard(i, N).holds(r["id"]) for r in read_jsonl(POINTWISE)) for i in range(N)
    ]
    assert sum(e.rows for e in shares) == whole.rows == 15
    assert sum(e.roles[0].calls[0] for e in shares) == whole.roles[0].calls[0] == 30
    assert sum(e.roles[0].input_tokens[0] for e in shares) == whole.roles[0].input_tokens[0]
    assert not [f for f in tmp_path.rglob("*") if f.is_file()]  # a dry run writes nothing


def test_merged_costs_and_budgets_add_up_by_role() -> None:
    def cost(usd: float | None, spent: float, reached: bool, over_cap: int = 0) -> Cost:
        role = RoleCostRecord(
            usd=usd, priced=usd is not None, source="genai-prices 1", over_cap_replies=over_cap
        )
        budget = BudgetRecord(max_usd=1.0, spent_usd=spent, reached=reached, done=3, total=4)
        return Cost(roles={"judge": role}, total_usd=usd, unpriced=[], budget=budget)

    merged = sum_costs([cost(0.25, 0.3, False, over_cap=2), cost(0.5, 0.6, True, over_cap=1)])
    assert merged is not None and merged.total_usd == 0.75
    assert merged.roles["judge"].usd == 0.75 and merged.roles["judge"].priced
    assert merged.roles["judge"].over_cap_replies == 3
    assert merged.budget == BudgetRecord(
        max_usd=2.0, spent_usd=0.9, reached=True, done=6, total=8
    )  # each driver had its own budget: together, their sum
    unknown = sum_costs([cost(0.25, 0.3, False), cost(None, 0.0, False)])
    assert unknown is not None and unknown.total_usd is None
    assert unknown.unpriced == ["judge"] and not unknown.roles["judge"].priced


def fed_turns() -> list[dict[str, Any]]:
    """FED's 375 turn-level records (real conversations) as (history, prompt, response) rows."""
    records = [r for r in json.loads(FED.read_text("utf-8")) if "response" in r]
    rows = []
    for k, record in enumerate(records):
        lines = [line for line in record["context"].splitlines() if line.strip()]
        rows.append(
            {
                "id": f"fed-turn-{k:03d}",
                "history": "\n".join(lines[:-1]),
                "prompt": lines[-1].removeprefix("User:").strip(),
                "response": record["response"].removeprefix("System:").strip(),
                "system": record["system"],
            }
        )
    return rows


def test_real_conversations_with_a_custom_protocol_merge_with_its_file(
    server: StubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """375 FED turns in 4 shards, judged on the shipped 1-5 protocol. run.json names a custom
    protocol without its file: merge asks for it."""
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    rows = fed_turns()
    protocol = EXAMPLES / "chat_quality_1to5.toml"
    options = {"judge": "openai/judge", "base_url": server.base_url, "concurrency": 32}
    shards = [tmp_path / f"s{i}" for i in range(4)]
    for i, out in enumerate(shards):
        chatjudge.evaluate(rows, protocol, out=out, shard=f"{i}/4", **options)
    chatjudge.evaluate(rows, protocol, out=tmp_path / "whole", **options)
    with pytest.raises(UsageError, match="custom protocol 'chat-quality-1to5'.*--protocol"):
        merge(shards, tmp_path / "merged")
    with pytest.raises(UsageError, match="--protocol is 'interactivity-accuracy'"):
        merge(shards, tmp_path / "merged", protocol="interactivity-accuracy")
    merged = merge(shards, tmp_path / "merged", protocol=protocol)
    assert merged.kind == "run" and merged.out == tmp_path / "merged"
    assert merged.summary["n_items"] == 375
    assert merged.summary["metrics"]["quality"]["ci95"] is not None
    assert_merged_equals_whole(tmp_path / "merged", tmp_path / "whole")


# Shards of different data, unfinished shards, damaged lines: refused, and nothing written


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


def judged_shards(data: Any, root: Path, n: int = 2, only: int | None = None) -> list[Path]:
    """`data` judged in `n` shards (`only`: just that one) by `python_judge` (no server)."""
    shards = [root / f"s{i}" for i in range(n)]
    for i, out in enumerate(shards):
        if only is None or i == only:
            chatjudge.evaluate(data, judge=python_judge, out=out, shard=f"{i}/{n}", report=False)
    return shards if only is None else [shards[only]]


def test_shards_of_different_data_files_of_one_name_are_refused(tmp_path: Path) -> None:
    """Two files both named `d.jsonl`, or one file edited between the shards' runs: the same
    name, different data; the fingerprint of their bytes tells them apart."""
    rows = read_jsonl(POINTWISE)
    small = write_jsonl(tmp_path / "d.jsonl", rows[:10])
    large = write_jsonl(tmp_path / "B" / "d.jsonl", rows[:12])
    first = judged_shards(small, tmp_path / "small", only=1)
    second = judged_shards(large, tmp_path / "large", only=0)
    message = refused(first[0], second[0], out=tmp_path / "merged")
    assert f"{second[0]}: data: different data (SHA-256" in message
    edited = judged_shards(small, tmp_path / "edited", only=0)
    write_jsonl(small, [{**rows[0], "question": "Edited?"}, *rows[1:10]])
    edited += judged_shards(small, tmp_path / "edited", only=1)
    message = refused(*edited, out=tmp_path / "merged")
    assert "different data (SHA-256" in message
    # Rows given from Python: their ids and count.
    python = judged_shards(rows[:10], tmp_path / "python", only=0)
    python += judged_shards(rows[:12], tmp_path / "other", only=1)
    with pytest.raises(UsageError, match="different data"):
        merge(python, tmp_path / "merged")
    assert not (tmp_path / "merged").exists()
    merge(judged_shards(small, tmp_path / "same"), tmp_path / "merged")  # the same data merges


def test_a_run_resumes_over_appended_rows(tmp_path: Path) -> None:
    """The fingerprint is the merge's check only: a run whose data grew resumes."""
    rows = read_jsonl(POINTWISE)
    data = write_jsonl(tmp_path / "d.jsonl", rows[:5])
    chatjudge.evaluate(data, judge=python_judge, out=tmp_path / "r", report=False)
    write_jsonl(data, rows[:8])
    grown = chatjudge.evaluate(data, judge=python_judge, out=tmp_path / "r", report=False)
    assert grown.summary["n_items"] == 8


def test_produced_shards_of_different_data_are_refused(tmp_path: Path) -> None:
    rows = read_jsonl(PAIRWISE)
    data = write_jsonl(tmp_path / "d.jsonl", rows[:10])
    other = write_jsonl(tmp_path / "B" / "d.jsonl", rows[:12])
    shards = [tmp_path / "s0.jsonl", tmp_path / "s1.jsonl"]
    for i, source in enumerate((data, other)):
        chatjudge.generate(source, lambda messages: "a reply", out=shards[i], shard=f"{i}/2")
    message = refused(*shards, out=tmp_path / "merged.jsonl")
    assert f"{shards[1]}: data: different data (SHA-256" in message


def test_a_failed_merge_leaves_nothing_and_the_corrected_one_is_written(tmp_path: Path) -> None:
    shards = judged_shards(POINTWISE, tmp_path, N)
    results_file = shards[1] / "results.jsonl"
    good = results_file.read_bytes()
    lines = good.splitlines(keepends=True)
    results_file.write_bytes(b"".join([*lines[:-1], lines[-1][: len(lines[-1]) // 2] + b"\n"]))
    message = refused(*shards, out=tmp_path / "merged")  # nothing left behind
    assert f"{results_file}, line {len(lines)}, is cut off" in message
    assert "re-run that shard's command" in message
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    results_file.write_bytes(good)
    merge(shards, tmp_path / "merged")
    assert len(read_jsonl(tmp_path / "merged" / "results.jsonl")) == 15
    (tmp_path / "into").mkdir()  # an existing, empty directory is written into
    merge(shards, tmp_path / "into")
    assert sorted(p.name for p in (tmp_path / "into").iterdir()) == sorted(
        p.name for p in (tmp_path / "merged").iterdir()
    )


def test_a_record_without_its_index_is_named_by_file_and_line(tmp_path: Path) -> None:
    shards = judged_shards(POINTWISE, tmp_path, N)
    results_file = shards[2] / "results.jsonl"
    records = read_jsonl(results_file)
    del records[1]["index"]
    write_jsonl(results_file, records)
    message = refused(*shards, out=tmp_path / "merged")
    assert f"{results_file}, line 2, has no row index" in message
    records[1] = {"format": 1, "index": 999}  # an index, but not a record a run writes
    write_jsonl(results_file, records)
    message = refused(*shards, out=tmp_path / "merged")
    assert f"{results_file}, line 2, is not a results record as a run writes it" in message
    assert "Traceback" not in message


def test_a_produced_line_that_is_not_json_is_named_by_file_and_line(tmp_path: Path) -> None:
    shards = [tmp_path / "s0.jsonl", tmp_path / "s1.jsonl"]
    for i, out in enumerate(shards):
        chatjudge.generate(PAIRWISE, lambda messages: "a reply", out=out, shard=f"{i}/2")
    lines = shards[0].read_text("utf-8").splitlines(keepends=True)
    lines[0] = lines[0][:20] + "\n"  # cut off
    shards[0].write_text("".join(lines), "utf-8")
    message = refused(*shards, out=tmp_path / "merged.jsonl")
    assert f"{shards[0]}, line 1, is cut off or not a JSON object" in message
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["s0.jsonl", "s0.calls.sqlite", "s0.summary.json", "s0.run.json"]
        + ["s1.jsonl", "s1.calls.sqlite", "s1.summary.json", "s1.run.json"]
    )  # nothing of the merge: no store, no summary, no rows


def test_an_unfinished_shard_run_is_refused_with_what_to_do(tmp_path: Path) -> None:
    """A re-run killed before its end leaves fewer results than its old summary counts:
    merged, stale usage and cost would sit beside partial results."""
    shards = judged_shards(POINTWISE, tmp_path, N)
    results_file = shards[0] / "results.jsonl"
    lines = results_file.read_text("utf-8").splitlines(keepends=True)
    results_file.write_text("".join(lines[:-1]), "utf-8")
    message = refused(*shards, out=tmp_path / "merged")
    assert "unfinished shards" in message
    assert f"{results_file} holds {len(lines) - 1} item(s), its summary.json {len(lines)}" in (
        message
    )
    assert "re-run that shard's command to finish it" in message
    (shards[2] / "summary.json").unlink()
    message = refused(*shards, out=tmp_path / "merged")
    assert f"{shards[2]} has no summary.json: re-run that shard's command" in message


def test_reading_a_killed_shards_store_leaves_no_file_beside_it(tmp_path: Path) -> None:
    from chatjudge.merge.parts import merge_stores
    from tests.store.test_reader import killed_store

    killed_store(tmp_path / "shard.sqlite")
    merge_stores([tmp_path / "shard.sqlite"], tmp_path / "out" / "calls.sqlite")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "shard.sqlite", "shard.sqlite-wal"]
    from chatjudge.store import Store

    assert Store(tmp_path / "out" / "calls.sqlite").get("k") is not None


# A killed merge, and two merges into one --out at once


def test_the_next_merge_removes_what_a_killed_merge_left(tmp_path: Path) -> None:
    """A merge killed mid-way leaves its staging folder (`.OUT.merging-*`, beside a new --out,
    inside an existing one) and its lock file: the next merge into that --out removes them."""
    shards = judged_shards(POINTWISE, tmp_path, N)
    (tmp_path / "into").mkdir()
    produced = [tmp_path / "p0.jsonl", tmp_path / "p1.jsonl"]
    for i, out in enumerate(produced):
        chatjudge.generate(PAIRWISE, lambda messages: "a reply", out=out, shard=f"{i}/2")
    for folder, name in ((tmp_path, ".merged"), (tmp_path / "into", ".into"),
                         (tmp_path, ".m.jsonl")):  # fmt: skip
        (folder / f"{name}.merging-0badc0de").mkdir()
        (folder / f"{name}.merging-0badc0de" / "results.jsonl").write_text('{"format": 1, "i')
        (folder / f"{name}.merge.lock").touch()  # its lock file, no longer held by anyone
    for out in (tmp_path / "merged", tmp_path / "into"):
        done = run_cli("merge", *map(str, shards), "--out", str(out))
        assert done.returncode == 0, done.stderr
        assert len(read_jsonl(out / "results.jsonl")) == 15
    done = run_cli("merge", *map(str, produced), "--out", str(tmp_path / "m.jsonl"))
    assert done.returncode == 0, done.stderr
    assert len(read_jsonl(tmp_path / "m.jsonl")) == len(read_jsonl(PAIRWISE))
    assert [p for p in tmp_path.rglob(".*")] == []  # nothing hidden is left anywhere
    assert sorted(p.name for p in (tmp_path / "into").iterdir()) == sorted(
        p.name for p in (tmp_path / "merged").iterdir()
    )


def test_a_second_merge_into_the_same_out_at_once_is_refused_as_in_use(tmp_path: Path) -> None:
    """While one merge writes --out (it holds the lock beside it), another one into the same
    --out is exit 2, "in use", writing nothing; the first one's output is then written."""
    import fcntl

    shards = judged_shards(POINTWISE, tmp_path, N)
    out = tmp_path / "merged"
    with (tmp_path / ".merged.merge.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # as the merge writing `out` holds it
        done = run_cli("merge", *map(str, shards), "--out", str(out))
        other = run_cli("merge", *map(str, shards), "--out", str(tmp_path / "elsewhere"))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"--out {out} is in use by another merge" in " ".join(done.stderr.split())
    assert not out.exists()
    assert other.returncode == 0, other.stderr  # another --out is not held up
    (tmp_path / ".merged.merge.lock").unlink()  # as the merge that held it does at its end
    done = run_cli("merge", *map(str, shards), "--out", str(out))
    assert done.returncode == 0, done.stderr


def test_of_merges_started_together_into_one_out_one_writes_it(tmp_path: Path) -> None:
    """Real processes racing for one --out: exactly one exits 0; each other one exits 2,
    refused as in use or as finding the winner's output, never with a traceback."""
    shards = judged_shards(POINTWISE, tmp_path, N)
    out = tmp_path / "merged"
    args = [sys.executable, "-m", "chatjudge.cli", "merge", *map(str, shards), "--out", str(out)]
    racers = [subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True) for _ in range(4)]  # fmt: skip
    ended = [(racer.wait(timeout=120), racer.communicate()[1]) for racer in racers]
    assert sorted(code for code, _ in ended) == [0, 2, 2, 2], ended
    for code, err in ended:
        if code == 2:
            told = " ".join(err.split())
            assert "is in use by another merge" in told or "already holds" in told, err
            assert "Traceback" not in err
    assert len(read_jsonl(out / "results.jsonl")) == 15
    assert [p.name for p in tmp_path.rglob(".*")] == []


def test_shards_sum_their_rows_tool_counts(server: StubServer, tmp_path: Path) -> None:
    """Each shard counts the tool rows it judged; merged, they count what one driver does."""
    rows = []
    for i, row in enumerate(read_jsonl(POINTWISE)):
        arguments = '{"q": ' if i % 3 == 0 else '{"q": 1}'  # every third: not JSON
        call = {"id": f"c{i}", "type": "function",
                "function": {"name": "lookup", "arguments": arguments}}  # fmt: skip
        chat = [{"role": "user", "content": f"Look {i} up."},
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": f"c{i}", "content": "found"},
                {"role": "assistant", "content": "Found it."}]  # fmt: skip
        rows.append({**row, "chat": chat, **({"tools": [{"name": "lookup"}]} if i % 2 else {})})
    data = tmp_path / "tools.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    shards = [tmp_path / f"shard{i}" for i in range(N)]
    for i, out in enumerate(shards):
        judge(server, data, "interactivity-accuracy", out, shard=f"{i}/{N}")
    judge(server, data, "interactivity-accuracy", tmp_path / "whole")
    merge(shards, tmp_path / "merged")
    whole = read_json(tmp_path / "whole" / "summary.json")
    assert (whole["derived_tool_definitions"], whole["unparsed_tool_arguments"]) == (8, 5)
    assert_merged_equals_whole(tmp_path / "merged", tmp_path / "whole")
