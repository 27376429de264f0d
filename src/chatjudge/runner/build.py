"""`run`'s set-up (`chatjudge.preflight`): the protocol, the panel of judges and the run
directory, checked before anything is sent; the engine assembled from them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from chatjudge.errors import UsageError
from chatjudge.models import ModelSpec
from chatjudge.options import RunConfig
from chatjudge.outputs import check_written
from chatjudge.preflight import Setup
from chatjudge.protocols import Protocol, get_protocol
from chatjudge.protocols.kinds import kind_of
from chatjudge.rundir import (
    REPORT,
    RESULTS,
    RUN_INFO,
    STORE,
    SUMMARY,
    RunDir,
    run_differences,
)
from chatjudge.runner.engine import Engine


def build_engine(
    data: Any,
    protocol: str | Path | Protocol,
    judge: ModelSpec | Sequence[ModelSpec] | None,
    out: str | Path | None,
    *,
    column_map: Mapping[str, str] | None,
    config: RunConfig,
    dry_run: bool = False,
) -> Engine:
    """Validate everything (data first) and assemble an engine; nothing is sent yet.
    `judge`: None is `local`, except for a deterministic protocol, which takes none.
    `dry_run`: for `Engine.estimate` only: nothing is created and no Ray worker starts."""
    proto = get_protocol(protocol)
    judged = kind_of(proto).judged
    if not judged:
        _check_scorer(proto, judge, config)
        judge = []
    elif judge is None:
        judge = "local"
    specs: list[ModelSpec] = list(judge) if isinstance(judge, list | tuple) else [judge]  # type: ignore[list-item]
    if not specs and judged:
        raise UsageError("at least one judge is needed")
    setup = Setup("run", data, column_map, proto.fields, config, dry_run=dry_run)
    models = [setup.model(s) for s in specs]
    setup.check(models)
    names = [m.name for m in models]
    if len(set(names)) != len(names):
        raise UsageError(f"the same judge is named twice in the panel: {names}")
    out_dir = setup.output_path(out, proto.name, models)
    engine = Engine(setup.source, proto, models, setup.config, out_dir, validation=setup.validation)
    _check_out_dir(engine, setup)
    check = None
    if config.run.judge_check is not None and not dry_run:  # a dry run counts the data's calls
        from chatjudge.runner.judge_check import plan_check  # its statistics: only with a check

        check = plan_check(config.run.judge_check, proto, models, setup.config, out_dir)
    engine.models = setup.distribute(models) if models else []
    if check is not None:
        check.engine.models = engine.models
        engine.judge_check = check
    return engine


def _check_scorer(
    protocol: Protocol, judge: ModelSpec | Sequence[ModelSpec] | None, config: RunConfig
) -> None:
    """A deterministic protocol calls no judge, and its score is the same every time."""
    if judge is not None and judge != []:
        raise UsageError(f"{protocol.name} is deterministic and calls no judge: leave out --judge")
    if config.run.judge_check is not None:
        raise UsageError(f"--judge-check: {protocol.name} calls no judge, there is none to check")
    if config.run.samples > 1:
        raise UsageError(
            f"{protocol.name} is deterministic: --samples {config.run.samples} would score "
            "the same calls again (tries of an agent are rows: simulate or generate --samples)"
        )


def _check_out_dir(engine: Engine, setup: Setup) -> None:
    """The run directory can be written, none of its files is the data or a symbolic link,
    and it holds no
    other run, nor files of a run's names that no run.json says a run wrote, that this one
    would replace (unless `overwrite`): all found before anything is sent."""
    out_dir = engine.out_dir
    files = tuple(out_dir / name for name in (RESULTS, SUMMARY, RUN_INFO, REPORT))
    check_written(out_dir, (*files, out_dir / STORE), setup.inputs, run_files=True)
    setup.prepare(out_dir, files)
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
    differences = run_differences(RunDir(out_dir).info, engine.run_info())
    if differences:
        raise UsageError(
            f"{out_dir} holds a different run ({'; '.join(differences)}): its results would be "
            "replaced. Use another --out, or --overwrite to replace them."
        )
