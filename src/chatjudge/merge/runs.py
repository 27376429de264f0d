"""Merging the run directories of `chatjudge run --shard I/N` into the directory one
unsharded run would have written: results in input order, every shard's calls in one
store, `run.json` without the shard, and the summary and report computed as the run
computes them (the bootstrap resamples items in input order, so its intervals are the
unsharded run's too)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from chatjudge import jsoncodec
from chatjudge.errors import UsageError
from chatjudge.formats.io import first_error, write_json
from chatjudge.formats.provenance import sum_served
from chatjudge.formats.results import ResultRecord
from chatjudge.formats.run_info import RunInfo
from chatjudge.formats.summary import Summary
from chatjudge.merge.parts import (
    ONLY_SHARD,
    check_cover,
    check_new,
    count_rows,
    data_differences,
    merge_stores,
    order_lines,
    read_lines,
    refuse,
    staged,
    sum_costs,
    sum_usage,
)
from chatjudge.protocols import Protocol
from chatjudge.rundir import (
    REPORT,
    RESULTS,
    RUN_INFO,
    STORE,
    SUMMARY,
    RunDir,
    run_differences,
)
from chatjudge.summarize.run_summary import SummaryBuilder, count
from chatjudge.verdicts.evaluator import differences as evaluator_differences


def merge_runs(
    dirs: Sequence[Path],
    out: Path,
    protocol: str | Path | Protocol | None = None,
    *,
    overwrite: bool = False,
) -> dict[str, Any]:
    """Join the shards' run directories `dirs` into `out`; returns the summary written.

    `protocol`: a custom protocol's file (a built-in one is found by its name). Refused
    (UsageError) before anything is written: shards of different configurations (data,
    protocol, judges, result-changing options), shards that do not cover 0..N-1 once each,
    unfinished shards or lines that are not results records, an `out` that holds a run or
    is a shard. The output is written aside and moved into `out` once complete."""
    shards = [RunDir(d) for d in dirs]
    infos = [shard.info for shard in shards]
    check_cover([(str(d), info.config.get("shard")) for d, info in zip(dirs, infos, strict=True)])
    first = infos[0]
    differences = [
        f"{d}: {difference}"
        for d, info in zip(dirs[1:], infos[1:], strict=True)
        for difference in run_differences(first, info, ignore=ONLY_SHARD)
        + data_differences(first.data_sha256, info.data_sha256)
        + (evaluator_differences(first, info) or [])
    ]
    if differences:
        raise refuse(f"the shards are runs of different configurations (against {dirs[0]})",
                     differences)  # fmt: skip
    proto = shards[0].protocol(protocol)
    summaries = _finished(shards)
    files = tuple(out / name for name in (RESULTS, SUMMARY, RUN_INFO, STORE, REPORT))
    check_new(out, files, dirs, overwrite=overwrite)
    results = [d / RESULTS for d in dirs]
    lines = order_lines(results, _index_of)  # every line read and checked before any write
    config = {**first.config, "shard": None}
    merged = RunInfo(
        protocol=first.protocol,
        judges=first.judges,
        config=config,
        data=first.data,
        n_rows=sum(info.n_rows for info in infos),
        chatjudge_version=first.chatjudge_version,
        data_sha256=first.data_sha256,
        protocol_sha256=first.protocol_sha256,
        evaluator=first.evaluator,
    )
    from chatjudge.report import ReportBuilder  # the page machinery, only when writing one

    with staged(out, files, overwrite=overwrite) as aside:
        merge_stores([d / STORE for d in dirs], aside / STORE)
        write_json(aside / RUN_INFO, merged)
        summary = SummaryBuilder(
            proto, summaries[0].judges, flip=bool(config["flip"]), samples=int(config["samples"])
        )
        report = ReportBuilder(aside)
        try:
            with (aside / RESULTS).open("wb") as target:
                for where, line in read_lines(results, lines):
                    record = jsoncodec.loads(line)
                    try:
                        ResultRecord.model_validate(record)  # read back through its model
                        count(summary, record)
                        report.add(record)
                    except (AttributeError, KeyError, TypeError, ValueError) as exc:
                        why = first_error(exc) if isinstance(exc, ValidationError) else exc
                        raise UsageError(
                            f"{results[where.file]}, line {where.number}, is not a results "
                            f"record as a run writes it ({type(exc).__name__}: {why}): "
                            f"{_RE_RUN}"
                        ) from None
                    target.write(line)
        except BaseException:
            report.close()
            raise
        built = summary.build(
            sum_usage(s.usage for s in summaries),
            sum_costs(s.cost for s in summaries),
            summaries[0].n_skipped,  # every shard validated every row: the same skipped rows
            summaries[0].skipped,
            derived_tool_definitions=sum(s.derived_tool_definitions for s in summaries),
            unparsed_tool_arguments=sum(s.unparsed_tool_arguments for s in summaries),
        )
        if first.evaluator is not None:
            built.evaluator = first.evaluator
        served = sum_served(s.served for s in summaries)
        if served is not None:
            built.served = served
        written = write_json(aside / SUMMARY, built, only_set=True)
        report.finish(Summary.model_validate(written))  # as summary.json holds it
    return written


_RE_RUN = "re-run that shard's command to rewrite its results from its store (nothing is sent)"


def _finished(shards: Sequence[RunDir]) -> list[Summary]:
    """The shards' summaries, each shard finished: a summary, and as many results lines as
    it counts items (a re-run killed before its end leaves fewer beside the old summary)."""
    problems = []
    summaries = []
    for shard in shards:
        d = shard.path
        if not (d / SUMMARY).is_file() or not (d / RESULTS).is_file():
            missing = " and ".join(n for n in (SUMMARY, RESULTS) if not (d / n).is_file())
            problems.append(f"{d} has no {missing}: re-run that shard's command to finish it "
                            "(only what its store lacks is sent)")  # fmt: skip
            continue
        summary = shard.summary
        found = count_rows(d / RESULTS)
        if found != summary.n_items:
            problems.append(
                f"{d / RESULTS} holds {found} item(s), its {SUMMARY} {summary.n_items} (a run "
                "killed before its end?): re-run that shard's command to finish it (only what "
                "its store lacks is sent)"
            )
        summaries.append(summary)
    if problems:
        raise refuse("unfinished shards", problems)
    return summaries


def _index_of(number: int, row: int, line: bytes) -> int:
    """A results line's position among all rows: its record's `index`."""
    try:
        record = jsoncodec.loads(line)
    except ValueError:
        record = None
    version = ResultRecord.version()
    if not isinstance(record, dict) or record.get("format") != version:
        raise ValueError(f"is cut off or not a results record of format {version}: {_RE_RUN}")
    index = record.get("index")
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        raise ValueError(f"has no row index (`index`: {index!r}): {_RE_RUN}")
    return index
