"""The Python API's edge: `chatjudge.evaluate()` and `estimate()` over the async run
engine, `chatjudge.gate()`, `chatjudge.align()` and `chatjudge.export()`; the report is
written here (and by the CLI), not below."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from chatjudge.calls import run_sync as sync
from chatjudge.errors import BudgetReachedError, UsageError
from chatjudge.formats.summary import Summary
from chatjudge.models import ModelSpec
from chatjudge.options import RunConfig
from chatjudge.protocols import Protocol
from chatjudge.rundir import REPORT, RunDir
from chatjudge.runner import Engine, build_engine

if TYPE_CHECKING:
    from chatjudge.calls.estimate import CostEstimate
    from chatjudge.formats.alignment import Alignment
    from chatjudge.formats.analyses import Gate
    from chatjudge.otel import Exported
    from chatjudge.runner.engine import RunOutcome
    from chatjudge.runner.fold import OnItem


@dataclass
class EvalResult:
    """What a run produced: the summary, one table row per item, and where the files are."""

    summary: dict[str, Any]
    out_dir: Path

    @property
    def table(self) -> Any:
        """A pandas DataFrame, one row per item, scores as columns (read from results.jsonl)."""
        import pandas as pd

        rows = [
            {
                "id": r.id,
                "index": r.index,
                "status": r.status,
                **r.scores,
                "consistent": r.consistent,
                "agreement": r.agreement,
                "error": r.error,
                "input_tokens": r.usage["input_tokens"],
                "output_tokens": r.usage["output_tokens"],
            }
            for r in RunDir(self.out_dir).results()
        ]
        return pd.DataFrame(rows).sort_values("index").reset_index(drop=True)

    @property
    def report_path(self) -> Path:
        return self.out_dir / REPORT


def evaluate(
    data: Any,
    protocol: str | Path | Protocol = "interactivity-accuracy",
    judge: ModelSpec | Sequence[ModelSpec] | None = None,
    out: str | Path | None = None,
    *,
    column_map: Mapping[str, str] | None = None,
    report: bool = True,
    **options: Any,
) -> EvalResult:
    """Judge `data` with `protocol` and return the summary and per-item table.

    `data`: a .jsonl/.csv/.parquet path, a list of dicts or a pandas DataFrame.
    `judge`: `local` (the default), `openai/MODEL`, ..., a Python callable, or a list of
    them (a panel); none for a deterministic protocol (`tool-trajectory`).
    `options`: the run options, named as in `chatjudge.options` and as the CLI's flags
    (`concurrency`, `samples`, `flip`, `limit`, `no_cache`, `temperature`, `base_url` (one
    URL or several), ...); an unknown option is an error. Re-running with the same
    arguments resumes. With `max_cost_usd`, reaching the budget writes everything and
    raises `BudgetReachedError` (its `summary` says how far the run got).
    """
    config = RunConfig.from_options(options, progress=False)
    engine = build_engine(data, protocol, judge, out, column_map=column_map, config=config)
    outcome = judged(engine) if report else run_sync(engine)
    return EvalResult(outcome.summary, outcome.out_dir)


def judged(engine: Engine) -> RunOutcome:
    """`engine`'s run, its report built as items finish: the page is written wherever the
    run writes its summary (it finished, or it stopped at `--max-cost-usd`: then with the
    summary so far, and `BudgetReachedError` is raised after), and left alone otherwise."""
    from chatjudge.report import ReportBuilder

    builder = ReportBuilder(engine.out_dir)
    try:
        outcome: RunOutcome = run_sync(engine, on_item=builder.add)
    except BudgetReachedError as exc:  # stopped at --max-cost-usd: the page is written too
        builder.finish(Summary.model_validate(exc.summary))  # as summary.json holds it
        raise
    except BaseException:
        builder.close()
        raise
    builder.finish(Summary.model_validate(outcome.summary))
    return outcome


def estimate(
    data: Any,
    protocol: str | Path | Protocol = "interactivity-accuracy",
    judge: ModelSpec | Sequence[ModelSpec] | None = None,
    out: str | Path | None = None,
    *,
    column_map: Mapping[str, str] | None = None,
    **options: Any,
) -> CostEstimate:
    """What `evaluate` with the same arguments would send (after what `out`'s store holds)
    and what it could cost, as `chatjudge run --dry-run` prints it; nothing is sent.
    `chatjudge.produce.build_generation(...).estimate()` and `build_simulation` do the same
    for `generate` and `simulate` (coroutines)."""
    config = RunConfig.from_options(options, progress=False)
    engine = build_engine(
        data, protocol, judge, out, column_map=column_map, config=config, dry_run=True
    )
    return engine.estimate()


def gate(
    candidate: str | Path,
    baseline: str | Path | None = None,
    *,
    report: bool = True,
    **settings: Any,
) -> Gate:
    """Decide whether `candidate` ships against `baseline`; write `gate.json` (and, when it
    goes in the candidate run directory, the gate's section of its report, unless
    `report=False`). Returns the typed `Gate`, the content of gate.json.

    `candidate` alone must be a pairwise run; with `baseline`, two runs of one protocol on
    the same rows. `settings`: `chatjudge.options.GateSettings`, named as `chatjudge gate`'s
    flags (`metric`, `margin`, `require`, `cluster`, `by`, `slices_must_not_regress`,
    `data`, `protocol`, `allow_mismatch`, `out`, `overwrite`, `seed`, `control`, `human`,
    `column`, `score`); an unknown one is an error.
    """
    from chatjudge.analysis.gate.decide import gate as decide
    from chatjudge.analysis.gate.decide import report_dir
    from chatjudge.options import GateSettings, describe

    try:
        chosen = GateSettings(**settings)
    except ValidationError as exc:
        raise UsageError(describe(exc)) from None
    result = decide(candidate, baseline, chosen)
    run_dir = report_dir(candidate, chosen)
    if report and run_dir is not None:
        from chatjudge.report import write_report

        write_report(run_dir)
    return result


def run_sync(engine: Engine, on_item: OnItem | None = None) -> Any:
    """Run the engine to completion from sync code, even where an event loop is running."""
    return sync.run_sync(engine.run(on_item))


def align(
    run: str | Path,
    *,
    human: str | Path,
    optimizer: ModelSpec,
    out: str | Path,
    judge: ModelSpec | None = None,
    **options: Any,
) -> Alignment | CostEstimate:
    """Align `run`'s judge to the human labels in `human` (`agree`'s format): write
    `out`/protocol.toml (the protocol with guidance learnt from the labels, a custom
    protocol with its provenance) and `out`/alignment.json, and return the `Alignment`
    (`recommended`: the held-out interval lies above 0). `judge` defaults to the run's by
    name; a Python function must be passed again. `optimizer`: a model name, or a Python
    function called as a judge is (`fn(prompt)` or `fn(prompt, schema)`). `options`:
    `held_out`, `seed`, `protocol`, `column`, `score`, `dry_run` (returns the estimate,
    sends nothing) and the run options of its calls (`concurrency`, `base_url`,
    `max_cost_usd`, prices, ...). Raises `TooFewHeldOut` when fewer than 30 rows would be
    held out, `BudgetReachedError` at `max_cost_usd` (the same call resumes).
    """
    from chatjudge.analysis.align.align_run import align_run
    from chatjudge.options import AlignOptions, describe

    own = {k: options.pop(k) for k in list(options) if k in AlignOptions.model_fields}
    try:
        chosen = AlignOptions(**own)
    except ValidationError as exc:
        raise UsageError(describe(exc)) from None
    config = RunConfig.from_options(options, command="align", progress=False)
    return align_run(
        run,
        human,
        optimizer,
        out,
        judge=judge,
        protocol=chosen.protocol,
        held_out=chosen.held_out,
        seed=chosen.seed,
        column=chosen.column,
        score=chosen.score,
        dry_run=chosen.dry_run,
        config=config,
    )


def export(
    run: str | Path,
    otlp: str | Path | None = None,
    endpoint: str | None = None,
    *,
    redact: Sequence[str] = (),
    protocol: str | Path | None = None,
    overwrite: bool = False,
) -> Exported:
    """Export the verdicts of the run directory `run` as OpenTelemetry
    `gen_ai.evaluation.result` log records, as `chatjudge export` does: to the OTLP/JSON
    file `otlp` and/or over OTLP/HTTP to the collector at `endpoint` (its base URL; the
    `OTEL_EXPORTER_OTLP_*` variables apply). `redact`: regular expressions masked in every
    record; `protocol`: a custom protocol's .toml. Raises `chatjudge.otel.SendError`
    (`sent`: records the collector took) when the collector refuses or cannot be reached.
    """
    from chatjudge.otel import export_run

    return export_run(run, otlp, endpoint, redact=redact, protocol=protocol, overwrite=overwrite)
