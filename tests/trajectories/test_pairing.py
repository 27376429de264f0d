"""Every match mode on hand-made trajectories, the expected outcomes worked out by hand;
the cases greedy pairing and an order check on bipartite pairs get wrong."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import chatjudge.trajectories.pairing as pairing_module
from chatjudge.chat.toolcalls.expected import read_expected_calls
from chatjudge.trajectories import pair_calls

EXPECTED, _ = read_expected_calls(
    [{"name": "get", "arguments": {"city": "Paris"}}, {"name": "book", "arguments": {"day": 2}}]
)
GET, BOOK = ("get", {"city": "Paris"}), ("book", {"day": 2})
SEARCH, LYON = ("search", {"q": "x"}), ("get", {"city": "Lyon"})

# trajectory -> per mode (match, left_at), and the number of matched calls
CASES: dict[str, tuple[list[Any], dict[str, tuple[bool, int | None]], int]] = {
    "same calls, same order": (
        [GET, BOOK],
        {m: (True, None) for m in ("exact", "in-order", "any-order", "superset", "subset")},
        2,
    ),
    "swapped": (
        [BOOK, GET],
        {
            "exact": (False, 1),
            "in-order": (False, 3),  # get found at call 2, book never after it
            "any-order": (True, None),
            "superset": (True, None),
            "subset": (True, None),
        },
        2,
    ),
    "an extra call between": (
        [GET, SEARCH, BOOK],
        {
            "exact": (False, 2),
            "in-order": (True, None),
            "any-order": (False, 2),
            "superset": (True, None),
            "subset": (False, 2),
        },
        2,
    ),
    "stopped early": (
        [GET],
        {
            "exact": (False, 2),
            "in-order": (False, 2),
            "any-order": (False, 2),
            "superset": (False, 2),
            "subset": (True, None),
        },
        1,
    ),
    "a wrong argument": (
        [LYON, BOOK],
        {
            "exact": (False, 1),
            "in-order": (False, 1),
            "any-order": (False, 1),
            "superset": (False, 3),
            "subset": (False, 1),
        },
        1,
    ),
    "no call": (
        [],
        {
            "exact": (False, 1),
            "in-order": (False, 1),
            "any-order": (False, 1),
            "superset": (False, 1),
            "subset": (True, None),
        },
        0,
    ),
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("mode", ["exact", "in-order", "any-order", "superset", "subset"])
def test_every_mode_on_hand_made_trajectories(case: str, mode: Any) -> None:
    actual, outcomes, matched = CASES[case]
    pairing = pair_calls(EXPECTED, actual, mode)
    assert (pairing.match, pairing.left_at) == outcomes[mode]
    assert len(pairing.pairs) == matched  # the same in every mode: the mode decides the match


def test_greedy_pairing_would_lose_a_pair_the_matching_keeps() -> None:
    # Greedy, the lenient expected call (q ignored) takes the first call, the only one the
    # strict expected call (q = paris) accepts, and one pair is found where two exist.
    expected, _ = read_expected_calls(
        [
            {"name": "search", "arguments": {"q": None}, "compare": {"q": "ignore"}},
            {"name": "search", "arguments": {"q": "paris"}},
        ]
    )
    actual = [("search", {"q": "paris"}), ("search", {"q": "london"})]
    pairing = pair_calls(expected, actual, "any-order")
    assert pairing.match and sorted(pairing.pairs) == [(0, 1), (1, 0)]
    exact = pair_calls(expected, actual, "exact")  # in order, call 2 is not search(paris)
    assert (exact.match, exact.left_at, len(exact.pairs)) == (False, 2, 2)
    assert pair_calls(expected, actual, "superset").match
    assert pair_calls(expected, actual, "subset").match


def test_order_is_checked_on_an_order_preserving_pairing() -> None:
    # A maximum matching may cross: (lenient, call 2), (strict, call 1). In order, the
    # lenient call takes call 1 and the strict one call 2: the trajectory is in order.
    expected, _ = read_expected_calls(
        [
            {"name": "search", "compare": {"q": "ignore"}},
            {"name": "search", "arguments": {"q": "paris"}},
        ]
    )
    actual = [("search", {"q": "paris"}), ("search", {"q": "paris"})]
    for mode in ("exact", "in-order"):
        pairing = pair_calls(expected, actual, mode)  # type: ignore[arg-type]
        assert pairing.match and pairing.pairs == [(0, 0), (1, 1)]


def test_a_matching_with_choices_pairs_near_positions() -> None:
    expected, _ = read_expected_calls([{"name": "f", "extra_arguments": True}] * 3)
    actual = [("f", {"n": k}) for k in range(3)]
    assert pair_calls(expected, actual, "any-order").pairs == [(0, 0), (1, 1), (2, 2)]


def test_duplicate_calls_count_once_each() -> None:
    # Two identical calls against one expected: one pair, one extra (ragas#1658).
    expected, _ = read_expected_calls([{"name": "get", "arguments": {"city": "Paris"}}])
    pairing = pair_calls(expected, [GET, GET], "superset")
    assert pairing.match and len(pairing.pairs) == 1
    assert not pair_calls(expected, [GET, GET], "any-order").match


def test_the_solver_is_scipys_own_loaded_without_scipy_optimize() -> None:
    """A row with choices (the greedy case) is paired in a process that never imports
    `scipy.optimize` (0.4 s of a run), by the very function that module exports."""
    script = """
