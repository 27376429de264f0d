"""Pairing a trajectory's calls with the expected calls, and whether it matches by a mode.

Which calls count as matched (precision, recall, F1) is decided the same way in every mode:
by a maximum bipartite matching between expected and actual calls, an edge wherever a call
is an expected one (`ExpectedCall.accepts`). Never greedily: with expected calls
`search(q: ignore)` and `search(q="paris")` and calls `search(q="paris")`,
`search(q="london")`, taking the first acceptable call for each expected call in turn pairs
the lenient expected call with the only call the strict one accepts, and finds one pair
where two exist. The matching is scipy's `linear_sum_assignment` (an exact assignment) on
weights 1 + a bonus below 1 in all, larger for nearer positions: the most pairs first, and
among matchings of that size the one that pairs calls at nearby steps (the one a reader
expects to see). Where no call has a choice (each expected call accepts at most one call
and each call is accepted by at most one expected call) the pairs are forced, and read off;
where every call is the expected one at its place, those pairs are taken (no other matching
of that size is as near).

The mode decides `trajectory_match` (E expected calls, A actual ones, M matched):
- `exact`: A = E and call k is expected call k for every k;
- `in-order`: the expected calls appear in order, other calls allowed between. This is a
  subsequence test, for which taking each expected call at the earliest acceptable call
  after the previous one is exact (where any order-preserving embedding exists, the
  earliest one does: each of its positions is at most the other's, by induction); it is
  also what tells the longest prefix of the expected calls the trajectory followed. A
  check of order on the bipartite pairs would be wrong: a maximum matching may cross
  pairs that an order-preserving pairing of the same size keeps straight;
- `any-order`: M = E = A; `superset`: M = E (other calls allowed); `subset`: M = A (not
  every expected call needed).
Where the trajectory matches in an ordered mode, its pairs are the order-preserving ones.
Where a step (one assistant message) made several calls, `exact` and `in-order` take them in
any order among themselves, as agentevals' strict mode does (`chatjudge.trajectories.steps`).

`left_at`: the first step (1-based among the trajectory's calls) where the trajectory left
the expected one; A + 1 when it stopped before an expected call; None when it matches.
Exact: the first position whose call is not the expected one (or where one list ends);
in-order: the step after the last call of the longest expected prefix found in order;
unordered modes: the first extra call where extra calls fail the mode, else A + 1.
"""

from __future__ import annotations

import functools
import importlib.machinery
import importlib.util
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chatjudge.chat.toolcalls.expected import ExpectedCall, MatchMode
from chatjudge.trajectories.steps import Call, exact_by_steps, in_order_by_steps


@dataclass(slots=True)  # not frozen: made per row, where frozen slows every __init__
class Pairing:
    match: bool
    pairs: list[tuple[int, int]]  # (expected index, actual index), by expected index
    left_at: int | None


def pair_calls(
    expected: Sequence[ExpectedCall],
    actual: Sequence[Call],
    mode: MatchMode,
    steps: Sequence[int] | None = None,
) -> Pairing:
    """The matched pairs, whether the trajectory matches by `mode`, and where it left.
    `steps`: the step (assistant message) of each call, where a step made several calls
    (`chatjudge.trajectories.steps`); None: each call is a step of its own. (The ordered
    modes decide a match before comparing every call with every expected one, which only a
    trajectory that does not match needs.)"""
    n_expected, n_actual = len(expected), len(actual)
    if steps is not None and mode in ("exact", "in-order"):
        return _by_steps(expected, actual, mode, steps)
    if mode == "exact":
        shared = min(n_expected, n_actual)
        first = next((k for k in range(shared) if not expected[k].accepts(*actual[k])), None)
        if first is None and n_expected == n_actual:
            return Pairing(True, [(k, k) for k in range(shared)], None)
        left = (shared if first is None else first) + 1
        return Pairing(False, maximum_pairs(_accepted(expected, actual), n_actual), left)
    if mode == "in-order":
        prefix = _in_order_prefix(expected, actual)
        if len(prefix) == n_expected:
            return Pairing(True, prefix, None)
        left = prefix[-1][1] + 2 if prefix else 1
        return Pairing(False, maximum_pairs(_accepted(expected, actual), n_actual), left)
    if n_expected == n_actual and all(map(_accepts, expected, actual)):
        # Every call where it is expected: the pairs in place are the one maximum matching
        # with no distance, which the solver would give (and every unordered mode holds).
        return Pairing(True, [(k, k) for k in range(n_actual)], None)
    pairs = maximum_pairs(_accepted(expected, actual), n_actual)
    paired = {j for _, j in pairs}
    extra = [j for j in range(n_actual) if j not in paired]
    missing = len(pairs) < n_expected
    if mode == "superset":
        extra = []
    elif mode == "subset":
        missing = False
    if not extra and not missing:
        return Pairing(True, pairs, None)
    return Pairing(False, pairs, extra[0] + 1 if extra else n_actual + 1)


