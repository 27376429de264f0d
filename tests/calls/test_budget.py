"""Admission against `--max-cost-usd`: a call's worst case is reserved before it starts,
its reply's tokens replace it, and once one call is refused none starts."""

from __future__ import annotations

import asyncio

import pytest

from chatjudge.calls import Caller, CallPolicy, RetryConfig
from chatjudge.calls.budget import Budget, Meter, budget_for, input_bound
from chatjudge.calls.prices import Price
from chatjudge.errors import BudgetReached, ServerError, UsageError
from chatjudge.models.function import FunctionModel
from chatjudge.models.tokens import Tiktoken
from chatjudge.types import GenerationSettings, ModelRequest, Reply

PRICE = Price(1.0, 2.0, "test")  # USD per million tokens


def request(text: str, max_tokens: int = 100) -> ModelRequest:
    settings = GenerationSettings(max_tokens=max_tokens)
    return ModelRequest([{"role": "user", "content": text}], settings)


def test_the_input_bound_is_never_below_a_real_tokenizers_count() -> None:
    """Bytes bound every byte-level BPE tokenizer's count, in any script."""
    enc = Tiktoken("o200k_base").encoding
    texts = ["hello world " * 50, "日本語のテキスト" * 30, "def f(x):\n    return x**2\n" * 20]
    for text in [*texts, "🙂" * 40]:
        messages = [{"role": "user", "content": text}]
        assert input_bound(messages) >= len(enc.encode(text)) + 7  # OpenAI's message framing


def test_a_call_is_refused_when_its_worst_case_would_go_over_and_none_starts_after() -> None:
    budget = Budget(0.001)
    meter = Meter(budget, PRICE)
    first = meter.admit(request("x" * 100, max_tokens=100))  # (116 + 8) * 1e-6 + 100 * 2e-6
    assert first == pytest.approx((100 + 16) * 1e-6 + 200e-6)
    meter.settle(first, Reply("ok", 30, 10))  # what it really cost replaces the reservation
    assert budget.reserved_usd == pytest.approx(0.0)
    assert budget.spent_usd == pytest.approx(30e-6 + 20e-6)
    with pytest.raises(BudgetReached, match=r"budget of \$0.001 is reached"):
        meter.admit(request("x", max_tokens=1000))  # 2000e-6 > what is left
    assert budget.reached
    with pytest.raises(BudgetReached):  # sticky: even a call that would fit is refused
        meter.admit(request("x", max_tokens=1))


def test_a_reply_without_usage_is_charged_its_worst_case_and_a_refused_call_nothing() -> None:
    budget = Budget(1.0)
    meter = Meter(budget, PRICE)
    worst = meter.admit(request("hello"))
    meter.settle(worst, Reply("ok", None, None))
    assert budget.spent_usd == pytest.approx(worst)
    again = meter.admit(request("hello"))
    meter.settle(again, None)
    assert budget.spent_usd == pytest.approx(worst) and budget.reserved_usd == pytest.approx(0)


def test_a_budget_with_an_unknown_price_is_refused() -> None:
    prices = {"openai/a": PRICE, "openai/b": Price(None, None, "unknown")}
    with pytest.raises(UsageError, match=r"price of openai/b is unknown.*--price-in"):
        budget_for(0.5, prices)
    assert budget_for(None, prices) is None


async def test_the_caller_reserves_in_flight_calls_and_releases_failed_ones() -> None:
    """Concurrent calls each hold their worst case while in flight: with room for two,
    the third is refused although nothing has been spent yet; a call the provider
    refuses gives its reservation back."""
    started = asyncio.Event()
    release = asyncio.Event()
    sent: list[str] = []

    async def model_call(messages):  # a model under test given as a callable
        sent.append(messages[-1]["content"])
        if messages[-1]["content"] == "fail":
            raise ServerError("boom", status=400)
        started.set()
        await release.wait()
        return "reply"

    model = FunctionModel(model_call, call_with="messages")
    budget = Budget(2.5 * ((1 + 16) * 1e-6 + 100 * 2e-6))
    caller = Caller(model, CallPolicy(RetryConfig(max_retries=0)), 8, Meter(budget, PRICE))
    first = asyncio.create_task(caller.send(request("a")))
    second = asyncio.create_task(caller.send(request("b")))
    await started.wait()
    with pytest.raises(BudgetReached):
        await caller.send(request("c"))
    assert sent == ["a", "b"]  # the refused call was never sent
    release.set()
    await asyncio.gather(first, second)
    assert budget.reserved_usd == pytest.approx(0.0)
    spent = budget.spent_usd
    budget.reached = False
    budget.limit_usd = 1.0
    with pytest.raises(ServerError):
        await caller.send(request("fail"))
    assert budget.reserved_usd == pytest.approx(0.0) and budget.spent_usd == spent
