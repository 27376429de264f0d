"""What `chatjudge history` found: each run's metrics and each step between two runs, as the
page, the terminal table and the Markdown summary show them."""

from __future__ import annotations

from chatjudge.formats.analyses import GateDifference, GateSlice
from chatjudge.formats.shared import Metric, Record


class HistoryRun(Record):
    """One release: its run, its metrics as its summary states them, and how it was judged."""

    name: str
    path: str
    created: str
    judges: list[str]
    metrics: dict[str, Metric]
    evaluator: str | None = None  # the evaluator fingerprint, 12 characters; None: older run
    judge_check: float | None = None  # the judge check's agreement with its reference labels


class HistoryStep(Record):
    """One metric's change from one run to the next (`after` − `before`)."""

    before: str
    after: str
    metric: str
    difference: GateDifference | None  # None: a run has no value or interval for it
    n_pairs: int  # rows judged ok in both runs; 0 for an unpaired step
    paired: bool  # the gate's paired difference; else the runs' intervals combined
    judge_changed: str | None  # what differs in how the two runs were judged; None: alike
    decided: bool  # the step is decided (the latest, or every one with --all-steps)
    regression: bool  # decided, and its interval lies below −margin (Holm with all steps)
    # A paired step's one-sided p of "fell by no more than the margin": `--all-steps`' order.
    p: float | None = None
    slices: list[GateSlice] = []  # per --by value, as the gate shows them; never decided


class History(Record):
    protocol: str
    metrics: list[str]
    margin: float
    all_steps: bool
    runs: list[HistoryRun]
    steps: list[HistoryStep]

    @property
    def regressions(self) -> list[HistoryStep]:
        return [s for s in self.steps if s.regression]
