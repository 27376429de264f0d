"""`CallPolicy`: which faults are retried and how often, Retry-After and the shared 429
pause, the per-attempt timeout and the rate limits."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

import pytest

from chatjudge.calls.policy import CallPolicy, RetryConfig
from chatjudge.errors import (
    AuthError,
    BadRequestError,
    ModelConnectionError,
    ModelError,
    ModelTimeoutError,
    RateLimitError,
    ServerError,
)
from chatjudge.options import RunConfig

FAST = RetryConfig(max_retries=3, initial_wait=0.01, max_wait=0.02, timeout=5.0)
RETRYABLE = [RateLimitError, ServerError, ModelTimeoutError, ModelConnectionError]


class Flaky:
    """An attempt that raises `errors[k]` on its k-th call (None: succeed) and then succeeds."""

    def __init__(self, *errors: ModelError | None) -> None:
        self.errors = list(errors)
        self.calls = 0
        self.started: list[float] = []

    async def __call__(self) -> str:
        self.started.append(time.monotonic())
        self.calls += 1
        if self.calls <= len(self.errors) and self.errors[self.calls - 1] is not None:
            raise self.errors[self.calls - 1]
        return f"reply after {self.calls} attempt(s)"


def always(make: Callable[[int], ModelError]) -> Callable[[], Awaitable[str]]:
    """An attempt that always fails; `.calls` counts the attempts."""

    async def attempt() -> str:
        attempt.calls += 1  # type: ignore[attr-defined]
        raise make(attempt.calls)  # type: ignore[attr-defined]

    attempt.calls = 0  # type: ignore[attr-defined]
    return attempt


@pytest.mark.parametrize("error", RETRYABLE, ids=lambda e: e.__name__)
async def test_a_transient_fault_is_retried_until_it_succeeds(error: type[ModelError]) -> None:
    policy = CallPolicy(FAST)
    attempt = Flaky(error("first"), error("second"))
    assert await policy.call(attempt) == "reply after 3 attempt(s)"
    assert attempt.calls == 3
    assert policy.retries == 2
    assert policy.rate_limited == (2 if error is RateLimitError else 0)


@pytest.mark.parametrize("error", RETRYABLE, ids=lambda e: e.__name__)
async def test_the_retry_cap_raises_the_last_fault(error: type[ModelError]) -> None:
    policy = CallPolicy(FAST)
    attempt = always(lambda k: error(f"fault {k}"))
    with pytest.raises(error, match=r"^fault 4$"):  # the first attempt, then 3 retries
        await policy.call(attempt)
    assert attempt.calls == 1 + FAST.max_retries
    assert policy.retries == FAST.max_retries


async def test_no_retries_means_one_attempt() -> None:
    policy = CallPolicy(RetryConfig(max_retries=0, initial_wait=0.01))
    attempt = always(lambda k: ServerError(f"fault {k}"))
    with pytest.raises(ServerError, match="fault 1"):
        await policy.call(attempt)
    assert attempt.calls == 1 and policy.retries == 0


@pytest.mark.parametrize("error", [BadRequestError, AuthError], ids=lambda e: e.__name__)
async def test_a_request_fault_is_not_retried(error: type[ModelError]) -> None:
    policy = CallPolicy(FAST)
    raised = error("refused", status=400)
    attempt = Flaky(raised)
    with pytest.raises(error) as info:
        await policy.call(attempt)
    assert info.value is raised
    assert attempt.calls == 1 and policy.retries == 0


async def test_a_retryable_fault_after_a_retry_stops_at_a_request_fault() -> None:
    policy = CallPolicy(FAST)
    attempt = Flaky(ServerError("busy"), BadRequestError("bad"), None)
    with pytest.raises(BadRequestError):
        await policy.call(attempt)
    assert attempt.calls == 2


async def test_retry_after_is_honoured_on_every_retry() -> None:
    policy = CallPolicy(FAST)  # its own back-off would be about 0.01-0.05 s
    attempt = Flaky(
        RateLimitError("slow down", retry_after=0.2), RateLimitError("again", retry_after=0.2)
    )
    started = time.monotonic()
    await policy.call(attempt)
    gaps = [b - a for a, b in zip(attempt.started, attempt.started[1:], strict=False)]
    assert len(gaps) == 2
    # Retry-After plus a little jitter (at most 10% + 0.05 s), never less.
    assert all(0.2 <= gap < 0.2 + 0.07 + 0.15 for gap in gaps), gaps
    assert time.monotonic() - started >= 0.4


async def test_without_retry_after_the_back_off_is_short() -> None:
    policy = CallPolicy(FAST)
    attempt = Flaky(RateLimitError("slow down"), ServerError("busy"))
    started = time.monotonic()
    await policy.call(attempt)
    assert attempt.calls == 3
    assert time.monotonic() - started < 0.2


async def test_a_429_pauses_the_other_calls_of_the_policy() -> None:
    policy = CallPolicy(FAST)
    t0 = time.monotonic()
    limited = Flaky(RateLimitError("slow down", retry_after=0.3))
    other = Flaky()

    async def later() -> str:
        await asyncio.sleep(0.05)  # starts after the 429 came back
        return await policy.call(other)

    await asyncio.gather(policy.call(limited), later())
    assert other.started[0] - t0 >= 0.3 - 0.01  # waited out the provider's window
    assert limited.started[1] - t0 >= 0.3
    assert policy.rate_limited == 1


async def test_a_server_fault_pauses_nobody_else() -> None:
    policy = CallPolicy(RetryConfig(max_retries=1, initial_wait=0.3))
    t0 = time.monotonic()
    failing = Flaky(ServerError("busy"))
    other = Flaky()

    async def later() -> str:
        await asyncio.sleep(0.05)
        return await policy.call(other)

    await asyncio.gather(policy.call(failing), later())
    assert other.started[0] - t0 < 0.2  # not held back by the other call's back-off
    assert failing.started[1] - t0 >= 0.3  # which itself waited


async def test_another_policy_is_not_paused_by_a_429() -> None:
    limited_policy, other_policy = CallPolicy(FAST), CallPolicy(FAST)
    t0 = time.monotonic()
    other = Flaky()

    async def later() -> str:
        await asyncio.sleep(0.05)
        return await other_policy.call(other)

    await asyncio.gather(
        limited_policy.call(Flaky(RateLimitError("slow down", retry_after=0.3))), later()
    )
    assert other.started[0] - t0 < 0.2


async def test_the_per_attempt_timeout_raises_judge_timeout_error() -> None:
    policy = CallPolicy(RetryConfig(max_retries=0, initial_wait=0.01, timeout=0.1))

    async def hangs() -> str:
        await asyncio.sleep(3)
        return "never"

    started = time.monotonic()
    with pytest.raises(ModelTimeoutError, match="no reply within 0.1 s"):
        await policy.call(hangs)
    assert time.monotonic() - started < 1.0


async def test_a_timed_out_attempt_is_retried() -> None:
    policy = CallPolicy(RetryConfig(max_retries=2, initial_wait=0.01, timeout=0.1))
    calls = 0

    async def slow_then_fast() -> str:
        nonlocal calls
        calls += 1
        if calls == 1:
            await asyncio.sleep(3)
        return "fast"

    assert await policy.call(slow_then_fast) == "fast"
    assert calls == 2 and policy.retries == 1


async def _starts(policy: CallPolicy, n: int, tokens: int = 0) -> list[float]:
    t0 = time.monotonic()
    started: list[float] = []

    async def attempt() -> None:
        started.append(time.monotonic() - t0)

    await asyncio.gather(*(policy.call(attempt, tokens=tokens) for _ in range(n)))
    return sorted(started)


async def test_requests_per_minute_paces_the_calls() -> None:
    # 600 a minute: 10 a second, the first second's allowance at once, then one per 0.1 s.
    starts = await _starts(CallPolicy(FAST, requests_per_minute=600), 15)
    assert starts[9] < 0.1
    assert 0.4 <= starts[-1] < 1.0
    unpaced = await _starts(CallPolicy(FAST), 15)
    assert unpaced[-1] < 0.1


async def test_tokens_per_minute_paces_the_calls() -> None:
    # 600 tokens a minute: 10 a second; calls of 5 tokens, two at once, then one per 0.5 s.
    starts = await _starts(CallPolicy(FAST, tokens_per_minute=600), 3, tokens=5)
    assert starts[1] < 0.1
    assert 0.4 <= starts[2] < 1.0


def test_the_policy_takes_the_run_options() -> None:
    config = RunConfig.from_options(
        {
            "max_retries": 2,
            "retry_wait": 0.5,
            "timeout": 3.0,
            "requests_per_minute": 120,
            "tokens_per_minute": 6000,
        }
    )
    policy = CallPolicy.of(config)
    assert policy.config == RetryConfig(max_retries=2, initial_wait=0.5, timeout=3.0)
    assert policy._rpm is not None and policy._rpm.max_rate == 2
    assert policy._tpm is not None and policy._tpm.max_rate == 100
    unlimited = CallPolicy.of(RunConfig())
    assert unlimited._rpm is None and unlimited._tpm is None
