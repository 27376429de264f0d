"""`chatjudge.evaluate()`: the synchronous edge over the async run engine."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chatjudge.data import Source, validate
from chatjudge.errors import UsageError
from chatjudge.judges import Judge, get_judge
from chatjudge.protocols import Protocol, get_protocol
from chatjudge.runner import RESULTS, Engine, RunConfig, default_out_dir

JudgeSpec = str | Judge | Callable[..., Any]


@dataclass
class EvalResult:
    """What a run produced: the summary, one table row per item, and where the files are."""

    summary: dict[str, Any]
    out_dir: Path

    @property
    def table(self) -> Any:
        """A pandas DataFrame, one row per item, scores as columns (read from results.jsonl)."""
        import pandas as pd

        rows = []
        with (self.out_dir / RESULTS).open(encoding="utf-8") as fh:
            for line in fh:
                r = json.loads(line)
                rows.append(
                    {
                        "id": r["id"],
                        "index": r["index"],
                        "status": r["status"],
                        **r["scores"],
                        "consistent": r["consistent"],
                        "agreement": r["agreement"],
                        "error": r["error"],
                        "input_tokens": r["usage"]["input_tokens"],
                        "output_tokens": r["usage"]["output_tokens"],
                    }
                )
        return pd.DataFrame(rows).sort_values("index").reset_index(drop=True)

    @property
    def report_path(self) -> Path:
        return self.out_dir / "report.html"


def build_engine(
    data: Any,
    protocol: str | Path | Protocol,
    judge: JudgeSpec | Sequence[JudgeSpec],
    out: str | Path | None,
    *,
    column_map: Mapping[str, str] | None,
    base_url: str | Sequence[str] | None,
    config: RunConfig,
) -> Engine:
    """Validate everything (data first) and assemble an engine; nothing is sent yet."""
    proto = get_protocol(protocol)
    source = Source(data, column_map)
    specs: list[JudgeSpec] = list(judge) if isinstance(judge, list | tuple) else [judge]  # type: ignore[list-item]
    if not specs:
        raise UsageError("at least one judge is needed")
    base_urls = [base_url] if isinstance(base_url, str) else list(base_url or [])
    # Before any judge is built: bad data costs nothing.
    validation = validate(source, proto, limit=config.limit, skip_invalid=config.skip_invalid)
    judges = [
        get_judge(
            s, base_urls=base_urls, timeout=config.timeout, local_workers=config.local_workers
        )
        for s in specs
    ]
    names = [j.name for j in judges]
    if len(set(names)) != len(names):
        raise UsageError(f"the same judge is named twice in the panel: {names}")
    out_dir = (
        Path(out)
        if out is not None
        else default_out_dir(
            source.name, proto.name, names, {**config.fingerprint(), "base_urls": sorted(base_urls)}
        )
    )
    return Engine(source, proto, judges, config, out_dir, validation=validation)


def evaluate(
    data: Any,
    protocol: str | Path | Protocol = "interactivity-accuracy",
    judge: JudgeSpec | Sequence[JudgeSpec] = "local",
    out: str | Path | None = None,
    *,
    column_map: Mapping[str, str] | None = None,
    base_url: str | Sequence[str] | None = None,
    report: bool = True,
    **options: Any,
) -> EvalResult:
    """Judge `data` with `protocol` and return the summary and per-item table.

    `data`: a .jsonl/.csv/.parquet path, a list of dicts or a pandas DataFrame.
    `judge`: `local`, `openai/MODEL`, ..., a Python callable, or a list of them (a panel).
    `options`: run options (`concurrency`, `samples`, `flip`, `limit`, `no_cache`, ...);
    an unknown option is an error. Re-running with the same arguments resumes.
    """
    try:
        config = RunConfig(progress=False, **options)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    engine = build_engine(
        data, protocol, judge, out, column_map=column_map, base_url=base_url, config=config
    )
    if not report:
        outcome = run_sync(engine)
        return EvalResult(outcome.summary, outcome.out_dir)
    from chatjudge.report import ReportBuilder

    builder = ReportBuilder(engine.out_dir)
    try:
        outcome = run_sync(engine, on_item=builder.add)
    except BaseException:
        builder.close()
        raise
    builder.finish(outcome.summary)
    return EvalResult(outcome.summary, outcome.out_dir)


def run_sync(engine: Engine, on_item: Callable[[dict[str, Any]], None] | None = None) -> Any:
    """Run the engine to completion from sync code, even where an event loop is running."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(engine.run(on_item))
    # Called from a running loop (a notebook): run the engine on its own loop in a thread.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, engine.run(on_item)).result()
