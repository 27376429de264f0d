"""The option groups of the commands that call models (`run`, `generate`, `simulate`):
what is judged, how it is sampled, retried, rate-limited, priced and reached."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import field_validator

from chatjudge.chat.render import TOOL_RESULT_CHARS, JudgeSees, JudgeView
from chatjudge.chat.types import DEFAULT_MATCH, GenerationSettings, MatchMode
from chatjudge.options.declare import BASE_URL_PROVIDERS, OptionGroup, option
from chatjudge.options.shard import Shard
from chatjudge.options.texts import (
    JUDGE_SEES_HELP,
    NO_TOOLS_HELP,
    OVERWRITE_HELP,
    TOOL_REPLAY_HELP,
    TOOL_RESULT_CHARS_HELP,
    TOOLS_HELP,
)


class RunOptions(OptionGroup):
    concurrency: int = option(
        16,
        "Calls in flight at once (simulate: conversations).",
        ge=1,
        help_for={"gate": "--sequential: calls in flight at once."},
    )
    samples: int = option(
        1,
        "Independent samples per row (run: judge calls per item; generate: replies and "
        "simulate: conversations, each with seed + k, written as rows <id>#<k>: the tries "
        "of one task that pass^k reads).",
        ge=1,
        fingerprint=True,
        help_for={"gate": "--sequential: judge calls per row and order."},
    )
    flip: bool = option(
        True,
        "Pairwise: judge both presentation orders.",
        flags=("--flip/--no-flip",),
        fingerprint=True,
    )
    limit: int | None = option(None, "Only the first N rows.", ge=1, fingerprint=True)
    no_cache: bool = option(False, "Send every call again, ignoring the store.")
    include_system: bool = option(False, "Show system messages to the judge.", fingerprint=True)
    judge_sees: JudgeSees = option(
        "trajectory",
        JUDGE_SEES_HELP,
        fingerprint=True,
        when_set=True,
        metavar="VIEW",
    )
    tool_result_chars: int = option(
        TOOL_RESULT_CHARS,
        TOOL_RESULT_CHARS_HELP,
        ge=1,
        fingerprint=True,
        when_set=True,
        metavar="N",
    )
    match: MatchMode = option(
        DEFAULT_MATCH,
        "tool-trajectory: how a row's calls must match its expected_tool_calls where it has "
        "no `match` column: exact (the same calls in the same order, nothing else), in-order "
        "(the expected calls in order, others allowed between), any-order (the expected "
        "calls, nothing else), superset (every expected call, others allowed) or subset "
        "(only expected calls, not all needed).",
        fingerprint=True,
        when_set=True,
        metavar="MODE",
    )
    checked_tools: str | None = option(
        None,
        "tool-trajectory: the tools a check is about, names or glob patterns (write_*,delete) "
        "where a row has no `checked_tools` column: calls to other tools count nowhere, and "
        "an expected call to one is a row error.",
        fingerprint=True,
        when_set=True,
        metavar="PATTERN,...",
    )
    executor: Literal["local", "ray"] = option(
        "local",
        "Where model calls run: this process, or Ray workers (the cluster at RAY_ADDRESS, "
        "else a local one on loopback only); the store and results stay here either way.",
    )
    workers: int | None = option(
        None,
        "Ray workers per model (default: one per CPU of the cluster; local models share them).",
        ge=1,
    )
    overwrite: bool = option(False, OVERWRITE_HELP)
    skip_invalid: bool = option(
        False,
        "Go on with the valid rows and list the invalid ones (row, field) in the summary "
        "(and the report), exit 1; without it, invalid data stops everything (exit 2).",
    )
    shard: str | None = option(
        None,
        "I/N: take only shard I (0 to N-1) of the rows, those whose id's SHA-256 is I modulo "
        "N, with its own output; N drivers, one per shard, then `chatjudge merge` their outputs.",
        fingerprint=True,
        when_set=True,
    )

    judge_check: Path | None = option(
        None,
        "A check file (JSONL/CSV: the protocol's fields, an id and a reference label in "
        "--human's format) judged beside the data with every run, its cost shown apart; "
        "`gate` then tells a judge that changed between two runs from a changed system.",
        metavar="FILE",
    )
    judge_check_samples: int = option(
        3, "Times each check item is asked (the judge's own noise).", ge=2, metavar="N"
    )

    def judge_view(self) -> JudgeView:
        """What the judge is shown of a row, by these options."""
        return JudgeView(self.include_system, self.tool_result_chars, self.judge_sees)

    def checked(self) -> tuple[str, ...] | None:
        """`--checked-tools` as patterns (None: every tool checked)."""
        if self.checked_tools is None:
            return None
        from chatjudge.chat.toolcalls.expected import read_checked_tools  # tool-trajectory's only

        return read_checked_tools(self.checked_tools)[0]

    @field_validator("checked_tools", mode="before")
    @classmethod
    def _checked_tools(cls, value: Any) -> Any:
        """Patterns given as a list (the Python API) are the flag's text; none is an error."""
        if value is None:
            return None
        from chatjudge.chat.toolcalls.expected import read_checked_tools  # tool-trajectory's only

        patterns, problem = read_checked_tools(value)
        if problem is not None:
            raise ValueError(problem)
        return None if patterns is None else ",".join(patterns)

    @field_validator("shard")
    @classmethod
    def _shard(cls, value: str | None) -> str | None:
        if value is None:
            return None
        return str(Shard.parse(value))