import sys
from chatjudge.chat.toolcalls.expected import read_expected_calls
from chatjudge.trajectories import pair_calls
expected, _ = read_expected_calls([
    {"name": "search", "arguments": {"q": None}, "compare": {"q": "ignore"}},
    {"name": "search", "arguments": {"q": "paris"}},
])
actual = [("search", {"q": "paris"}), ("search", {"q": "london"})]
print(sorted(pair_calls(expected, actual, "any-order").pairs), "scipy.optimize" in sys.modules)
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["[(0,", "1),", "(1,", "0)]", "False"]
    from scipy.optimize import linear_sum_assignment as public

    solve = pairing_module.linear_sum_assignment()
    weights = np.random.default_rng(3).random((6, 5)) * (np.arange(5) % 2 + 1)
    for maximize in (True, False):
        got, want = solve(weights, maximize=maximize), public(weights, maximize=maximize)
        np.testing.assert_array_equal(np.array(got), np.array(want))


def test_without_the_solver_file_scipy_optimize_gives_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where scipy keeps its solver elsewhere, the public import is taken: the rows that
    need the matching pair as before."""
    monkeypatch.setattr(pairing_module, "_solver_file", lambda: None)
    pairing_module.linear_sum_assignment.cache_clear()
    try:
        from scipy.optimize import linear_sum_assignment as public

        assert pairing_module.linear_sum_assignment() is public
        test_greedy_pairing_would_lose_a_pair_the_matching_keeps()
        test_a_matching_with_choices_pairs_near_positions()
    finally:
        pairing_module.linear_sum_assignment.cache_clear()


def test_calls_in_place_are_paired_in_place_as_the_solver_pairs_them() -> None:
    """Every call the expected one at its place, though each could take the other: the
    unordered modes take the pairs in place without the solver, which finds the same."""
    expected, _ = read_expected_calls([{"name": "f", "extra_arguments": True}] * 2)
    actual = [("f", {"n": 1}), ("f", {"n": 2})]
    for mode in ("any-order", "superset", "subset"):
        pairing = pair_calls(expected, actual, mode)  # type: ignore[arg-type]
        assert (pairing.match, pairing.pairs, pairing.left_at) == (True, [(0, 0), (1, 1)], None)
    assert pairing_module.maximum_pairs([[True, True], [True, True]], 2) == [(0, 0), (1, 1)]
