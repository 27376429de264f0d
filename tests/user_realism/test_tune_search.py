"""`realism --tune`'s honest part with in-process stand-ins: the split, the choice by
cross-validated accuracy, one simulation per prompt and goals, and what the optimiser sees."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from chatjudge.user_realism.sample import GoalSample, UserSide
from chatjudge.user_realism.tune_search import TooFewGoals, search, tuning_split


def sample(goal: str, picked: tuple[bool, ...], first: str = "hi", reason: str = "r") -> GoalSample:
    side = UserSide((first,), True, (True,), (False,))
    return GoalSample(goal, UserSide((f"real {goal}",), True, (False,), (False,)), (side,),
                      picked, (reason,) * len(picked))  # fmt: skip


def test_the_split_holds_out_40_percent_and_at_least_50_goals() -> None:
    ids = [f"g{i}" for i in range(125)]
    tuning, held = tuning_split(ids, seed=3)
    assert (len(tuning), len(held)) == (75, 50) and set(tuning) | set(held) == set(ids)
    assert tuning == [i for i in ids if i in set(tuning)]  # in the input's order
    assert tuning_split(ids, seed=3) == (tuning, held) and tuning_split(ids, 4) != (tuning, held)
    with pytest.raises(TooFewGoals, match="give 49 held-out goal.*at least 124") as caught:
        tuning_split(ids[:123], seed=0)
    assert caught.value.exit_code == 3


def test_the_candidate_nearest_chance_is_chosen_and_rebuilt_from_every_tuning_goal() -> None:
    tuning = {f"t{i}": sample(f"t{i}", (True, True), reason=f"reason-t{i}") for i in range(9)}
    held = ["h0", "h1"]
    calls: list[tuple[str, tuple[str, ...], bool]] = []
    written: list[str] = []

    def simulating(text: str, name: str, ids: Sequence[str], marked: bool):
        calls.append((name, tuple(ids), marked))
        # rules alone make the judge unsure; examples alone change nothing
        picked = (
            (True, False) if "Rules:" in text and "First messages" not in text else (True, True)
        )
        return {i: sample(i, picked) for i in ids}

    def write_rules(prompt: str, name: str) -> str:
        written.append(prompt)
        return json.dumps({"rules": ["Do not thank."]})

    found = search("Want {question}.", tuning, held, simulating, write_rules, seed=0)
    assert found.selection == {"rules": 0.5, "examples": 1.0, "both": 1.0, "original": 1.0}
    assert found.chosen == "rules" and found.rules == ["Do not thank."] and found.examples == []
    assert (
        found.instructions.startswith("Want {question}.")
        and "1. Do not thank." in found.instructions
    )
    assert calls[-1] == ("held-out", ("h0", "h1"), True)
    assert sorted(n for n, _, _ in calls[:-1]) == sorted(
        f"fold-{k}-{c}" for k in (1, 2, 3) for c in ("rules", "examples", "both")
    )
    assert all(not marked for _, _, marked in calls[:-1])
    assert len(written) == 4  # a prompt a fold, and the final one
    # each fold's guidance comes from the other folds: its own goals' reasons are not shown
    for (name, ids, _), prompt in zip(calls[0:9:3], written, strict=False):
        assert name.endswith("rules") and all(f"reason-{i} " not in prompt for i in ids)


def test_no_rules_written_makes_rules_the_original_which_is_never_simulated_again() -> None:
    tuning = {f"t{i}": sample(f"t{i}", (True, True)) for i in range(6)}
    names: list[str] = []

    def simulating(text: str, name: str, ids: Sequence[str], marked: bool):
        names.append(name)
        return {i: sample(i, (True, True)) for i in ids}

    found = search("Want {question}.", tuning, ["h"], simulating, lambda p, n: "{}", seed=1)
    assert found.no_rules == ["fold-1", "fold-2", "fold-3", "final"]
    assert not any(n.endswith("-rules") for n in names) and found.selection["rules"] == 1.0
    assert not any(n.endswith("-both") for n in names)  # both is examples: simulated once
