"""Prices from the bundled genai-prices table, overrides, local and unknown models, and the
cost per role that every summary, terminal table and report shows."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import genai_prices
import pytest
from rich.console import Console

import chatjudge
from chatjudge.calls import Usage
from chatjudge.calls.prices import Price, command_cost, load_prices, price_of, prices_of, role_cost
from chatjudge.errors import UsageError
from chatjudge.models import get_model
from chatjudge.options import ClientOptions, PricingOptions
from chatjudge.report.html import _usage
from chatjudge.report.terminal import produced_table, summary_table
from chatjudge.rundir import RunDir
from tests.runner.conftest import pointwise_rows
from tests.support.stub_openai import StubServer

NONE = PricingOptions()


@pytest.fixture(autouse=True)
def _no_openai_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")


def openai(name: str, *urls: str):
    return get_model(f"openai/{name}", ClientOptions(base_url=urls), check_key=False)


def write_prices(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_a_known_openai_model_costs_what_genai_prices_computes() -> None:
    price = price_of(openai("gpt-4.1-mini"), NONE)
    assert price.source == f"genai-prices {genai_prices.__version__}"
    usage = Usage(calls=3, input_tokens=123_456, output_tokens=7_890)
    expected = genai_prices.calc_price(
        genai_prices.Usage(input_tokens=123_456, output_tokens=7_890),
        "gpt-4.1-mini",
        provider_id="openai",
    ).total_price
    assert price.cost(usage) == pytest.approx(float(expected), abs=1e-6)
    assert (price.cost(usage) or 0) > 0


def test_a_tiered_price_counts_at_its_base_tier() -> None:
    model = get_model("google/gemini-2.5-pro", ClientOptions(), check_key=False)
    table = genai_prices.calc_price(
        genai_prices.Usage(input_tokens=1000, output_tokens=1000),
        "gemini-2.5-pro",
        provider_id="google",
    )
    price = price_of(model, NONE)
    rates = table.model_price.input_mtok, table.model_price.output_mtok
    tiered = genai_prices.types.TieredPrices
    assert isinstance(rates[0], tiered) and isinstance(rates[1], tiered)  # above 200k: dearer
    assert (price.input, price.output) == (float(rates[0].base), float(rates[1].base))
    assert price.cost(Usage(input_tokens=1000, output_tokens=1000)) == pytest.approx(
        float(table.total_price)
    )


def test_an_unknown_model_or_a_server_of_ones_own_is_unknown_never_zero() -> None:
    for model in (openai("no-such-model-xyz"), openai("gpt-4.1-mini", "http://127.0.0.1:8000/v1")):
        price = price_of(model, NONE)
        assert (price.input, price.output, price.known) == (None, None, False)
        assert price.cost(Usage(input_tokens=10, output_tokens=10)) is None
    assert price_of(get_model(lambda prompt: "{}"), NONE).known is False  # a callable


def test_local_models_cost_nothing() -> None:
    price = price_of(get_model("local", check_key=False), NONE)
    assert (price.input, price.output, price.source) == (0.0, 0.0, "local")


def test_overrides_win_the_file_over_the_flags_over_the_table(tmp_path: Path) -> None:
    path = write_prices(
        tmp_path / "p.toml",
        '[models."openai/gpt-4.1-mini"]\ninput = 9.0\noutput = 10.0\n',
    )
    flags = PricingOptions(price_in=1.0, price_out=2.0)
    with_file = flags.model_copy(update={"prices": path})
    both = prices_of([openai("gpt-4.1-mini"), openai("other")], with_file)
    assert both["openai/gpt-4.1-mini"] == Price(9.0, 10.0, f"--prices {path}")
    assert both["openai/other"] == Price(1.0, 2.0, "--price-in/--price-out")
    assert price_of(openai("x", "http://127.0.0.1:1/v1"), flags).cost(
        Usage(input_tokens=10**6, output_tokens=10**6)
    ) == pytest.approx(3.0)


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ('[models."openai/m"]\ninput = -1\noutput = 2\n', "'openai/m', field 'input'"),
        ('[models."openai/m"]\ninput = nan\noutput = 2\n', "'openai/m', field 'input'.*finite"),
        ('[models."openai/m"]\ninput = 1\noutput = inf\n', "'openai/m', field 'output'.*inf"),
        ('[models."openai/m"]\ninput = 1\noutput = "two"\n', "'openai/m', field 'output'"),
        ('[models."openai/m"]\ninput = 1\n', "'openai/m' needs exactly"),
        ("models = 3\n", "expected only"),
        ("[models\n", "cannot read it"),
    ],
)
def test_a_bad_prices_file_is_a_usage_error_naming_the_entry(
    tmp_path: Path, text: str, named: str
) -> None:
    with pytest.raises(UsageError, match="--prices .*" + named.replace("(", r"\(")):
        load_prices(write_prices(tmp_path / "bad.toml", text))


def test_a_lookup_sends_nothing_and_is_fast(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("a price lookup opened a connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    model = openai("gpt-4.1-mini")
    price_of(model, NONE)  # the table loaded once
    start = time.perf_counter()
    for _ in range(100):
        assert price_of(model, NONE).known
    per_lookup = (time.perf_counter() - start) / 100
    assert per_lookup < 0.05  # once per model per command: far below one call's latency


def test_a_role_and_the_total_are_unknown_when_any_price_is() -> None:
    prices = {"a": Price(1.0, 2.0, "x"), "b": Price(None, None, "unknown")}
    used = {"a": Usage(input_tokens=10**6), "b": Usage(output_tokens=5)}
    assert role_cost({"a": prices["a"]}, {"a": used["a"]}, {}).usd == pytest.approx(1.0)
    assert role_cost(prices, used, {}).usd is None
    assert role_cost({"a": prices["a"]}, {"a": Usage(), "z": Usage()}, {}).usd is None
    cost = command_cost(
        {
            "one": role_cost({"a": prices["a"]}, {"a": used["a"]}, {}),
            "two": role_cost(prices, used, {}),
        }
    )
    assert cost.total_usd is None and cost.unpriced == ["two"]
    cost = command_cost({"one": role_cost({"a": prices["a"]}, {"a": used["a"]}, {})})
    assert (cost.total_usd, cost.unpriced) == (pytest.approx(1.0), [])


def rows(n: int = 3) -> list[dict]:
    return [
        {"id": str(i), "question": f"What is {i} + {i}?", "answer": str(2 * i)} for i in range(n)
    ]


def cells(table) -> list[list[str]]:
    """The table's rows as printed, cell by cell (a cell wrapped over lines not expected)."""
    console = Console(width=250, record=True)
    console.print(table)
    lines = console.export_text().splitlines()
    return [[c.strip() for c in line.split("│")[1:-1]] for line in lines if "│" in line]


