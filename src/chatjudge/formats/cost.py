"""A command's cost, by role, as every summary holds it (`cost`)."""

from __future__ import annotations

from chatjudge.formats.shared import Record


class RoleCostRecord(Record):
    """One role's cost in USD (None: a price is unknown) and where its prices came from:
    `usd` what the replies its results hold cost in all, across resumes (each distinct call
    once); `invocation_usd` what this invocation's calls sent for cost."""

    usd: float | None
    priced: bool
    source: str
    # Replies with more output tokens than their call's max_tokens (a server that ignores
    # it): charged their real tokens, so they can take the spend over a budget.
    over_cap_replies: int = 0
    invocation_usd: float | None = None  # written since format 2 was; absent in older files


class BudgetRecord(Record):
    """`--max-cost-usd`: the limit, and whether it stopped the command before the end."""

    max_usd: float
    spent_usd: float  # as the budget counts it: a reply without token counts at its worst case
    reached: bool  # True: the command stopped there (exit 4); the same command resumes
    done: int  # items (run) or rows/conversations (generate, simulate) finished and written
    total: int  # ... of those the command had to do


class Cost(Record):
    """A command's cost by role (judge; model_under_test; assistant, simulated_user)."""

    roles: dict[str, RoleCostRecord]
    total_usd: float | None  # None when any role's price is unknown
    unpriced: list[str]  # the roles whose price is unknown
    budget: BudgetRecord | None = None  # with --max-cost-usd
    # What this invocation's calls sent for cost (None: a price is unknown); `total_usd` is
    # what the results cost in all, across resumes. Absent in files written before it.
    invocation_usd: float | None = None
