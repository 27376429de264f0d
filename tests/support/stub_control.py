"""What a test sets and reads of a stand-in server: its behaviour (`StubConfig`, changeable at
run time through `POST /_control`) and what it saw (`StubStats`, `GET /_stats`)."""

from __future__ import annotations

from collections import Counter, deque
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tests.support.stub_faults import FaultKind
from tests.support.stub_replies import END_MARKER, prompt_hash

FormatType = Literal["json_schema", "json_object"]
RetryHeader = Literal["Retry-After", "retry-after-ms"]


class StubConfig(BaseModel):
    """Behaviour of the server; every field can be changed at runtime."""

    model_config = ConfigDict(extra="forbid")

    latency: float = Field(0.0, ge=0, description="seconds before each reply (async sleep)")
    jitter: float = Field(0.0, ge=0, description="extra random delay, uniform in [0, jitter)")
    fault_rate: float = Field(0.0, ge=0, le=1, description="share of attempts that fault")
    fault_kinds: tuple[FaultKind, ...] = Field(
        ("429", "500", "503", "reset", "malformed", "truncated"),
        description="kinds drawn from (per prompt and attempt); `hang`, the 4xx kinds and "
        "`garbled` (a 200 whose body is no chat completion) and `context` (a 400 saying the "
        "context window is exceeded) only when listed",
    )
    faulty_attempts: int | None = Field(
        2, ge=0, description="only a prompt's first N attempts may fault (None: every attempt)"
    )
    permanent: dict[str, FaultKind] = Field(
        default_factory=dict, description="prompt marker -> fault on every attempt"
    )
    retry_after: float = Field(0.1, ge=0, description="seconds sent in 429 Retry-After")
    retry_after_headers: tuple[RetryHeader, ...] = Field(
        ("Retry-After", "retry-after-ms"),
        description="the headers a 429 carries `retry_after` in (seconds, milliseconds)",
    )
    hang_seconds: float = Field(3600.0, ge=0, description="delay of a `hang` before it replies")
    reject_response_format: bool = Field(False, description="400 on any `response_format`")
    reject_format_types: tuple[FormatType, ...] = Field(
        (), description="400 on a `response_format` of these types (others are served)"
    )
    api_key: str | None = Field(None, description="require `Authorization: Bearer KEY`")
    echo_authorization: bool = Field(
        False,
        description="error messages quote the request's Authorization header, as some proxies do",
    )
    record: bool = Field(False, description="keep the last 1,000 requests' headers and bodies")
    seed: int = Field(0, description="changes which attempts fault, not the replies")
    seeded: bool = Field(
        False,
        description="replies depend on the request's `seed` too, as a sampling model's do: "
        "`--samples` with `--seed` gets different replies per sample",
    )
    models: tuple[str, ...] = ("stub",)
    user_ends_after: int | None = Field(
        None,
        ge=0,
        description="simulated-user requests (a reply schema with a `response`): the response "
        "ends with `user_appends` once the transcript holds this many assistant replies",
    )
    user_appends: str = Field(END_MARKER, description="what such a response ends with")
    reasoning: str | None = Field(
        None, description="replies without a schema start with `<think>reasoning</think>`"
    )
    tool_steps: int = Field(
        2,
        ge=0,
        description="requests that offer `tools`: the reply calls the first tool until the "
        "messages after the last user message hold this many tool results, then quotes them",
    )
    tool_call_ids: Literal["distinct", "same", "none", "shared"] = Field(
        "distinct",
        description="the ids of the tool calls it makes: its own for each (`distinct`), "
        "`call_0` in every step (`same`), none (`none`), or two parallel calls under one id "
        "(`shared`), as some servers write them",
    )
    served_model: str | None = Field(
        None, description="the model name valid replies report (None: the request's)"
    )
    system_fingerprint: str | None = Field(
        None, description="the `system_fingerprint` valid replies report (None: none)"
    )
    completion_tokens: int | None = Field(
        None,
        ge=1,
        description="the usage every reply reports as its completion tokens, whatever the "
        "request's `max_tokens` (a server that ignores the cap); None: a quarter of its "
        "characters",
    )


class StubStats:
    """What the server saw. Prompts are kept as 64-bit hashes only, to stay small at 100k."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.requests = 0  # chat-completion requests received
        self.replies = 0  # 200 replies carrying a valid answer
        self.faults: Counter[str] = Counter()  # injected faults by kind
        self.rejected: Counter[str] = Counter()  # auth, response_format, bad_request
        self.in_flight = 0
        self.max_in_flight = 0
        self.first_request_at: float | None = None  # unix time: the span a client kept us busy
        self.last_reply_at: float | None = None
        self.sends: dict[int, int] = {}  # prompt hash -> requests
        self.answers: dict[int, int] = {}  # prompt hash -> valid 200 replies
        self.recorded: deque[dict[str, Any]] = deque(maxlen=1000)

    def sends_of(self, prompt: str) -> int:
        """How many requests carried this prompt (as the last user message)."""
        return self.sends.get(prompt_hash(prompt), 0)

    def answers_of(self, prompt: str) -> int:
        """How many valid replies this prompt got."""
        return self.answers.get(prompt_hash(prompt), 0)

    @property
    def distinct_prompts(self) -> int:
        return len(self.sends)

    @property
    def max_sends(self) -> int:
        return max(self.sends.values(), default=0)

    @property
    def max_answers(self) -> int:
        return max(self.answers.values(), default=0)

    @property
    def last_request(self) -> dict[str, Any] | None:
        return self.recorded[-1] if self.recorded else None

    def as_dict(self, prompts: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "requests": self.requests,
            "replies": self.replies,
            "faults": dict(self.faults),
            "rejected": dict(self.rejected),
            "in_flight": self.in_flight,
            "max_in_flight": self.max_in_flight,
            "first_request_at": self.first_request_at,
            "last_reply_at": self.last_reply_at,
            "distinct_prompts": self.distinct_prompts,
            "max_sends": self.max_sends,
            "max_answers": self.max_answers,
            "resent_prompts": sum(1 for n in self.sends.values() if n > 1),
        }
        if prompts:
            out["prompts"] = {
                f"{h:016x}": {"sends": n, "answers": self.answers.get(h, 0)}
                for h, n in self.sends.items()
            }
        return out
