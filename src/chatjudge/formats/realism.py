"""`realism.json`: simulated users measured against real ones (`chatjudge realism`), paired
by goal: each behaviour, the discriminator and each protocol metric, with its interval, its
exact permutation p-value and whether it is claimed under Holm's correction."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from chatjudge.formats.base import Record, Versioned


class Figure(Record):
    """A value and its 95% interval; `ci95` is null where no interval is valid at this size
    (`too_few` says why, written only then)."""

    value: float
    ci95: list[float] | None
    too_few: str | None = None


class Measure(Record):
    """One measure real against simulated: `difference` is simulated minus real (the mean
    over goals of each goal's simulated mean minus its real value, or for uniformity the
    difference of the two means of pairwise similarities)."""

    real: Figure
    simulated: Figure
    difference: Figure
    p: float  # the exact within-goal permutation test, two-sided
    p_holm: float  # Holm-adjusted across every measure of the file
    claimed: bool  # p_holm <= level
    n_goals: int  # goals where the measure has a value, real and simulated


class ReasonCount(Record):
    reason: str  # a group of reasons equal once case, spacing and end punctuation are set aside
    count: int


class Discriminator(Record):
    """The judge picking the real user from a (real, simulated) pair, both orders; accuracy
    0.5 is a judge that cannot tell."""

    accuracy: Figure  # the mean over goals of each goal's share of verdicts that picked real
    p: float  # the within-goal label swap (a sign-flip test), two-sided
    p_holm: float
    claimed: bool
    n_goals: int
    n_verdicts: int
    reasons: list[ReasonCount]  # commonest first


class Realism(Versioned):
    """`realism.json`. Measures without data (no marks, no protocol) are absent, not zero."""

    WHAT = "realism.json"

    format: int = 1
    n_goals: int  # goals with a real conversation and at least one simulated one
    k: int  # the most simulated conversations a goal has (failed simulations left out)
    level: float  # the family-wise error of the claims
    resamples: int  # relabellings drawn per test (all of them, when fewer: an exact p)
    seed: int
    behaviours: dict[str, Measure]
    discriminator: Discriminator | None = None
    metric_gaps: dict[str, Measure] = Field(default_factory=dict)
    # Filled in by the command.
    goals: int | None = None  # real conversations read
    samples: int | None = None  # `--samples`
    cut_share: float | None = None  # share of simulated conversations cut by `--max-turns`
    failed: dict[str, int] | None = None  # failed steps by kind (goals, simulations, marks...)
    options: dict[str, Any] | None = None
