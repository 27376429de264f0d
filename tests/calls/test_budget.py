"""Admission against `--max-cost-usd`: each attempt's worst case is reserved before it
starts, its reply's tokens replace it, an attempt that may have run is charged, and once
one call is refused none starts."""

from __future__ import annotations

import asyncio

import pytest

from chatjudge.calls import Caller, CallPolicy, RetryConfig
from chatjudge.calls.budget import Budget, Meter, budget_for, input_bound, meter_for
from chatjudge.calls.prices import Price
from chatjudge.errors import BudgetReached, ServerError, UsageError
from chatjudge.models.function import FunctionModel
from chatjudge.models.openai import OpenAIModel
from chatjudge.models.tokens import Tiktoken
from chatjudge.options import ClientOptions
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
    first = meter.admit(request("x" * 100, max_tokens=100))  # (100 + 16) * 1e-6 + 100 * 2e-6
    assert first == pytest.approx((100 + 16) * 1e-6 + 200e-6)
    meter.settle(first, Reply("ok", 30, 10), billed=True)  # its real cost replaces it
    assert budget.reserved_usd == pytest.approx(0.0)
    assert budget.spent_usd == pytest.approx(30e-6 + 20e-6)
    with pytest.raises(BudgetReached, match=r"budget of \$0.001 is reached"):
        meter.admit(request("x", max_tokens=1000))  # 2000e-6 > what is left
    assert budget.reached
    with pytest.raises(BudgetReached):  # sticky: even a call that would fit is refused
        meter.admit(request("x", max_tokens=1))


def test_what_an_attempt_without_a_reply_costs() -> None:
    """A reply without usage, and an attempt that may have run (a timeout), cost their
    worst case; one the provider refused with an error status costs nothing."""
    budget = Budget(1.0)
    meter = Meter(budget, PRICE)
    worst = meter.admit(request("hello"))
    meter.settle(worst, Reply("ok", None, None), billed=True)
    assert budget.spent_usd == pytest.approx(worst)
    meter.settle(meter.admit(request("hello")), None, billed=True)
    assert budget.spent_usd == pytest.approx(2 * worst)
    meter.settle(meter.admit(request("hello")), None, billed=False)
    assert budget.spent_usd == pytest.approx(2 * worst) and budget.reserved_usd == 0


def test_a_tiered_price_charges_a_long_prompt_at_its_top_tier() -> None:
    tiered = Price(1.25, 10.0, "test", tier_start=200_000, top_input=2.5, top_output=15.0)
    assert tiered.usd(1_000, 100) == pytest.approx((1_000 * 1.25 + 100 * 10.0) / 1e6)
    assert tiered.usd(250_000, 100) == pytest.approx((250_000 * 2.5 + 100 * 15.0) / 1e6)
    meter = Meter(Budget(100.0), tiered)
    long = request("x" * 300_000, max_tokens=10)
    assert meter.admit(long) == pytest.approx(tiered.usd(input_bound(long.messages), 10))
    assert meter.admit(long) > 300_000 * 2.5 / 1e6


def test_the_exact_tokenizer_is_asked_only_when_the_byte_bound_would_not_fit() -> None:
    counted: list[int] = []

    def count(messages) -> int:
        counted.append(1)
        return 10

    budget = Budget(0.01)
    meter = Meter(budget, PRICE, count)
    meter.settle(meter.admit(request("y" * 4000, max_tokens=10)), Reply("ok", 10, 1), True)
    assert counted == []  # far from the limit: the byte bound
    budget.spent_usd = 0.01 - 100e-6  # near it: the byte bound (4016) would not fit
    worst = meter.admit(request("y" * 4000, max_tokens=10))
    assert counted == [1] and worst == pytest.approx(10e-6 + 20e-6)


def test_a_meter_is_exact_only_at_the_models_own_endpoint_and_absent_for_free_models(
) -> None:
    budget = Budget(1.0)
    official = OpenAIModel("gpt-4o", ClientOptions())
    served = OpenAIModel("gpt-4o", ClientOptions(base_url=("http://127.0.0.1:8000/v1",)))
    assert (m := meter_for(budget, official, PRICE)) is not None and m.count is not None
    assert (m := meter_for(budget, served, PRICE)) is not None and m.count is None
    assert meter_for(budget, official, Price(0.0, 0.0, "local")) is None
    assert meter_for(None, official, PRICE) is None


def test_a_budget_with_an_unknown_price_is_refused() -> None:
    prices = {"openai/a": PRICE, "openai/b": Price(None, None, "unknown")}
    with pytest.raises(UsageError, match=r"price of openai/b is unknown.*--price-in"):
        budget_for(0.5, prices)
    assert budget_for(None, prices) is None


async def test_the_caller_reserves_in_flight_calls_and_releases_refused_ones() -> None:
    """Concurrent calls each hold their worst case while in flight: with room for two,
    the third is refused although nothing has been spent yet; an attempt the provider
    refuses with an error status gives its reservation back."""
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


async def test_every_attempt_of_a_retried_call_is_admitted_and_a_timed_out_one_charged(
) -> None:
    """Two attempts time out (the provider may have run and billed them), the third
    answers: the budget counts three attempts, not one call."""
    attempts: list[int] = []

    async def slow_then_fast(messages):
        attempts.append(1)
        if len(attempts) < 3:
            await asyncio.sleep(1)
        return "reply"

    model = FunctionModel(slow_then_fast, call_with="messages")
    budget = Budget(1.0)
    meter = Meter(budget, PRICE)
    policy = CallPolicy(RetryConfig(max_retries=3, initial_wait=0.01, timeout=0.05))
    caller = Caller(model, policy, 4, meter)
    await caller.send(request("q", max_tokens=100))
    worst = meter.admit(request("q", max_tokens=100))
    assert len(attempts) == 3
    assert budget.spent_usd == pytest.approx(3 * worst)  # 2 timeouts, 1 reply without usage
