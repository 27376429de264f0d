"""The honest part of `chatjudge realism --tune`: the split, the search on the tuning goals,
and the held-out measurement, given a way to simulate goals and a way to have rules written.

The goals are split with the seed (`align.search.split`): 60% to tune, 40% held out, at
least 50 held out. Nothing below reads a held-out goal before the final measurement: the
optimiser is shown the tuning goals' behaviour gaps and reasons only (`tune_guidance`),
every example is a tuning goal's real first message, and the candidates are compared by
the discriminator's accuracy with cross-validation within the tuning goals (each fold
simulated with guidance built from the other folds). The candidate whose accuracy lies
nearest 0.5 (a judge that cannot tell) is rebuilt from all the tuning goals, and the
held-out goals are simulated with it; their simulations with the original instructions are
the command's own.

`Simulating` and `RuleWriter` are what the command passes in (`tune_calls`);
`bench/realism_tune_calibration.py` passes scripted stand-ins, so the calibration runs
exactly this code.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from chatjudge.analysis.align.guidance import CANDIDATES, Candidate, read_rules
from chatjudge.analysis.align.search import folds, split
from chatjudge.errors import ChatJudgeError, ExitCode
from chatjudge.models import Model
from chatjudge.user_realism.sample import GoalSample
from chatjudge.user_realism.tune_guidance import (
    MAX_EXAMPLES,
    first_messages,
    optimizer_prompt,
    tuned,
)

HELD_OUT = 0.4
MIN_HELD_OUT = 50
_CHANCE = 0.5

# (instructions, a name for this simulation, goal ids, marked: every mark, not only the
# discriminator's) -> each goal's sample, for those that have one
Simulating = Callable[[str, str, Sequence[str], bool], Mapping[str, GoalSample]]
# (the optimiser's prompt, a name for the call) -> its reply text
RuleWriter = Callable[[str, str], str]


class TooFewGoals(ChatJudgeError):
    """Fewer than `MIN_HELD_OUT` held-out goals: no gain could be shown (exit 3), found
    before anything is sent."""

    exit_code = ExitCode.INCONCLUSIVE


def tuning_split(ids: Sequence[str], seed: int) -> tuple[list[str], list[str]]:
    """(tuning, held out), both in `ids`' order; refused with the number of conversations
    needed when fewer than 50 goals would be held out."""
    n_held = int(round(HELD_OUT * len(ids)))
    if n_held < MIN_HELD_OUT:
        needed = math.ceil((MIN_HELD_OUT - 0.5) / HELD_OUT)
        raise TooFewGoals(
            f"--tune: {len(ids)} real conversation(s) give {n_held} held-out goal(s); at "
            f"least {MIN_HELD_OUT} are needed to show a gain on conversations the tuning "
            f"never saw: read at least {needed} conversations"
        )
    return split(ids, HELD_OUT, seed)


@dataclass(frozen=True)
class TuneSetUp:
    """`--tune`, set up before anything is sent: the optimiser, the seed and the split of
    the real conversations' ids."""

    optimizer: Model
    seed: int
    tuning: list[str]
    held: list[str]


@dataclass
class TuneSearch:
    """What the search found: each candidate's cross-validated accuracy on the tuning goals
    (and the original's), the chosen one rebuilt from every tuning goal, and the held-out
    goals' samples with it."""

    selection: dict[str, float]
    chosen: Candidate
    rules: list[str]
    examples: list[str]
    instructions: str  # the tuned instructions (the original where nothing was added)
    after: Mapping[str, GoalSample]  # the held-out goals simulated with them
    prompts: list[str] = field(default_factory=list)  # every optimiser prompt, in order
    no_rules: list[str] = field(default_factory=list)  # the optimiser calls that wrote none


def search(
    instructions: str,
    tuning: Mapping[str, GoalSample],
    held: Sequence[str],
    simulating: Simulating,
    write_rules: RuleWriter,
    seed: int,
) -> TuneSearch:
    """Choose a candidate on `tuning` (its goals' samples with the original instructions)
    by cross-validation, rebuild it from all of them, and simulate `held` with it. The
    instructions are simulated once on the same goals; the original's are `tuning`'s."""
    prompts: list[str] = []
    no_rules: list[str] = []
    simulated: dict[tuple[str, tuple[str, ...], bool], Mapping[str, GoalSample]] = {}

    def once(text: str, name: str, ids: Sequence[str], marked: bool) -> Mapping[str, GoalSample]:
        if text == instructions and not marked:
            return {i: tuning[i] for i in ids if i in tuning}
        key = (text, tuple(ids), marked)
        if key not in simulated:
            simulated[key] = simulating(text, name, ids, marked)
        return simulated[key]

    ids = list(tuning)
    accuracies: dict[str, list[float]] = {c: [] for c in CANDIDATES}
    for k, fold in enumerate(folds(ids, seed)):
        train = [tuning[i] for i in ids if i not in set(fold)]
        rules, examples = _guidance(instructions, train, write_rules, f"fold-{k + 1}",
                                    seed, prompts, no_rules)  # fmt: skip
        for candidate in CANDIDATES:
            text = tuned(instructions, candidate, rules, examples)
            found = once(text, f"fold-{k + 1}-{candidate}", fold, False)
            accuracies[candidate] += _accuracies([found[i] for i in fold if i in found])
    selection = {c: float(np.mean(v)) if v else math.nan for c, v in accuracies.items()}
    original = _accuracies(list(tuning.values()))
    selection["original"] = float(np.mean(original)) if original else math.nan
    chosen = min(CANDIDATES, key=lambda c: _distance(selection[c]))
    rules, examples = _guidance(instructions, list(tuning.values()), write_rules, "final",
                                seed, prompts, no_rules)  # fmt: skip
    text = tuned(instructions, chosen, rules, examples)
    after = simulating(text, "held-out", held, True)
    return TuneSearch(selection, chosen, rules if chosen != "examples" else [],
                      examples if chosen != "rules" else [], text, after, prompts,
                      no_rules)  # fmt: skip


def _guidance(
    instructions: str,
    train: Sequence[GoalSample],
    write_rules: RuleWriter,
    name: str,
    seed: int,
    prompts: list[str],
    no_rules: list[str],
) -> tuple[list[str], list[str]]:
    """Rules written from `train`'s gaps and reasons, and examples drawn from its real
    first messages; `name` joins `no_rules` when the optimiser wrote none."""
    prompt = optimizer_prompt(instructions, train)
    prompts.append(prompt)
    rules = read_rules(write_rules(prompt, name))
    if not rules:
        no_rules.append(name)
    pool = first_messages(train)
    picked = np.random.default_rng([seed, 3, len(prompts)]).permutation(len(pool))
    return rules, [pool[j] for j in sorted(picked[:MAX_EXAMPLES])]


def _accuracies(goals: Sequence[GoalSample]) -> list[float]:
    return [sum(g.discriminations) / len(g.discriminations) for g in goals if g.discriminations]


def _distance(accuracy: float) -> float:
    return math.inf if math.isnan(accuracy) else abs(accuracy - _CHANCE)
