"""`realism.json`: simulated users measured against real ones (`chatjudge realism`), paired
by goal: each behaviour, the discriminator and each protocol metric, with its interval, its
exact permutation p-value and whether it is claimed under Holm's correction."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from chatjudge.formats.shared import Record, Versioned


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


# `chatjudge realism --tune`: the `tuning` key.

TunedCandidate = Literal["rules", "examples", "both"]


class Widened(Record):
    """A behaviour's gap to the real users on the held-out goals, with the original and
    with the tuned prompt (simulated minus real, means over goals), and the one-sided
    permutation test of its widening, Holm-corrected across behaviours."""

    before: float
    after: float
    p: float
    p_holm: float
    widened: bool  # p_holm <= 0.05
    n_goals: int


class TunedHeldOut(Record):
    """The held-out goals: the discriminator's accuracy with the original user prompt
    (`before`) and the tuned one (`after`), and their paired difference (after minus
    before, per goal), each with its 95% interval."""

    n: int  # goals held out
    ids: list[str]
    before: Figure
    after: Figure
    difference: Figure
    n_goals: int  # held-out goals with a verdict on both sides
    behaviours: dict[str, Widened] = Field(default_factory=dict)


class Tuning(Record):
    gain_shown: bool  # difference's interval below 0, and no behaviour widened
    reason: str
    overshoot: bool  # the tuned accuracy's interval lies below 0.5: too real to be real
    optimizer: str
    seed: int
    held_out_share: float
    tuning_ids: list[str]
    candidates: dict[str, float]  # cross-validated accuracy on the tuning goals; `original` too
    chosen: TunedCandidate
    rules: list[str]
    examples: list[str]  # real first messages of tuning goals shown as examples
    held_out: TunedHeldOut
    optimizer_calls: int  # prompts the optimiser answered (from its store or not)


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
    # `--tune` only: the tuning and its held-out proof; null otherwise.
    tuning: Tuning | None = None
