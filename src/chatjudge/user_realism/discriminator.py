"""The discriminator's figures: its accuracy, paired by goal, and its reasons grouped.

Each goal's pair (real, first simulated) is shown in both orders, so a judge that favours a
position scores 0.5 on the goal, not a hit. A goal's accuracy is its share of verdicts that
picked the real user; swapping which conversation of the pair is labelled real turns it
into 1 - accuracy, so under the null (the judge cannot tell) accuracy - 0.5 is symmetric
about 0 goal by goal: the sign-flip test of `permutation.sign_flip_p`."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

from chatjudge.formats.realism import ReasonCount
from chatjudge.user_realism.sample import GoalSample

TOP_REASONS = 20
_SPACE = re.compile(r"\s+")


def goal_accuracies(goals: Sequence[GoalSample]) -> np.ndarray:
    """Per goal with a verdict, the share of its verdicts that picked the real user."""
    return np.array(
        [sum(g.discriminations) / len(g.discriminations) for g in goals if g.discriminations],
        dtype=float,
    )


def reason_counts(goals: Sequence[GoalSample], top: int = TOP_REASONS) -> list[ReasonCount]:
    """The judge's reasons grouped when equal once case, spacing and end punctuation are set
    aside, commonest first (ties in first-seen order); each group shown as first written."""
    counts: Counter[str] = Counter()
    shown: dict[str, str] = {}
    for goal in goals:
        for reason in goal.reasons:
            key = _SPACE.sub(" ", reason).strip().strip(".!;:,").strip().casefold()
            if key:
                counts[key] += 1
                shown.setdefault(key, _SPACE.sub(" ", reason).strip())
    return [ReasonCount(reason=shown[k], count=c) for k, c in counts.most_common(top)]
