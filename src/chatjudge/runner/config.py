"""Run options, grouped in one model so a typo is an error, not a silent default."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from chatjudge.runner.policy import RetryConfig
from chatjudge.types import GenerationSettings


class RunConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    concurrency: int = Field(16, ge=1, description="judge calls in flight at once")
    samples: int = Field(1, ge=1, description="independent judge calls per item and order")
    flip: bool = Field(True, description="pairwise: judge both presentation orders")
    limit: int | None = Field(None, ge=1, description="judge only the first N rows")
    no_cache: bool = Field(False, description="send every call again, ignoring the store")
    include_system: bool = Field(False, description="show system messages to the judge")
    skip_invalid: bool = Field(False, description="judge the valid rows, list the invalid ones")
    temperature: float = Field(0.0, ge=0.0)
    max_tokens: int = Field(1024, ge=1)
    seed: int | None = None
    timeout: float = Field(120.0, gt=0, description="seconds per judge call attempt")
    max_retries: int = Field(6, ge=0, description="attempts after the first, transient faults")
    retry_wait: float = Field(1.0, gt=0, description="first back-off, seconds (doubles, jittered)")
    parse_retries: int = Field(2, ge=0, description="asks again after a reply with no verdict")
    requests_per_minute: float | None = Field(None, gt=0)
    tokens_per_minute: float | None = Field(None, gt=0)
    price_in: float | None = Field(None, ge=0, description="USD per million input tokens")
    price_out: float | None = Field(None, ge=0, description="USD per million output tokens")
    local_workers: int | None = Field(
        None, ge=1, description="local judges: llama.cpp worker processes (default: per core)"
    )
    progress: bool = True

    def settings(self, sample: int) -> GenerationSettings:
        """Generation settings of one sample: with a seed, each sample gets its own."""
        seed = None if self.seed is None else self.seed + sample
        return GenerationSettings(self.temperature, self.max_tokens, seed)

    def retry(self) -> RetryConfig:
        return RetryConfig(
            max_retries=self.max_retries, initial_wait=self.retry_wait, timeout=self.timeout
        )

    def fingerprint(self) -> dict[str, object]:
        """The options that change results (for naming a default run directory)."""
        return self.model_dump(
            include={
                "samples",
                "flip",
                "limit",
                "include_system",
                "temperature",
                "max_tokens",
                "seed",
            }
        )
