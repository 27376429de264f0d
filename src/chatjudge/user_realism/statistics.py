"""Real users against simulated ones, paired by goal: every measure's figures, its exact
permutation p-value, and the claims under Holm's correction across all of them (DESIGN §16).

Reads only `GoalSample`s, so the command (goals, simulations, judge marks) and these
statistics are tested apart. A measure with no data (no marks, no protocol, no verdict) is
absent from the result, never zero."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from chatjudge.formats.realism import Discriminator, Figure, Measure, Realism
from chatjudge.stats.intervals import SHARE, UNBOUNDED, Range
from chatjudge.user_realism.behaviour import BEHAVIOURS, behaviour_matrix, metric_matrix
from chatjudge.user_realism.discriminator import goal_accuracies, reason_counts
from chatjudge.user_realism.figures import jackknife_figure, mean_figure
from chatjudge.user_realism.permutation import (
    RESAMPLES,
    differences,
    holm,
    paired_rows,
    sign_flip_p,
    within_goal_p,
)
from chatjudge.user_realism.sample import GoalSample
from chatjudge.user_realism.uniformity import first_tokens, similarities

UNIFORMITY = "uniformity"
_CHANCE = 0.5


@dataclass(frozen=True, slots=True)
class _Tested:
    """A measure's figures and raw p-value, before Holm's correction across measures."""

    figures: tuple[Figure, ...]
    p: float
    n_goals: int


def compare(
    goals: Sequence[GoalSample],
    *,
    seed: int,
    level: float = 0.05,
    resamples: int = RESAMPLES,
    metric_ranges: Mapping[str, Range] | None = None,
) -> Realism:
    """`realism.json`'s statistics for these goals (those without a simulated conversation
    left out). `metric_ranges`: what is known of each protocol metric's range (its interval
    on a small sample); a metric not in it is taken as unbounded."""
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), not {level}")
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, not {resamples}")
    paired = [g for g in goals if g.simulated]
    behaviours = _per_conversation(
        behaviour_matrix(paired), list(BEHAVIOURS), BEHAVIOURS, resamples, seed
    )
    if (uniformity := _uniformity(paired, resamples, seed)) is not None:
        behaviours[UNIFORMITY] = uniformity
    names, values = metric_matrix(paired)
    gaps = _per_conversation(values, names, metric_ranges or {}, resamples, seed)
    accuracies = goal_accuracies(paired)
    judged = _discriminated(accuracies, resamples, seed) if len(accuracies) else None

    # Holm across the whole family: every behaviour, every metric gap, the discriminator.
    family = [*behaviours.values(), *gaps.values(), *([judged] if judged else [])]
    adjusted = dict(zip(map(id, family), holm([t.p for t in family]), strict=True))

    def measure(t: _Tested) -> Measure:
        real, simulated, difference = t.figures
        p_holm = adjusted[id(t)]
        return Measure(
            real=real,
            simulated=simulated,
            difference=difference,
            p=t.p,
            p_holm=p_holm,
            claimed=p_holm <= level,
            n_goals=t.n_goals,
        )

    result = Realism(
        n_goals=len(paired),
        k=max((len(g.simulated) for g in paired), default=0),
        level=level,
        resamples=resamples,
        seed=seed,
        behaviours={name: measure(t) for name, t in behaviours.items()},
        metric_gaps={name: measure(t) for name, t in gaps.items()},
    )
    if judged is not None:  # set only then: absent, not null, from `write_json(only_set=True)`
        p_holm = adjusted[id(judged)]
        result.discriminator = Discriminator(
            accuracy=judged.figures[0],
            p=judged.p,
            p_holm=p_holm,
            claimed=p_holm <= level,
            n_goals=judged.n_goals,
            n_verdicts=sum(len(g.discriminations) for g in paired),
            reasons=reason_counts(paired),
        )
    return result


def _per_conversation(
    matrix: np.ndarray,
    names: list[str],
    ranges: Mapping[str, Range],
    resamples: int,
    seed: int,
) -> dict[str, _Tested]:
    """Each measure with a value on both sides of at least one goal: real, simulated (each
    goal's mean over its simulated conversations) and their paired difference. Measures
    with the same goals and counts are tested on the same drawn labellings."""
    cut = {}
    for k, name in enumerate(names):
        rows, counts, kept = paired_rows(matrix[:, :, k])
        if len(counts):  # else no data: absent, not zero
            cut[name] = (rows, counts, kept)
    groups: dict[bytes, list[str]] = {}
    for name, (_, counts, kept) in cut.items():
        groups.setdefault(kept.tobytes() + counts.tobytes(), []).append(name)
    p: dict[str, float] = {}
    for members in groups.values():
        rows = np.stack([cut[name][0] for name in members], axis=2)
        found = within_goal_p(rows, cut[members[0]][1], resamples, seed)
        p.update(zip(members, map(float, found), strict=True))
    tested = {}
    for name, (rows, counts, _) in cut.items():
        known = ranges.get(name, UNBOUNDED)
        diff = differences(rows, counts)
        figures = (
            mean_figure(rows[:, 0], known),
            mean_figure(rows[:, 0] + diff, known),
            mean_figure(diff, _difference_range(known)),
        )
        tested[name] = _Tested(figures, p[name], len(counts))
    return tested


def _uniformity(goals: Sequence[GoalSample], resamples: int, seed: int) -> _Tested | None:
    """Mean pairwise similarity among the real users and among the first simulated ones;
    None below 3 goals (leaving one out must leave a pair)."""
    if len(goals) < 3:
        return None
    users = [first_tokens(g.real.user_messages) for g in goals]
    users += [first_tokens(g.simulated[0].user_messages) for g in goals]
    sums = similarities(users)
    real, simulated = sums.means()
    left_real, left_simulated = sums.leave_one_out()
    figures = (
        jackknife_figure(real, left_real, SHARE),
        jackknife_figure(simulated, left_simulated, SHARE),
        jackknife_figure(simulated - real, left_simulated - left_real, Range(-1.0, 1.0)),
    )
    return _Tested(figures, sign_flip_p(sums.swap_values(), resamples, seed), len(goals))


def _discriminated(accuracies: np.ndarray, resamples: int, seed: int) -> _Tested:
    figure = mean_figure(accuracies, SHARE)
    return _Tested((figure,), sign_flip_p(accuracies - _CHANCE, resamples, seed), len(accuracies))


def _difference_range(known: Range) -> Range:
    """What a difference of two means of values in `known` can be."""
    if not known.bounded:
        return UNBOUNDED
    assert known.lower is not None and known.upper is not None
    width = known.upper - known.lower
    return Range(-width, width)
