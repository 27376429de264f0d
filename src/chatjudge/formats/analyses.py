"""The files the analyses write: `compare.json` (`chatjudge compare`), `gate.json`
(`chatjudge gate`) and `agreement.json` (`chatjudge agree`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from chatjudge.formats.provenance import Evaluator, GateJudgeCheck, Served
from chatjudge.formats.shared import Metric, Record, Versioned


class CalibratedMetric(Record):
    """A human-calibrated (PPI++) metric: what the humans would say over all judged rows."""

    value: float
    ci95: list[float] | None  # None only with `too_few`
    n_labels: int
    effective_labels: float  # human labels alone that would give an interval this narrow
    lam: float
    judge_only: Metric
    human_only: Metric
    # Why `ci95` is null: a small labelled sample of a metric with no known range.
    too_few: str | None = None


class Rating(Record):
    model: str
    rating: float
    ci95: list[float] | None
    n_battles: int
    # Why `ci95` is null: fewer than 30 battles, or all won or all lost (no valid interval).
    too_few: str | None = None


class Comparison(Versioned):
    """`compare.json`: Bradley-Terry ratings of several runs on the same items."""

    WHAT = "comparison"

    format: int = 1
    protocol: str
    kind: Literal["pointwise", "pairwise"]
    score: str | None
    baseline: str | None
    runs: dict[str, str]
    n_items: int
    n_battles: int
    models: list[str]
    ratings: list[Rating]
    win_rates: list[list[float | None]]
    outcomes: dict[str, dict[str, int]]
    # `--control length|style`: ratings with style covariates, next to the raw ones.
    control: Literal["length", "style"] | None = None
    controlled_ratings: list[Rating] | None = None
    style_coefficients: dict[str, float] | None = None
    calibrated: dict[str, dict[str, Any]] | None = None  # `--human`: per run, CalibratedMetric
    # Per run, as in `runs`: its evaluator fingerprint (null: a run older than it).
    evaluators: dict[str, str | None] | None = None


class GateDifference(Record):
    value: float
    ci95: list[float]  # two-sided 95% (slices: the Bonferroni-adjusted level in `level`)


class GateSlice(Record):
    """One value of the `--by` column: its difference, worst first in `Gate.slices`."""

    value: str
    n_pairs: int
    difference: GateDifference
    level: float  # 1 - 0.05 / number of slices
    below_margin: bool  # the adjusted interval lies wholly below -margin
    counts: bool  # 30 rows or more: may fail the gate with --slices-must-not-regress
    method: str | None = None  # as Gate.method; None when the slice has one unit (no interval)


class GateSmallSample(Record):
    """A small sample (fewer than 30 units that differ, or fewer than 3 distinct unit
    differences) and the rule valid at every n that guarded the interval decided on."""

    rule: Literal["sign-test", "betting", "unguarded"]
    why: str  # e.g. "3 units (fewer than 30)"
    sign_p: list[float] | None = None  # sign-test: exact one-sided p for Δ > 0, for Δ < 0
    betting_ci: list[float] | None = None  # betting: its interval, hulled with the method's
    difference_range: list[float] | None = None  # [L, U]: what one row's difference can be


class GateNoise(Record):
    """How much of the interval's width is judge noise (samples, orders, judges per row)."""

    judge_share: float
    width: float
    width_double_samples: float  # at equal call cost: twice the samples per row...
    width_double_rows: float  # ...or twice the rows
    width_floor: float  # what more samples alone can reach
    samples_per_row: float


class GateLook(Record):
    """An earlier gate of the same runs and metric, on fewer rows."""

    n_pairs: int
    outcome: str
    difference: GateDifference
    created: str


class GateSequential(Record):
    """`gate --sequential`: how far judging went before the outcome was decided."""

    batch: int
    batches: int
    seed: int
    rows_total: int
    rows_judged: int
    calls: int  # judge calls the judged rows needed
    calls_saved: int  # calls the rows left unjudged would have needed
    stopped: Literal["decided", "exhausted", "budget"]  # budget: --max-cost-usd, exit 4
    max_cost_usd: float | None = None  # --max-cost-usd
    cost_usd: float | None = None  # what this gate's judging cost (None: a price unknown)


class Gate(Versioned):
    """`gate.json`: the outcome of `chatjudge gate` (the ship decision between two versions)
    and everything behind it."""

    WHAT = "gate"

    format: int = 1
    outcome: Literal["pass", "fail", "inconclusive"]
    reason: str
    metric: str
    difference: GateDifference
    se: float
    method: str
    mde80: float
    rows_to_decide: int | None
    margin: float
    require: Literal["not-worse", "better"]
    n_pairs: int
    n_units: int
    counts: dict[str, dict[str, int]]  # per run: rows, failed, no_value (absent before), unpaired
    by: str | None
    cluster: str | None
    slices: list[GateSlice]
    noise: GateNoise | None
    mismatches: list[str]
    looks: list[GateLook]
    sequential: GateSequential | None = None
    small_sample: GateSmallSample | None = None  # set when the rule for few units applied
    # the figure decided on when not `metric`: a ratio on a small sample, its macro figure
    decided_on: str | None = None
    # Corrections for the judge's biases, named as such (one pairwise run: style control;
    # --human: the candidate run's metrics as the humans would rate them).
    control: Literal["length", "style"] | None = None  # the difference is this controlled rate's
    raw_difference: GateDifference | None = None  # the raw difference, when `control` is set
    corrected: dict[str, Metric] = Field(default_factory=dict)
    style_control: dict[str, Any] | None = None  # coefficients and the plain sentence
    calibrated: dict[str, CalibratedMetric] = Field(default_factory=dict)
    runs: dict[str, str]  # role (baseline, candidate, run) -> run directory
    created: str
    chatjudge_version: str
    # Per role, as in `runs`: the run's evaluator (null: a run older than the fingerprint),
    # and what the providers reported serving its judges with (absent where unknown).
    evaluators: dict[str, Evaluator | None] = Field(default_factory=dict)
    served: dict[str, dict[str, Served]] = Field(default_factory=dict)
    # Both runs judged the same check file: did the judge change between them?
    judge_check: GateJudgeCheck | None = None


class Agreement(Versioned):
    """`agreement.json`: a judge against human raters (`chatjudge agree`), and the run's
    metrics calibrated by the human labels (`calibrated`)."""

    WHAT = "agreement"

    format: int = 1
    run: str
    human: str
    column: str
    protocol: str
    judge: str
    n_items: int
    with_ties: dict[str, Any] | None = None  # pairwise
    without_ties: dict[str, Any] | None = None
    score: str | None = None  # pointwise
    correlation: dict[str, Any] | None = None
    krippendorff_alpha: dict[str, Any] | None = None
    calibrated: dict[str, CalibratedMetric] = Field(default_factory=dict)
    # Columns used, labelled rows the judge did not judge, warnings about the sample.
    calibration: dict[str, Any] | None = None


def counts_text(counts: dict[str, dict[str, int]]) -> str:
    """Unpaired and failed rows per run (and rows the metric has no value for): shown
    with every outcome, never dropped silently."""
    parts = []
    for role, c in counts.items():
        none = f", {c['no_value']} without a value" if c.get("no_value") else ""
        parts.append(
            f"{role}: {c.get('rows', 0)} rows, {c.get('failed', 0)} failed{none}, "
            f"{c.get('unpaired', 0)} unpaired"
        )
    return "; ".join(parts)