def test_simulate_costs_each_role_and_an_unknown_role_leaves_the_total_unknown(
    tmp_path: Path,
) -> None:
    prices = write_prices(
        tmp_path / "prices.toml", '[models."openai/assistant"]\ninput = 2.0\noutput = 8.0\n'
    )
    with StubServer(latency=0.001) as assistant, StubServer(latency=0.001) as user:
        user.configure(user_ends_after=2)
        out = chatjudge.simulate(
            rows(),
            "openai/assistant",
            "openai/user",
            tmp_path / "conv.jsonl",
            assistant_base_url=assistant.base_url,
            user_base_url=user.base_url,
            max_turns=3,
            prices=prices,
            retry_wait=0.01,
        )
    summary = json.loads(out.with_name(out.stem + ".summary.json").read_text())
    used = summary["usage"]["assistant"]
    expected = round(used["input_tokens"] * 2.0 / 1e6 + used["output_tokens"] * 8.0 / 1e6, 6)
    roles = summary["cost"]["roles"]
    assert used["input_tokens"] > 0
    assert roles["assistant"] == {
        "usd": expected, "priced": True, "source": f"--prices {prices}", "over_cap_replies": 0,
        "invocation_usd": expected,
    }  # fmt: skip
    assert roles["simulated_user"] == {
        "usd": None, "priced": False, "source": "unknown", "over_cap_replies": 0,
        "invocation_usd": None,
    }  # fmt: skip
    assert summary["cost"]["total_usd"] is None
    assert summary["cost"]["unpriced"] == ["simulated_user"]
    assert summary["options"]["prices"] == str(prices)
    table = cells(produced_table(summary))
    assert ["cost · assistant", f"${expected:,.4f}", f"--prices {prices}", ""] in table
    assert ["cost · simulated_user", "unknown", "unknown", ""] in table
    assert ["cost · total", "unknown", "no price for simulated_user", ""] in table


def test_generate_costs_the_model_under_test(tmp_path: Path) -> None:
    with StubServer(latency=0.001) as stub:
        out = chatjudge.generate(
            [{"id": str(i), "prompt": f"What is {i} + {i}?"} for i in range(3)],
            "openai/mut",
            "response",
            tmp_path / "gen.jsonl",
            base_url=stub.base_url,
            price_in=1.0,
            price_out=4.0,
            retry_wait=0.01,
        )
    summary = json.loads(out.with_name(out.stem + ".summary.json").read_text())
    used = summary["usage"]
    expected = round(used["input_tokens"] / 1e6 + used["output_tokens"] * 4.0 / 1e6, 6)
    assert summary["cost"]["roles"] == {
        "model_under_test": {
            "usd": expected,
            "priced": True,
            "source": "--price-in/--price-out",
            "over_cap_replies": 0,
            "invocation_usd": expected,
        }  # fmt: skip
    }
    assert summary["cost_usd"] == summary["cost"]["total_usd"] == expected > 0
    row = ["cost · model_under_test", f"${expected:,.4f}", "--price-in/--price-out", ""]
    assert row in cells(produced_table(summary))


def test_a_run_shows_the_judge_s_cost_in_its_summary_table_and_report(tmp_path: Path) -> None:
    prices = write_prices(
        tmp_path / "prices.toml", '[models."openai/stub"]\ninput = 3.0\noutput = 6.0\n'
    )
    with StubServer(latency=0.001) as stub:
        result = chatjudge.evaluate(
            pointwise_rows(3),
            "interactivity-accuracy",
            "openai/stub",
            tmp_path / "run",
            base_url=stub.base_url,
            prices=prices,
            retry_wait=0.01,
        )
    summary = json.loads((result.out_dir / "summary.json").read_text())
    used = summary["usage"]
    expected = round(used["input_tokens"] * 3.0 / 1e6 + used["output_tokens"] * 6.0 / 1e6, 6)
    assert summary["cost"]["roles"]["judge"]["usd"] == expected > 0
    assert summary["cost_usd"] == summary["cost"]["total_usd"] == expected
    read = RunDir(result.out_dir).summary
    table = cells(summary_table(read))
    assert ["cost · judge", f"${expected:,.4f}", f"--prices {prices}", ""] in table
    assert ["cost · total", f"${expected:,.4f}", "", ""] in table
    assert ("cost · judge", f"${expected:,.4f} (--prices {prices})") in _usage(read)
    report = (result.out_dir / "report.html").read_text()
    assert "cost · judge" in report and f"${expected:,.4f}" in report