class GenerationOptions(OptionGroup):
    temperature: float = option(
        0.0, "Sampling temperature (simulate: the assistant's).", ge=0.0, fingerprint=True
    )
    max_tokens: int = option(
        1024, "Reply token limit (simulate: the assistant's).", ge=1, fingerprint=True
    )
    seed: int | None = option(None, "Sampling seed (sample k uses seed + k).", fingerprint=True)

    def settings(self, sample: int = 0) -> GenerationSettings:
        """Generation settings of one sample: with a seed, each sample gets its own."""
        seed = None if self.seed is None else self.seed + sample
        return GenerationSettings(self.temperature, self.max_tokens, seed)


class RetryOptions(OptionGroup):
    max_retries: int = option(
        6, "Retries of transient faults (429, 5xx, timeouts, lost connections).", ge=0
    )
    retry_wait: float = option(1.0, "First back-off in seconds (then doubling, with jitter).", gt=0)
    parse_retries: int = option(
        2, "Asks again, at once, after a reply that holds no valid verdict.", ge=0
    )


class RateOptions(OptionGroup):
    requests_per_minute: float | None = option(
        None, "Requests per minute, per model.", flags=("--rpm",), gt=0
    )
    tokens_per_minute: float | None = option(
        None, "Prompt tokens per minute, per model.", flags=("--tpm",), gt=0
    )


class PricingOptions(OptionGroup):
    price_in: float | None = option(
        None,
        "USD per million input tokens.",
        ge=0,
        allow_inf_nan=False,
        help_for={"gate": "--sequential: USD per million input tokens."},
    )
    price_out: float | None = option(
        None,
        "USD per million output tokens.",
        ge=0,
        allow_inf_nan=False,
        help_for={"gate": "--sequential: USD per million output tokens."},
    )
    prices: Path | None = option(
        None,
        'Prices per model, a TOML file whose table models."openai/my-model" holds input '
        "and output in USD per million tokens; wins over --price-in/--price-out and the "
        "bundled price table.",
        help_for={"gate": "--sequential: prices per model, a TOML file."},
    )
    max_cost_usd: float | None = option(
        None,
        "Budget in USD for this command's calls: no call starts whose worst case (its input "
        "and its output cap at the model's price) could go over it; one that does not fit "
        "beside the calls in flight waits for them. Reached when nothing is in flight and the "
        "next call does not fit: everything is written and the exit status is 4. The same "
        "command with a larger budget resumes; calls the store answers cost nothing.",
        gt=0,
        allow_inf_nan=False,
        help_for={
            "gate": "--sequential: budget in USD for the judging; reached before a decision, "
            "exit 4 (the same command with a larger budget resumes)."
        },
    )


class ClientOptions(OptionGroup):
    """How models are reached: endpoints, per-attempt timeout, local worker processes."""

    @field_validator("base_url", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return (value,) if isinstance(value, str) else value

    base_url: tuple[str, ...] = option(
        (),
        f"The judges' endpoint ({BASE_URL_PROVIDERS}); repeat to spread calls over replicas.",
        fingerprint="base_urls",
        help_for={
            "generate": f"The endpoint of the model under test ({BASE_URL_PROVIDERS}); "
            "repeat to spread calls over replicas.",
            "gate": "--sequential: judge endpoint.",
        },
    )
    timeout: float = option(120.0, "Seconds per call attempt.", gt=0)
    local_workers: int | None = option(
        None, "Local models: llama.cpp worker processes (default: one per core, up to 4).", ge=1
    )


class SimulationOptions(OptionGroup):
    """`chatjudge simulate`: the simulated user and the length of a conversation."""

    @field_validator("assistant_base_url", "user_base_url", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return (value,) if isinstance(value, str) else value

    max_turns: int = option(
        6,
        "Assistant replies per conversation at most (the simulated user is not called after "
        "the last).",
        ge=1,
        fingerprint=True,
    )
    user_temperature: float = option(
        1.0, "The simulated user's sampling temperature (CollabLLM's).", ge=0.0, fingerprint=True
    )
    user_max_tokens: int = option(
        512, "The simulated user's reply token limit.", ge=1, fingerprint=True
    )
    user_prompt: Path | None = option(
        None,
        "A text file replacing the simulated user's instructions (placeholders {question}, "
        "{user_context}, {end_marker}).",
        fingerprint=True,
    )
    assistant_base_url: tuple[str, ...] = option(
        (),
        f"The assistant's endpoint ({BASE_URL_PROVIDERS}); repeatable.",
        fingerprint=True,
    )
    user_base_url: tuple[str, ...] = option(
        (), "The simulated user's endpoint; repeatable.", fingerprint=True
    )


class ToolOptions(OptionGroup):
    """`generate` and `simulate`: how the tool calls of the model under test are answered,
    and how many model calls one turn may take (`chatjudge.produce.tool_loop`)."""

    tool_replay: bool = option(False, TOOL_REPLAY_HELP, fingerprint=True, when_set=True)
    tools: str | None = option(
        None, TOOLS_HELP, fingerprint=True, when_set=True, metavar="MODULE:OBJECT"
    )
    no_tools: bool = option(False, NO_TOOLS_HELP, fingerprint=True, when_set=True)
    tool_timeout: float = option(
        30.0, "Seconds each call of a --tools function may take; then its error text.", gt=0
    )
    max_tool_steps: int = option(
        8,
        "Model calls per turn at most, where the model is offered tools: a turn still "
        "calling tools at the last ends there (<field>_ended: max_tool_steps).",
        ge=1,
        fingerprint=True,
        when_set=True,
        metavar="N",
    )
