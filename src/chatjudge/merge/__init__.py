"""`chatjudge merge`: the outputs of N drivers run with `--shard I/N` joined into what one
unsharded driver would have written: a run directory (results, store, summary, report) from
the shards' run directories, or a JSONL file with its store and summary from the shards'
`generate` or `simulate` outputs. Shards of different configurations are refused."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from chatjudge.errors import UsageError
from chatjudge.merge.produced_files import merge_produced
from chatjudge.merge.runs import merge_runs
from chatjudge.protocols import Protocol


@dataclass(frozen=True)
class Merged:
    kind: Literal["run", "produced"]
    out: Path  # the run directory, or the JSONL file
    summary: dict[str, Any]


def merge(
    shards: Sequence[str | Path],
    out: str | Path,
    *,
    protocol: str | Path | Protocol | None = None,
    overwrite: bool = False,
) -> Merged:
    """Join `shards` (run directories, or JSONL outputs of `generate`/`simulate`) into `out`.

    `protocol`: for run directories judged with a custom protocol, its `.toml` file. A
    problem (missing or repeated shards, different configurations, an existing output
    unless `overwrite`, another merge writing `out`) raises `UsageError` before anything
    is written."""
    paths = [Path(p) for p in shards]
    target = Path(out)
    if not paths:
        raise UsageError("merge needs the shards: run directories or JSONL files")
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise UsageError(f"no such file or directory: {', '.join(missing)}")
    directories = [p.is_dir() for p in paths]
    if all(directories):
        return Merged("run", target, merge_runs(paths, target, protocol, overwrite=overwrite))
    if not any(directories):
        if protocol is not None:
            raise UsageError("--protocol applies to run directories, not to JSONL outputs")
        return Merged("produced", target, merge_produced(paths, target, overwrite=overwrite))
    raise UsageError(
        "give the run directories of `chatjudge run --shard`, or the JSONL files of "
        "`generate`/`simulate --shard`, not both"
    )


__all__ = ["Merged", "merge", "merge_produced", "merge_runs"]
