"""`chatjudge.evaluate()`: the synchronous edge over the async run engine."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chatjudge import sync
from chatjudge.calls.estimate import CostEstimate
from chatjudge.cluster import distribute, key_checked_here
from chatjudge.data import Source, validate
from chatjudge.data.shard import of
from chatjudge.errors import BudgetReachedError, UsageError
from chatjudge.models import ModelSpec, check_options, get_model
from chatjudge.options import RunConfig
from chatjudge.outputs import check_not_input
from chatjudge.protocols import Protocol, get_protocol
from chatjudge.rundir import (
    REPORT,
    RESULTS,
    RUN_INFO,
    STORE,
    SUMMARY,
    default_out_dir,
    iter_results,
    prepare_output,
    read_run_info,
    run_differences,
)
from chatjudge.runner import Engine


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
            for r in iter_results(self.out_dir)
        ]
        return pd.DataFrame(rows).sort_values("index").reset_index(drop=True)

    @property
    def report_path(self) -> Path:
        return self.out_dir / REPORT


def build_engine(
    data: Any,
    protocol: str | Path | Protocol,
    judge: ModelSpec | Sequence[ModelSpec],
    out: str | Path | None,
    *,
    column_map: Mapping[str, str] | None,
    config: RunConfig,
    dry_run: bool = False,
) -> Engine:
    """Validate everything (data first) and assemble an engine; nothing is sent yet.
    `dry_run`: for `Engine.estimate` only: nothing is created and no Ray worker starts."""
    if dry_run:
        config = config.in_process()
    proto = get_protocol(protocol)
    source = Source(data, column_map)
    specs: list[ModelSpec] = list(judge) if isinstance(judge, list | tuple) else [judge]  # type: ignore[list-item]
    if not specs:
        raise UsageError("at least one judge is needed")
    # Before any judge is built: bad data costs nothing.
    validation = validate(
        source,
        proto.fields,
        limit=config.run.limit,
        skip_invalid=config.run.skip_invalid,
        shard=of(config.run.shard),
    )
    models = [get_model(s, config.client, check_key=key_checked_here(config)) for s in specs]
    check_options(models, config)
    names = [m.name for m in models]
    if len(set(names)) != len(names):
        raise UsageError(f"the same judge is named twice in the panel: {names}")
    out_dir = (
        Path(out)
        if out is not None
        else default_out_dir(source.name, proto.name, names, config.fingerprint())
    )
    engine = Engine(source, proto, models, config, out_dir, validation=validation)
    _check_out_dir(engine, create=not dry_run)
    engine.models = distribute(models, config)  # last: Ray workers start only for a valid run
    return engine


def _check_out_dir(engine: Engine, *, create: bool) -> None:
    """The run directory can be written, none of its files is the data, and it holds no
    other run, nor files of a run's names that no run.json says a run wrote, that this one
    would replace (unless `overwrite`): all found before anything is sent."""
    out_dir = engine.out_dir
    files = tuple(out_dir / name for name in (RESULTS, SUMMARY, RUN_INFO, REPORT))
    data = engine.source.file()
    check_not_input(out_dir, (*files, out_dir / STORE), [data] if data is not None else [])
    prepare_output(out_dir, files, create=create)
    if engine.config.run.overwrite:
        return
    if not (out_dir / RUN_INFO).is_file():
        there = [f.name for f in files if f.exists()]
        if there:
            raise UsageError(
                f"{out_dir} holds {', '.join(there)} but no {RUN_INFO}: no chatjudge run wrote "
                "them, and they would be replaced. Use another --out, or --overwrite to "
                "replace them."
            )
        return
    differences = run_differences(read_run_info(out_dir), engine.run_info())
    if differences:
        raise UsageError(
            f"{out_dir} holds a different run ({'; '.join(differences)}): its results would be "
            "replaced. Use another --out, or --overwrite to replace them."
        )


def evaluate(
    data: Any,
    protocol: str | Path | Protocol = "interactivity-accuracy",
    judge: ModelSpec | Sequence[ModelSpec] = "local",
    out: str | Path | None = None,
    *,
    column_map: Mapping[str, str] | None = None,
    report: bool = True,
    **options: Any,
) -> EvalResult:
    """Judge `data` with `protocol` and return the summary and per-item table.

    `data`: a .jsonl/.csv/.parquet path, a list of dicts or a pandas DataFrame.
    `judge`: `local`, `openai/MODEL`, ..., a Python callable, or a list of them (a panel).
    `options`: the run options, named as in `chatjudge.options` and as the CLI's flags
    (`concurrency`, `samples`, `flip`, `limit`, `no_cache`, `temperature`, `base_url` (one
    URL or several), ...); an unknown option is an error. Re-running with the same
    arguments resumes. With `max_cost_usd`, reaching the budget writes everything and
    raises `BudgetReachedError` (its `summary` says how far the run got).
    """
    config = RunConfig.from_options(options, progress=False)
    engine = build_engine(data, protocol, judge, out, column_map=column_map, config=config)
    if not report:
        outcome = run_sync(engine)
        return EvalResult(outcome.summary, outcome.out_dir)
    from chatjudge.report import ReportBuilder

    builder = ReportBuilder(engine.out_dir)
    try:
        outcome = run_sync(engine, on_item=builder.add)
    except BudgetReachedError as exc:  # stopped at --max-cost-usd: the page is written too
        builder.finish(exc.summary)
        raise
    except BaseException:
        builder.close()
        raise
    builder.finish(outcome.summary)
    return EvalResult(outcome.summary, outcome.out_dir)


def estimate(
    data: Any,
    protocol: str | Path | Protocol = "interactivity-accuracy",
    judge: ModelSpec | Sequence[ModelSpec] = "local",
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


def run_sync(engine: Engine, on_item: Callable[[dict[str, Any]], None] | None = None) -> Any:
    """Run the engine to completion from sync code, even where an event loop is running."""
    return sync.run_sync(engine.run(on_item))
