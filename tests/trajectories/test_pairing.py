"""Every match mode on hand-made trajectories, the expected outcomes worked out by hand;
the cases greedy pairing and an order check on bipartite pairs get wrong."""

from __future__ import annotations

from typing import Any

import pytest

from chatjudge.expected_calls import read_expected_calls
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
