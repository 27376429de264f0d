"""Admission against `--max-cost-usd`: each attempt's worst case is reserved before it
starts, its reply's tokens replace it, an attempt that may have run is charged; one that
does not fit beside those in flight waits, in order, and the budget is reached only when
nothing is in flight and the next does not fit; then none starts."""

from __future__ import annotations

import asyncio

import pytest

from chatjudge.calls import Caller, CallPolicy, RetryConfig
from chatjudge.calls.budget import Budget, Meter, Starts, budget_for, input_bound, meter_for
from chatjudge.calls.prices import Price
from chatjudge.chat.types import GenerationSettings, ModelRequest, Reply
from chatjudge.errors import BudgetReached, ServerError, UsageError
from chatjudge.models.function import FunctionModel
from chatjudge.models.openai import OpenAIModel
from chatjudge.models.tokens import Tiktoken
from chatjudge.options import ClientOptions

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


async def test_a_call_that_cannot_fit_with_nothing_in_flight_reaches_the_budget() -> None:
    """Nothing in flight and the next worst case does not fit: reached, for good."""
    budget = Budget(0.001)
    meter = Meter(budget, PRICE)
    first = await meter.admit(request("x" * 100, max_tokens=100))  # (100 + 16) * 1e-6 + 2e-4
    assert first == pytest.approx((100 + 16) * 1e-6 + 200e-6)
    meter.settle(first, Reply("ok", 30, 10), billed=True)  # its real cost replaces it
    assert budget.reserved_usd == 0.0 and budget.in_flight == 0
    assert budget.spent_usd == pytest.approx(30e-6 + 20e-6)
    with pytest.raises(BudgetReached, match=r"budget of \$0.001 is reached"):
        await meter.admit(request("x", max_tokens=1000))  # 2000e-6 > what is left
    assert budget.reached
    with pytest.raises(BudgetReached):  # sticky: even a call that would fit is refused
        await meter.admit(request("x", max_tokens=1))


async def test_what_an_attempt_without_a_reply_costs() -> None:
    """A reply without usage, and an attempt that may have run (a timeout), cost their
    worst case; one the provider refused with an error status costs nothing."""
    budget = Budget(1.0)
    meter = Meter(budget, PRICE)
    worst = await meter.admit(request("hello"))
    meter.settle(worst, Reply("ok", None, None), billed=True)
    assert budget.spent_usd == pytest.approx(worst)
    meter.settle(await meter.admit(request("hello")), None, billed=True)
    assert budget.spent_usd == pytest.approx(2 * worst)
    meter.settle(await meter.admit(request("hello")), None, billed=False)
    assert budget.spent_usd == pytest.approx(2 * worst) and budget.reserved_usd == 0


def test_a_tiered_price_charges_a_long_prompt_at_its_top_tier() -> None:
    tiered = Price(1.25, 10.0, "test", tier_start=200_000, top_input=2.5, top_output=15.0)
    assert tiered.usd(1_000, 100) == pytest.approx((1_000 * 1.25 + 100 * 10.0) / 1e6)
    assert tiered.usd(250_000, 100) == pytest.approx((250_000 * 2.5 + 100 * 15.0) / 1e6)
    meter = Meter(Budget(100.0), tiered)
    long = request("x" * 300_000, max_tokens=10)
    assert meter.worst(long) == pytest.approx(tiered.usd(input_bound(long.messages), 10))
    assert meter.worst(long) > 300_000 * 2.5 / 1e6


async def test_the_exact_tokenizer_is_asked_only_when_the_byte_bound_would_not_fit() -> None:
    counted: list[int] = []

    def count(messages) -> int:
        counted.append(1)
        return 10

    budget = Budget(0.01)
    meter = Meter(budget, PRICE, count)
    meter.settle(await meter.admit(request("y" * 4000, max_tokens=10)), Reply("ok", 10, 1), True)
    assert counted == []  # far from the limit: the byte bound
    budget.spent_usd = 0.01 - 100e-6  # near it: the byte bound (4016) would not fit
    worst = await meter.admit(request("y" * 4000, max_tokens=10))
    assert counted == [1] and worst == pytest.approx(10e-6 + 20e-6)


