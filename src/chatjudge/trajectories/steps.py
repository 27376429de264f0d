"""The ordered modes where a step made several calls: the calls of one assistant message
have no order among themselves (agentevals' strict mode compares a message's calls as a
set), the steps keep theirs. `steps[j]` is the step of call j, non-decreasing.

- `exact`: the expected calls, cut into consecutive runs as long as the steps, are the
  steps' calls, each run paired with its step's calls in any order.
- `in-order`: the expected calls in order, each at a step no earlier than the previous
  one's, several at one step in any order. Each expected call is taken at the current step
  while the calls taken there and it can all be paired, else at the earliest later step
  that has a call for it. That is exact: where a pairing puts it at a later step instead,
  the one taken here leaves every later step free, and a step's calls pair with fewer
  expected calls at least as easily; it also finds the longest prefix of the expected
  calls that the trajectory followed.

Within a step the calls are paired by augmenting paths (a maximum bipartite matching), never
greedily: a lenient expected call never keeps the only call of the step that a strict one
accepts while another call would do for it. Steps are a few calls: the paths are short.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from chatjudge.chat.toolcalls.expected import ExpectedCall

Call = tuple[str, Any]  # an actual call: its name and its arguments (parsed where JSON)
Accepts = Callable[[int, int], bool]  # whether call j is expected call i


def exact_by_steps(
    expected: Sequence[ExpectedCall], actual: Sequence[Call], steps: Sequence[int]
) -> tuple[list[tuple[int, int]] | None, int]:
    """The pairs where the trajectory matches `exact` by steps (else None), and where it
    left: the first call of the first step its run of expected calls does not pair, or
    the call after the last where it stopped before an expected call."""
    accepts = _accepts(expected, actual)
    n_expected = len(expected)
    pairs: list[tuple[int, int]] = []
    for step in _steps(steps):
        owner: dict[int, int] = {}  # call -> expected call
        for i in range(step.start, min(step.stop, n_expected)):
            _augment(i, (i, *step), owner, accepts, set())
        if len(owner) < len(step):
            return None, next(j for j in step if j not in owner) + 1
        pairs += [(i, j) for j, i in owner.items()]
    if n_expected > len(actual):
        return None, len(actual) + 1
    return sorted(pairs), 0


def in_order_by_steps(
    expected: Sequence[ExpectedCall], actual: Sequence[Call], steps: Sequence[int]
) -> list[tuple[int, int]]:
    """The longest prefix of the expected calls found in order by steps, paired."""
    accepts = _accepts(expected, actual)
    runs = _steps(steps)
    pairs: list[tuple[int, int]] = []
    at = 0  # the current step
    owner: dict[int, int] = {}  # its calls taken: call -> expected call
    for i in range(len(expected)):
        while at < len(runs) and not _augment(i, runs[at], owner, accepts, set()):
            pairs += [(k, j) for j, k in owner.items()]
            at, owner = at + 1, {}
        if at == len(runs):
            break
    pairs += [(k, j) for j, k in owner.items()]
    return sorted(pairs)


def _steps(steps: Sequence[int]) -> list[range]:
    """The positions of each step's calls."""
    runs: list[range] = []
    start = 0
    for j in range(1, len(steps) + 1):
        if j == len(steps) or steps[j] != steps[start]:
            runs.append(range(start, j))
            start = j
    return runs


def _accepts(expected: Sequence[ExpectedCall], actual: Sequence[Call]) -> Accepts:
    def accepts(i: int, j: int) -> bool:
        return expected[i].accepts(*actual[j])

    return accepts


def _augment(
    i: int, calls: Sequence[int], owner: dict[int, int], accepts: Accepts, seen: set[int]
) -> bool:
    """Pair expected call i with one of `calls`, moving earlier pairs along an augmenting
    path where needed; `owner` changes only where it succeeds. `calls` in the order tried
    (exact tries the call in place first)."""
    for j in calls:
        if j in seen or not accepts(i, j):
            continue
        seen.add(j)
        k = owner.get(j)
        if k is None or _augment(k, calls, owner, accepts, seen):
            owner[j] = i
            return True
    return False
