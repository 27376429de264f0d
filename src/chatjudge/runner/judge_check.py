"""`run --judge-check FILE`: the run's judges on a small fixed check set, beside the data.

The check is a run of its own in `<run>/judge_check/` (its results, summary and store), so
its calls are keyed to the run: resuming the run reuses them, a new run asks the judge
again. Each item is asked `--judge-check-samples` times (the judge's own noise); the
summary's `judge_check` holds its agreement with the reference labels, its within-run
disagreement, the check file's hash and what its calls cost, apart from the data's.

The reference labels are `--human`'s format: an `id` and a `label` (or `score`, `human`)
column for the protocol's first verdict component, or columns named after components.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from chatjudge.calls.session import Budget
from chatjudge.data import iter_items
from chatjudge.data.shard_rows import fingerprint
from chatjudge.errors import UsageError
from chatjudge.formats.provenance import JudgeCheck
from chatjudge.formats.results import ResultRecord, read_results
from chatjudge.models import Model
from chatjudge.options import RunConfig
from chatjudge.preflight import Setup
from chatjudge.protocols.spec import Protocol
from chatjudge.rundir import RESULTS, RUN_INFO, SUMMARY
from chatjudge.runner.engine import Engine
from chatjudge.stats.betting import betting_interval
from chatjudge.stats.judge_change import disagreement
from chatjudge.stats.label_agreement import normalize_label

CHECK_DIR = "judge_check"  # in the run directory
LABEL_COLUMNS = ("label", "score", "human")  # `--human`'s names of one rating column


@dataclass
class CheckRun:
    """The check, planned and validated before anything is sent; run by the engine first."""

    engine: Engine
    file: Path
    sha256: str
    labels: dict[str, dict[str, Any]]  # item id -> component -> reference label

    async def __call__(self, budget: Budget | None) -> JudgeCheck:
        outcome = await self.engine.run(budget=budget)
        verdicts = item_verdicts(read_results(self.engine.out_dir / RESULTS))
        return summarize(self, verdicts, outcome.cost.total_usd)


def plan_check(
    path: Path, protocol: Protocol, models: list[Model], config: RunConfig, run_dir: Path
) -> CheckRun:
    """The check of `path` for a run in `run_dir`: its rows validated and its reference
    labels read (a bad row or label is named, exit 2, before anything is sent)."""
    run = config.run.model_copy(
        update={"samples": config.run.judge_check_samples, "limit": None, "shard": None,
                "skip_invalid": False, "judge_check": None}
    )  # fmt: skip
    setup = Setup("run", path, None, protocol.fields, config.model_copy(update={"run": run}))
    out_dir = run_dir / CHECK_DIR
    setup.prepare(out_dir, tuple(out_dir / n for n in (RESULTS, SUMMARY, RUN_INFO)))
    engine = Engine(setup.source, protocol, models, setup.config, out_dir,
                    validation=setup.validation)  # fmt: skip
    labels = reference_labels(setup, protocol, path)
    return CheckRun(engine, path, fingerprint(setup.source), labels)


def components(protocol: Protocol) -> list[str]:
    """A verdict's components, as results name them: the choice, or each score."""
    if protocol.choice is not None:
        return [protocol.choice.name]
    return [s.name for s in protocol.scores]


def reference_labels(setup: Setup, protocol: Protocol, path: Path) -> dict[str, dict[str, Any]]:
    """Each check item's reference label per component, normalised as `agree` reads them."""
    names = components(protocol)
    labels: dict[str, dict[str, Any]] = {}
    for item in iter_items(setup.source, (), read_tools=False):
        named = {c: item.data[c] for c in names if item.data.get(c) is not None}
        if not named:
            column = next((c for c in LABEL_COLUMNS if item.data.get(c) is not None), None)
            if column is None:
                raise UsageError(
                    f"--judge-check {path}: row {item.row}, field 'label': no reference label "
                    f"(a {'/'.join(LABEL_COLUMNS)} column, or one named after "
                    f"{', '.join(names)})"
                )
            named = {names[0]: item.data[column]}
        try:
            labels[item.id] = {c: normalize_label(v) for c, v in named.items()}
        except ValueError as exc:
            raise UsageError(f"--judge-check {path}: row {item.row}: {exc}") from None
    return labels


def item_verdicts(records: Iterable[ResultRecord]) -> dict[str, dict[str, list[Hashable]]]:
    """Per item, per component: the verdicts of its successful calls (samples × orders)."""
    found: dict[str, dict[str, list[Hashable]]] = {}
    for record in records:
        per = found.setdefault(record.id, {})
        for call in record.calls:
            if call.status != "ok":
                continue
            for name, value in call.scores.items():
                per.setdefault(name, []).append(_label(value))
    return found


def summarize(
    check: CheckRun, verdicts: dict[str, dict[str, list[Hashable]]], cost: float | None
) -> JudgeCheck:
    """The check's agreement with the reference labels (per item: the share of its verdicts
    equal to them; then the mean over items, with a betting interval), and the judge's own
    disagreement within this run."""
    shares, spread = [], []
    for item, reference in check.labels.items():
        got = verdicts.get(item, {})
        matched = [v == _label(ref) for c, ref in reference.items() for v in got.get(c, [])]
        if matched:
            shares.append(sum(matched) / len(matched))
        spread += [v for c, v in got.items() if c in reference]
    agreement = float(np.mean(shares)) if shares else None
    ci = list(betting_interval(np.array(shares), 0.0, 1.0)) if shares else None
    return JudgeCheck(
        file=check.file.name,
        file_sha256=check.sha256,
        n=len(shares),
        samples=check.engine.config.run.samples,
        agreement=agreement,
        ci95=ci,
        disagreement=disagreement(spread),
        cost_usd=cost,
    )


def _label(value: Any) -> Hashable:
    """A verdict as compared: a choice's label, or a score as a float."""
    try:
        label = normalize_label(value)
    except ValueError:
        return str(value)
    return label if isinstance(label, str) else float(label)