async def loop_turns(n: int = 3) -> None:
    """Let the event loop run the grants and the tasks they wake."""
    for _ in range(n):
        await asyncio.sleep(0)


async def test_attempts_that_do_not_fit_beside_those_in_flight_wait_in_order() -> None:
    """Room for two worst cases: two are in flight, three more wait (not refused); each
    settling lets the next in `order` in, a lower order first, then the first come; the
    first in line holds back a later one that would fit."""
    budget = Budget(2.5)
    assert budget.take(1.0) and budget.take(1.0) and budget.in_flight == 2
    admitted: list[str] = []

    async def wait(name: str, worst: float, order: int) -> None:
        await budget.wait(worst, order)
        admitted.append(name)

    tasks = [
        asyncio.create_task(wait("late conversation", 1.0, order=5)),
        asyncio.create_task(wait("early conversation", 1.0, order=1)),
        asyncio.create_task(wait("small, behind", 0.1, order=7)),
    ]
    await loop_turns()
    assert admitted == [] and not budget.take(0.1)  # some wait: no cutting in line
    budget.settle(1.0, 0.5)  # 0.5 spent, 1.0 reserved: room for one more
    await loop_turns()
    assert admitted == ["early conversation"]
    budget.settle(1.0, 0.5)  # 1.0 spent, 1.0 reserved
    await loop_turns()
    assert admitted == ["early conversation"]  # 1.0 + 1.0 + 1.0 > 2.5: still waits
    budget.settle(1.0, 0.4)  # 1.4 spent, nothing in flight
    await asyncio.gather(*tasks)
    assert admitted == ["early conversation", "late conversation", "small, behind"]
    assert not budget.reached and budget.in_flight == 2


async def test_the_attempt_that_settles_asks_for_its_next_call_before_the_room_is_given() -> None:
    """A conversation's reply settles and it asks for its next turn at once: the room goes
    to that turn (order 0), not to a conversation started later (order 5) waiting since."""
    budget = Budget(1.5)
    assert budget.take(1.0)
    later = asyncio.create_task(budget.wait(1.0, order=5))
    await loop_turns()

    async def reply_then_next_turn() -> None:  # in one step, as a conversation goes on
        budget.settle(1.0, 0.1)  # 0.1 spent: room for one more worst case of 1.0
        await budget.wait(1.0, order=0)

    next_turn = asyncio.create_task(reply_then_next_turn())
    await loop_turns()
    assert next_turn.done() and not later.done()
    budget.settle(1.0, 0.1)
    await later
    assert budget.in_flight == 1 and budget.spent_usd == pytest.approx(0.2)


async def test_a_new_unit_starts_only_while_the_money_left_could_finish_those_under_way() -> None:
    """Units of up to 4 calls: the first starts at once; the second waits until a call
    shows what one may cost, then while 4 + 4 calls at that worst case do not fit beside
    what is spent; it starts as the first one's calls are made, or when it ends."""
    budget = Budget(1.0)
    starts = Starts(budget, calls=4)
    await starts.start(0)
    second = asyncio.create_task(starts.start(1))
    await loop_turns()
    assert not second.done()  # no call made yet: the cost of one is unknown
    budget.largest_usd = 0.1  # 8 calls at 0.1 fit in 1.0
    starts.step(0)
    await loop_turns()
    assert second.done() and starts.left == {0: 3, 1: 4}
    budget.largest_usd = 0.2  # 3 + 4 + 4 calls at 0.2 do not fit
    third = asyncio.create_task(starts.start(2))
    starts.step(0)
    await loop_turns()
    assert not third.done()
    budget.spent_usd = 0.5
    starts.end(0)  # 4 + 4 calls at 0.2 beside 0.5 spent: still no
    await loop_turns()
    assert not third.done()
    starts.end(1)  # none under way: it starts, whatever it may cost
    await third
    assert starts.left == {2: 4}


