"""The one retry and rate-limit policy every model call goes through.

Transient faults (429, 5xx, timeouts, connection errors) are retried with
exponential back-off and jitter by tenacity, a 429's Retry-After is honoured, and
a 429 also pauses every worker of that judge until the provider's window passes
(adaptive back-off), so a rate-limited run slows down instead of hammering.
Non-retryable faults and the retry cap end the call as failed, with its cause.

tenacity is imported when a call first fails and aiolimiter only with a rate limit:
a run that needs neither skips loading them (aiolimiter reads package metadata to learn
its own version).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from chatjudge.errors import ModelError, ModelTimeoutError, RateLimitError
from chatjudge.options import RunConfig

if TYPE_CHECKING:
    from aiolimiter import AsyncLimiter
    from tenacity import AsyncRetrying, RetryCallState

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RetryConfig:
    max_retries: int = 6  # attempts after the first
    initial_wait: float = 1.0
    max_wait: float = 60.0
    timeout: float = 120.0  # per attempt, seconds

    @classmethod
    def of(cls, config: RunConfig) -> RetryConfig:
        return cls(
            max_retries=config.retries.max_retries,
            initial_wait=config.retries.retry_wait,
            timeout=config.client.timeout,
        )


class CallPolicy:
    """Retries, per-attempt timeout, rate limits and the shared 429 pause for one model."""

    @classmethod
    def of(cls, config: RunConfig) -> CallPolicy:
        """The policy the run's options ask for."""
        return cls(
            RetryConfig.of(config),
            requests_per_minute=config.rates.requests_per_minute,
            tokens_per_minute=config.rates.tokens_per_minute,
        )

    def __init__(
        self,
        config: RetryConfig,
        *,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
    ) -> None:
        self.config = config
        self._backoff: Callable[[RetryCallState], float] | None = None  # made at the first retry
        # Per-second buckets: a minute's allowance spread evenly, not spent in one burst.
        self._rpm = _bucket(requests_per_minute)
        self._tpm = _bucket(tokens_per_minute)
        self._paused_until = 0.0
        self.retries = 0
        self.rate_limited = 0

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, RateLimitError) and exc.retry_after is not None:
            return _after(exc.retry_after)
        assert self._backoff is not None
        return float(self._backoff(state))

    def _first_wait(self, exc: ModelError) -> float:
        if isinstance(exc, RateLimitError) and exc.retry_after is not None:
            return _after(exc.retry_after)
        return self.config.initial_wait * (1 + random.random())

    def _before_sleep(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, ModelError):
            self._note(exc)

    def _note(self, exc: ModelError) -> None:
        """Count a retry; a 429 pauses every worker of this judge (adaptive back-off)."""
        self.retries += 1
        if isinstance(exc, RateLimitError):
            self.rate_limited += 1
            pause = exc.retry_after if exc.retry_after is not None else self.config.initial_wait
            self._paused_until = max(self._paused_until, time.monotonic() + pause)

    async def call(
        self,
        attempt: Callable[[], Awaitable[T]],
        tokens: int = 0,
        admit: Callable[[], Awaitable[object]] | None = None,
    ) -> T:
        """Run `attempt` under the policy; raises the last ModelError when it gives up.
        `admit`: awaited before each attempt, after the rate limits and outside its
        timeout (the budget's admission, which may wait for room).

        The first attempt runs directly: tenacity's set-up is paid only by calls that
        fail, which keeps the common path of the judge loop lean.
        """
        try:
            return await self._once(attempt, tokens, admit)
        except ModelError as exc:
            if not exc.retryable or self.config.max_retries == 0:
                raise
            first = exc
        retrying = self._retrying()
        self._note(first)
        await asyncio.sleep(self._first_wait(first))
        return await retrying(self._once, attempt, tokens, admit)

    def _retrying(self) -> AsyncRetrying:
        from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt
        from tenacity.wait import wait_exponential_jitter

        if self._backoff is None:
            # Retries after the first run under tenacity, so its first wait is already doubled.
            self._backoff = wait_exponential_jitter(
                initial=2 * self.config.initial_wait,
                max=self.config.max_wait,
                jitter=self.config.initial_wait,
            )
        return AsyncRetrying(
            stop=stop_after_attempt(self.config.max_retries),
            wait=self._wait,
            retry=retry_if_exception(lambda e: isinstance(e, ModelError) and e.retryable),
            before_sleep=self._before_sleep,
            reraise=True,
        )

    async def _once(
        self,
        attempt: Callable[[], Awaitable[T]],
        tokens: int,
        admit: Callable[[], Awaitable[object]] | None,
    ) -> T:
        delay = self._paused_until - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        if self._rpm is not None:
            await self._rpm.acquire()
        if self._tpm is not None and tokens:
            await self._tpm.acquire(min(tokens, self._tpm.max_rate))
        if admit is not None:
            await admit()
        try:
            async with asyncio.timeout(self.config.timeout):
                return await attempt()
        except TimeoutError as exc:
            raise ModelTimeoutError(f"no reply within {self.config.timeout:g} s") from exc


def _bucket(per_minute: float | None) -> AsyncLimiter | None:
    if not per_minute:
        return None
    from aiolimiter import AsyncLimiter

    per_second = per_minute / 60
    return AsyncLimiter(max(per_second, 1.0), max(1.0, 1.0 / per_second) if per_second < 1 else 1.0)


def _after(retry_after: float) -> float:
    """The provider's Retry-After plus a little jitter, so waiting workers do not return at once."""
    return retry_after + random.uniform(0, 0.1 * retry_after + 0.05)