def _by_steps(
    expected: Sequence[ExpectedCall], actual: Sequence[Call], mode: MatchMode, steps: Sequence[int]
) -> Pairing:
    """`exact` and `in-order` where a step made several calls, in any order among them."""
    if mode == "exact":
        pairs, left = exact_by_steps(expected, actual, steps)
        if pairs is not None:
            return Pairing(True, pairs, None)
    else:
        pairs = in_order_by_steps(expected, actual, steps)
        if len(pairs) == len(expected):
            return Pairing(True, pairs, None)
        left = max(j for _, j in pairs) + 2 if pairs else 1
    return Pairing(False, maximum_pairs(_accepted(expected, actual), len(actual)), left)


def _accepts(expected: ExpectedCall, call: Call) -> bool:
    return expected.accepts(*call)


def _accepted(expected: Sequence[ExpectedCall], actual: Sequence[Call]) -> list[list[bool]]:
    """`[i][j]`: whether call j is expected call i (only calls of its name are compared)."""
    return [
        [name == e.name and e.accepts(name, arguments) for name, arguments in actual]
        for e in expected
    ]


def _in_order_prefix(
    expected: Sequence[ExpectedCall], actual: Sequence[Call]
) -> list[tuple[int, int]]:
    """The longest prefix of the expected calls found in order, each at the earliest
    acceptable call after the previous one."""
    pairs: list[tuple[int, int]] = []
    j = 0
    for i, call in enumerate(expected):
        while j < len(actual) and not call.accepts(*actual[j]):
            j += 1
        if j == len(actual):
            break
        pairs.append((i, j))
        j += 1
    return pairs


def maximum_pairs(ok: list[list[bool]], n_actual: int) -> list[tuple[int, int]]:
    """A maximum matching of expected to actual calls (`ok[i][j]`: call j is expected call
    i), among those of its size one pairing near positions."""
    if not ok or not n_actual:
        return []
    by_actual = [0] * n_actual
    forced = True
    for row in ok:
        if sum(row) > 1:
            forced = False
            break
        for j, one in enumerate(row):
            by_actual[j] += one
    if forced and max(by_actual) <= 1:
        return [(i, row.index(True)) for i, row in enumerate(ok) if True in row]
    # the weights in Python: numpy's set-up costs more than these few cells (issue 31)
    size = len(ok) + n_actual
    share = min(len(ok), n_actual) + 1
    weights = [
        [1 + (1 - abs(i - j) / size) / share if one else 0.0 for j, one in enumerate(row)]
        for i, row in enumerate(ok)
    ]
    chosen = linear_sum_assignment()(weights, maximize=True)
    return [(int(i), int(j)) for i, j in zip(*chosen, strict=True) if ok[i][j]]


Solver = Callable[..., tuple[Any, Any]]


@functools.cache
def linear_sum_assignment() -> Solver:
    """scipy's `linear_sum_assignment`, loaded with the first row that needs it. Importing
    `scipy.optimize` loads most of scipy (linear algebra, sparse matrices, the optimizers),
    a noticeable share of even a large `run -p tool-trajectory`, for one solver that is a
    C extension of its own (`scipy.optimize._lsap`, needing numpy only). That extension is
    loaded alone where scipy keeps it; where it is not there (another scipy),
    through `scipy.optimize`: the same function either way."""
    path = _solver_file()
    spec = importlib.util.spec_from_file_location(_SOLVER, path) if path else None
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
            solver: Solver = module.linear_sum_assignment
            return solver
        except (ImportError, AttributeError):
            pass
    from scipy.optimize import linear_sum_assignment as public

    return public


_SOLVER = "scipy.optimize._lsap"


def _solver_file() -> Path | None:
    """The file of scipy's assignment solver, where scipy keeps it (None: not found)."""
    spec = importlib.util.find_spec("scipy")
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent / "optimize"
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = folder / f"_lsap{suffix}"
        if path.is_file():
            return path
    return None