async def test_a_worst_case_that_never_fits_waits_for_those_in_flight_then_reaches_it() -> None:
    """No deadlock: the calls in flight finish and are paid; then the budget is reached
    and every attempt still waiting is refused."""
    budget = Budget(1.0)
    assert budget.take(0.5)
    never = asyncio.create_task(budget.wait(2.0))
    other = asyncio.create_task(budget.wait(0.6, order=1))
    await asyncio.sleep(0)
    assert not never.done() and not budget.reached  # something in flight may make room
    budget.settle(0.5, 0.3)
    for task in (never, other):
        with pytest.raises(BudgetReached, match="could cost up to"):
            await task
    assert budget.reached and budget.in_flight == 0 and budget.spent_usd == pytest.approx(0.3)


async def test_an_attempt_cancelled_while_it_waits_leaves_no_reservation() -> None:
    budget = Budget(1.0)
    assert budget.take(0.8)
    waiting = asyncio.create_task(budget.wait(0.5))
    await asyncio.sleep(0)
    waiting.cancel()
    await asyncio.sleep(0)
    budget.settle(0.8, 0.1)  # grants the cancelled attempt nothing
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert budget.in_flight == 0 and budget.reserved_usd == 0.0
    await loop_turns()
    assert budget.take(0.8)
    granted = asyncio.create_task(budget.wait(0.5))
    await asyncio.sleep(0)
    budget.settle(0.8, 0.0)
    await asyncio.sleep(0)  # the grant runs; the task has not yet
    assert budget.in_flight == 1  # granted, then cancelled before it could run
    granted.cancel()
    with pytest.raises(asyncio.CancelledError):
        await granted
    assert budget.in_flight == 0 and budget.reserved_usd == 0.0


def test_a_meter_is_exact_only_at_the_models_own_endpoint_and_absent_for_free_models() -> None:
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


async def test_the_caller_waits_for_room_outside_the_attempts_timeout() -> None:
    """Room for two and a half worst cases: a third call waits while two are in flight
    (another model's, slower: longer than its own per-attempt timeout, which does not
    count the wait) and is sent once one of them is refused with an error status, which
    gives its reservation back."""
    release = asyncio.Event()
    sent: list[str] = []

    async def model_call(messages):  # a model under test given as a callable: no usage
        text = messages[-1]["content"]
        sent.append(text)
        if text != "c":
            await release.wait()
        if text == "a":
            raise ServerError("boom", status=400)
        return "reply"

    model = FunctionModel(model_call, call_with="messages")
    worst = (1 + 16) * 1e-6 + 100 * 2e-6
    budget = Budget(2.5 * worst)
    slow = Caller(model, CallPolicy(RetryConfig(max_retries=0)), 8, Meter(budget, PRICE))
    quick = CallPolicy(RetryConfig(max_retries=0, timeout=0.2))
    caller = Caller(model, quick, 8, Meter(budget, PRICE))
    first = asyncio.create_task(slow.send(request("a")))
    second = asyncio.create_task(slow.send(request("b")))
    third = asyncio.create_task(caller.send(request("c")))
    await asyncio.sleep(0.1)
    assert sent == ["a", "b"] and not third.done()  # waiting: neither refused nor sent
    await asyncio.sleep(0.15)  # the wait outlasts an attempt's 0.2 s timeout
    assert not third.done() and budget.in_flight == 2
    release.set()
    with pytest.raises(ServerError):
        await first
    await asyncio.gather(second, third)
    assert sent == ["a", "b", "c"] and not budget.reached
    assert budget.reserved_usd == 0.0 and budget.in_flight == 0
    assert budget.spent_usd == pytest.approx(2 * worst)  # b and c, without usage: worst


async def test_every_attempt_of_a_retried_call_is_admitted_and_a_timed_out_one_charged() -> None:
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
    worst = meter.worst(request("q", max_tokens=100))
    assert len(attempts) == 3
    assert budget.spent_usd == pytest.approx(3 * worst)  # 2 timeouts, 1 reply without usage
