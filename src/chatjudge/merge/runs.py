"""Merging the run directories of `chatjudge run --shard I/N` into the directory one
unsharded run would have written: results in input order, every shard's calls in one
store, `run.json` without the shard, and the summary and report computed as the run
computes them (the bootstrap resamples items in input order, so its intervals are the
unsharded run's too)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from chatjudge import jsoncodec
from chatjudge.errors import UsageError
from chatjudge.merge.parts import (
    ONLY_SHARD,
    check_cover,
    check_new,
    in_order,
    merge_stores,
    refuse,
    sum_costs,
    sum_usage,
)
from chatjudge.protocols import BUILTIN, Protocol, get_protocol
from chatjudge.rundir import (
    FORMAT,
    REPORT,
    RESULTS,
    RUN_INFO,
    STORE,
    SUMMARY,
    RunInfo,
    prepare_output,
    read_run_info,
    read_summary,
    run_differences,
    write_json,
)
from chatjudge.runner.fold import count
from chatjudge.runner.summary import SummaryBuilder


def merge_runs(
    dirs: Sequence[Path], out: Path, protocol: str | Path | Protocol | None = None
) -> dict[str, Any]:
    """Join the shards' run directories `dirs` into `out`; returns the summary written.

    `protocol`: a custom protocol's file (a built-in one is found by its name). Refused
    (UsageError) before anything is written: shards of different configurations (data,
    protocol, judges, result-changing options), shards that do not cover 0..N-1 once each,
    an `out` that holds a run or is a shard."""
    infos = [read_run_info(d) for d in dirs]
    summaries = [read_summary(d) for d in dirs]
    check_cover([(str(d), info.config.get("shard")) for d, info in zip(dirs, infos, strict=True)])
    first = infos[0]
    differences = [
        f"{d}: {difference}"
        for d, info in zip(dirs[1:], infos[1:], strict=True)
        for difference in run_differences(first, info, ignore=ONLY_SHARD)
    ]
    if differences:
        raise refuse(f"the shards are runs of different configurations (against {dirs[0]})",
                     differences)  # fmt: skip
    proto = _protocol(first, protocol)
    files = tuple(out / name for name in (RESULTS, SUMMARY, RUN_INFO, STORE, REPORT))
    check_new(out, files, dirs)
    prepare_output(out)
    merge_stores([d / STORE for d in dirs], out / STORE)
    config = {**first.config, "shard": None}
    merged = RunInfo(
        format=FORMAT,
        protocol=first.protocol,
        judges=first.judges,
        config=config,
        data=first.data,
        n_rows=sum(info.n_rows for info in infos),
        chatjudge_version=first.chatjudge_version,
    )
    write_json(out / RUN_INFO, merged)
    from chatjudge.report import ReportBuilder  # the page machinery, only when writing one

    summary = SummaryBuilder(
        proto, summaries[0].judges, flip=bool(config["flip"]), samples=int(config["samples"])
    )
    report = ReportBuilder(out)
    try:
        with (out / RESULTS).open("wb") as target:
            for line in in_order([d / RESULTS for d in dirs], _index_of(dirs)):
                record = jsoncodec.loads(line)
                target.write(line)
                count(summary, record)
                report.add(record)
    except BaseException:
        report.close()
        raise
    built = summary.build(
        sum_usage(s.usage for s in summaries),
        sum_costs(s.cost for s in summaries),
        summaries[0].n_skipped,  # every shard validated every row: the same skipped rows
        summaries[0].skipped,
    )
    written = write_json(out / SUMMARY, built, only_set=True)
    report.finish(written)
    return written


def _index_of(dirs: Sequence[Path]) -> Callable[[int, int, bytes], int]:
    """A results line's position among all rows: its record's `index`."""

    def index(number: int, line_number: int, line: bytes) -> int:
        try:
            record = jsoncodec.loads(line)
        except ValueError:
            record = None
        if not isinstance(record, dict) or record.get("format") != FORMAT:
            raise UsageError(
                f"{dirs[number] / RESULTS}, line {line_number + 1}, is not a results record of "
                f"format {FORMAT}: re-run that shard's command to rewrite it (nothing is sent)"
            )
        return int(record["index"])

    return index


def _protocol(info: RunInfo, given: str | Path | Protocol | None) -> Protocol:
    """The shards' protocol: a built-in one by name, a custom one from the file given."""
    if given is None:
        if info.protocol not in BUILTIN:
            raise UsageError(
                f"the shards were judged with the custom protocol {info.protocol!r}: give its "
                "file with --protocol FILE.toml"
            )
        return get_protocol(info.protocol)
    proto = get_protocol(given)
    if proto.name != info.protocol:
        raise UsageError(f"--protocol is {proto.name!r}, the shards were judged with "
                         f"{info.protocol!r}")  # fmt: skip
    return proto
