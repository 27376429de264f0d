"""Calls made in one step have no order among themselves under `exact` and `in-order` (as
agentevals' strict mode compares a message's calls); across steps the order holds. The
outcomes worked out by hand."""

from __future__ import annotations

from typing import Any

import pytest

from chatjudge.chat.toolcalls.expected import read_expected_calls
from chatjudge.trajectories import pair_calls

EXPECTED, _ = read_expected_calls(
    [
        {"name": "get", "arguments": {"city": "Paris"}},
        {"name": "book", "arguments": {"day": 2}},
        {"name": "search", "arguments": {"q": "x"}},
    ]
)
GET, BOOK, SEARCH = ("get", {"city": "Paris"}), ("book", {"day": 2}), ("search", {"q": "x"})
OTHER = ("lookup", {"id": 1})


@pytest.mark.parametrize("mode", ["exact", "in-order"])
def test_two_parallel_calls_in_swapped_order_match(mode: Any) -> None:
    # step 0: get; step 1: search and book in one message, swapped against the expected
    pairing = pair_calls(EXPECTED, [GET, SEARCH, BOOK], mode, steps=[0, 1, 1])
    assert (pairing.match, pairing.left_at) == (True, None)
    assert pairing.pairs == [(0, 0), (1, 2), (2, 1)]


@pytest.mark.parametrize("mode", ["exact", "in-order"])
def test_the_same_calls_in_different_steps_swapped_do_not(mode: Any) -> None:
    pairing = pair_calls(EXPECTED, [GET, SEARCH, BOOK], mode, steps=[0, 1, 2])
    assert not pairing.match
    assert not pair_calls(EXPECTED, [GET, SEARCH, BOOK], mode).match  # no steps: one each


def test_exact_cuts_the_expected_calls_by_the_steps_sizes() -> None:
    # step 0 holds get and search: the expected calls 1 and 2 are get and book
    pairing = pair_calls(EXPECTED, [SEARCH, GET, BOOK], "exact", steps=[0, 0, 1])
    assert (pairing.match, pairing.left_at) == (False, 1)  # search is not in the first run
    assert len(pairing.pairs) == 3  # every call is an expected one: precision 1
    shorter = pair_calls(EXPECTED, [GET, BOOK], "exact", steps=[0, 0])
    assert (shorter.match, shorter.left_at) == (False, 3)  # stopped before search


def test_in_order_takes_several_expected_calls_in_one_step_between_other_calls() -> None:
    actual = [OTHER, BOOK, GET, OTHER, SEARCH]
    pairing = pair_calls(EXPECTED, actual, "in-order", steps=[0, 1, 1, 2, 3])
    assert (pairing.match, pairing.pairs) == (True, [(0, 2), (1, 1), (2, 4)])
    # book before get in separate steps: out of order
    late = pair_calls(EXPECTED, [BOOK, GET, SEARCH], "in-order", steps=[0, 1, 2])
    assert (late.match, late.left_at) == (False, 3)  # get found at call 2, book never after


def test_a_step_pairs_its_calls_by_a_matching_not_greedily() -> None:
    # The lenient expected call (q ignored) first: taking the first call it accepts would
    # leave the strict one (q = paris) nothing in the step.
    expected, _ = read_expected_calls(
        [
            {"name": "search", "compare": {"q": "ignore"}},
            {"name": "search", "arguments": {"q": "paris"}},
        ]
    )
    actual = [("search", {"q": "paris"}), ("search", {"q": "london"})]
    for mode in ("exact", "in-order"):
        pairing = pair_calls(expected, actual, mode, steps=[0, 0])  # type: ignore[arg-type]
        assert (pairing.match, pairing.pairs) == (True, [(0, 1), (1, 0)])
        assert not pair_calls(expected, actual, mode).match  # type: ignore[arg-type]
