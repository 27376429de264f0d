"""Every error chatjudge raises: data problems, usage problems, and model faults with
their retry policy.

The run engine decides what to retry by looking only at these types, so every
provider maps its own failures onto them and no provider retries by itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from chatjudge.secrets import mask


class ExitCode(IntEnum):
    """What a command's exit status means, the same for every command; the CLI maps each
    outcome to one of these (`chatjudge.cli.common.exit_for`), never to a bare number."""

    OK = 0  # everything done; gate: pass; --dry-run
    FAILED = 1  # some items failed or were skipped (all recorded); gate: fail
    USAGE = 2  # bad usage or invalid input, or a fatal fault before anything finished
    INCONCLUSIVE = 3  # gate: not decided
    BUDGET = 4  # --max-cost-usd reached, everything written
    INTERRUPTED = 130  # Ctrl-C, as a shell reports a process that SIGINT stopped


class ChatJudgeError(Exception):
    """Base of every error chatjudge raises on purpose. Its message never holds an API key:
    a server may quote the request's headers, so text is masked here, where it enters."""

    def __init__(self, *args: Any) -> None:
        if args and isinstance(args[0], str):
            args = (mask(args[0]), *args[1:])
        super().__init__(*args)


class ChatJudgeWarning(UserWarning):
    """Something the user should know before trusting a run (the CLI prints it as a warning)."""


class UsageError(ChatJudgeError):
    """A bad option, protocol name, judge name or file: exit status 2, nothing sent."""


class StoreError(UsageError):
    """The store of calls cannot be used (not a store, from a newer chatjudge, not
    writable): found when it is opened, before anything is sent."""


@dataclass(frozen=True, slots=True)
class Problem:
    """One problem with one input row; `row` counts from 1 (line or data row number)."""

    row: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"row {self.row}, field '{self.field}': {self.message}"


class DataValidationError(ChatJudgeError):
    """The dataset failed validation; every problem is listed and nothing was sent."""

    def __init__(self, problems: list[Problem], total: int | None = None) -> None:
        self.problems = problems
        self.total = total if total is not None else len(problems)
        shown = "\n".join(f"  {p}" for p in problems)
        more = self.total - len(problems)
        tail = f"\n  ... and {more} more" if more > 0 else ""
        super().__init__(f"invalid data ({self.total} problem(s)):\n{shown}{tail}")


class VerdictError(ChatJudgeError):
    """A judge reply that does not yield a valid verdict: a recorded failure, never a score."""


class ModelError(ChatJudgeError):
    """A model call failed, whatever the model's role (judge, model under test, simulated
    user): one family for all. `retryable` tells the call path whether to try again."""

    retryable = False
    fatal = False  # stops the whole run (for example a bad API key)

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class RateLimitError(ModelError):
    """429 or a provider's equivalent; `retry_after` seconds when the provider said so."""

    retryable = True

    def __init__(
        self, message: str, *, status: int | None = 429, retry_after: float | None = None
    ) -> None:
        super().__init__(message, status=status)
        self.retry_after = retry_after


class ServerError(ModelError):
    """5xx, overloaded: transient on the provider's side."""

    retryable = True


class ModelConnectionError(ModelError):
    """Connection refused, reset or closed before a reply."""

    retryable = True


class ModelTimeoutError(ModelError):
    """No reply within the per-call timeout."""

    retryable = True


class BadRequestError(ModelError):
    """The provider refused this request (4xx other than auth and rate limits)."""


class AuthError(ModelError):
    """Missing or rejected credentials: retrying cannot help and every call would fail."""

    fatal = True


class ModelLoadError(ModelError):
    """A local model file could not be loaded: every call would fail the same way."""

    fatal = True


class LocalModelCrashError(ModelError):
    """A llama.cpp worker process died (a signal or an exit): the run stops, what finished stays."""

    fatal = True


class WorkerLostError(ModelError):
    """A Ray worker died with the call in flight: the call is sent again to another worker."""

    retryable = True


class ClusterLostError(ModelError):
    """Every Ray worker of a model is gone: the run stops, what finished stays."""

    fatal = True


class FatalModelError(ChatJudgeError):
    """A model fault that stopped the command (bad credentials, a crashed model): nothing more
    is sent. `finished` counts the items finished (and written) before the stop."""

    def __init__(self, message: str, *, finished: int = 0) -> None:
        super().__init__(message)
        self.finished = finished


class BudgetReached(ChatJudgeError):
    """`--max-cost-usd` refused a call: no call starts after it, the calls in flight finish.
    Raised where a call would start; it stops the command's workers like a fatal fault."""


class BudgetReachedError(ChatJudgeError):
    """The command stopped at its budget after writing everything (exit 4); `summary` is
    the summary it wrote, which says how far it got. The same command with a larger
    budget resumes, the calls already paid for answered by the store."""

    exit_code = ExitCode.BUDGET

    def __init__(self, message: str, *, summary: dict[str, Any]) -> None:
        super().__init__(message)
        self.summary = summary


def error_for_status(status: int, message: str, *, retry_after: float | None = None) -> ModelError:
    """What an HTTP error status means for the run, the same for every provider.

    401/403 stop the run; 429 is retried after `retry_after`; 408 is a timeout;
    409 and 5xx (Anthropic's 529 overloaded included) are transient; any other
    4xx is this request's own fault and is not retried.
    """
    if status in (401, 403):
        return AuthError(message, status=status)
    if status == 429:
        return RateLimitError(message, status=status, retry_after=retry_after)
    if status == 408:
        return ModelTimeoutError(message, status=status)
    if status >= 500 or status == 409:
        return ServerError(message, status=status)
    return BadRequestError(message, status=status)
