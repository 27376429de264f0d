"""One usage type for runs, roles and rows; cost only when priced, cached calls free."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import chatjudge
from chatjudge.calls import Usage
from chatjudge.calls.prices import price_of
from chatjudge.chat.types import Reply
from chatjudge.models import get_model
from chatjudge.options import ClientOptions, PricingOptions


def test_add_counts_calls_and_tokens_missing_tokens_as_zero() -> None:
    usage = Usage()
    usage.add(Reply("a", 10, 3))
    usage.add(Reply("b", None, None))
    usage.cached_calls += 2
    assert usage.as_dict() == {
        "calls": 2,
        "cached_calls": 2,
        "input_tokens": 10,
        "output_tokens": 3,
    }
    assert list(usage.as_dict(cached=False)) == ["calls", "input_tokens", "output_tokens"]
    assert usage.as_dict(cached=False)["calls"] == 2


def cost(usage: Usage, pricing: PricingOptions) -> float | None:
    """The cost of a model of one's own server (no table price) under `pricing`."""
    model = get_model("openai/m", ClientOptions(base_url=("http://127.0.0.1:1/v1",)))
    return price_of(model, pricing).cost(usage)


def test_cost_prices_tokens_sent_and_is_none_unpriced() -> None:
    usage = Usage(calls=2, cached_calls=5, input_tokens=1_000_000, output_tokens=250_000)
    assert cost(usage, PricingOptions()) is None
    assert cost(usage, PricingOptions(price_in=2.5, price_out=10.0)) == 5.0
    assert cost(usage, PricingOptions(price_out=1.0)) == 0.25
    assert cost(Usage(cached_calls=9), PricingOptions(price_in=1.0)) == 0.0  # cached: free


def test_third_of_a_cent_is_rounded_to_six_places() -> None:
    assert cost(Usage(input_tokens=1), PricingOptions(price_in=1 / 3)) == pytest.approx(0.0)
    assert cost(Usage(input_tokens=1000), PricingOptions(price_in=1 / 3)) == 0.000333


def test_generate_writes_row_usage_without_cached_calls_and_counts_them_in_the_summary(
    tmp_path: Path,
) -> None:
    rows = [{"id": f"r{i}", "prompt": f"question {i}"} for i in range(3)]
    out = tmp_path / "out.jsonl"
    for _ in range(2):  # the second time every call is in the store
        chatjudge.generate(rows, lambda messages: "an answer", out=out)
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["usage"] for r in written] == [
        {"response": {"calls": 1, "input_tokens": 0, "output_tokens": 0}}
    ] * 3
    summary = json.loads((tmp_path / "out.summary.json").read_text())
    assert summary["usage"] == {
        "calls": 0,
        "cached_calls": 3,
        "input_tokens": 0,
        "output_tokens": 0,
    }


def test_simulate_writes_each_roles_row_usage_without_cached_calls(tmp_path: Path) -> None:
    rows = [{"id": "a", "question": "What is 2 + 2?", "answer": "4"}]
    ends = '{"thought": "t", "response": "Thanks. [[TERMINATE CHAT]]"}'  # ends once answered
    out = chatjudge.simulate(
        rows, lambda messages: "It is 4.", lambda messages: ends, out=tmp_path / "sim.jsonl"
    )
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["turns"] == 1 and row["ended"] == "user"
    assert row["usage"] == {
        "assistant": {"calls": 1, "input_tokens": 0, "output_tokens": 0},
        "simulated_user": {"calls": 2, "input_tokens": 0, "output_tokens": 0},
    }
    summary = json.loads((tmp_path / "sim.summary.json").read_text())
    assert summary["usage"]["simulated_user"] == {
        "calls": 2,
        "cached_calls": 0,
        "input_tokens": 0,
        "output_tokens": 0,
    }
