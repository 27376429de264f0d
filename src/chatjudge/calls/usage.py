"""What model calls used: calls and tokens (their cost: `chatjudge.calls.prices`).

One type counts for every purpose: a run's or a role's total (`calls` are the replies
sent for, `cached_calls` those the store answered, which cost nothing) and one row's
tokens for one role (`add` every reply it used, stored or not; written without
`cached_calls`, as the rows of `generate` and `simulate` always were). Replies that ran
past their call's `max_tokens` (a server that ignores it) are counted apart: they are
charged their real tokens, which a budget's worst case did not foresee.
"""

from __future__ import annotations

from dataclasses import dataclass

from chatjudge.chat.types import Reply


@dataclass(slots=True)
class Usage:
    """Calls and tokens; cached calls cost nothing and count apart."""

    calls: int = 0
    cached_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    over_cap: int = 0  # replies with more output tokens than their call's cap

    def add(self, reply: Reply, cap: int | None = None) -> None:
        """Count `reply`; `cap`: its call's `max_tokens`, to count a reply beyond it."""
        self.calls += 1
        self.input_tokens += reply.input_tokens or 0
        self.output_tokens += reply.output_tokens or 0
        if cap is not None and (reply.output_tokens or 0) > cap:
            self.over_cap += 1

    def as_dict(self, *, cached: bool = True) -> dict[str, int]:
        """The written form; `cached=False` for a row's usage, which has no `cached_calls`."""
        if not cached:
            return {
                "calls": self.calls,
                "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens,
            }
        return {
            "calls": self.calls,
            "cached_calls": self.cached_calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
        }
