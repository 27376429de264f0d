"""Where a command may write: never over its own input, never over a run's own files (only
`chatjudge run` writes `results.jsonl` and the rest), and over an existing file only when
it is this command's output of the same data and options (which the command resumes) or
`--overwrite` says to replace it. Each refusal is a usage error, found before anything is
read or sent."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from chatjudge.errors import UsageError
from chatjudge.formats.io import read_model
from chatjudge.rundir import RUN_FILES, RUN_INFO, Produced, produced_differences

if TYPE_CHECKING:
    from chatjudge.formats.produced import ProducedInfo


def check_not_input(
    out: Path, written: Iterable[Path], inputs: Iterable[Path], *, flag: str = "--out"
) -> None:
    """No file the command writes is one it reads (through a symlink, a hard link or another
    spelling of its path too); `--overwrite` does not lift it: the input would be lost."""
    inputs = list(inputs)
    for path in written:
        for data in inputs:
            if _same_file(path, data):
                raise UsageError(
                    f"{flag} {out} would write over {path}, which is this command's input "
                    f"{data}: choose another {flag} (not even --overwrite writes over a "
                    "command's own input)"
                )


def check_not_a_run_file(out: Path, written: Iterable[Path], *, flag: str = "--out") -> None:
    """No file the command writes is one of a run directory's own (its results, summary,
    store, run.json, report): replacing one breaks the run; `--overwrite` does not lift it."""
    for path in written:
        real = path.resolve()
        if real.name in RUN_FILES and (real.parent / RUN_INFO).is_file():
            raise UsageError(
                f"{flag} {out} would write over {real.name} of the chatjudge run in "
                f"{real.parent}: choose another {flag} (a run's files are written by "
                "`chatjudge run` only, whatever --overwrite says)"
            )


def check_file_output(
    out: Path,
    inputs: Iterable[Path],
    *,
    kind: str,
    is_kind: Callable[[Path], bool],
    overwrite: bool,
) -> None:
    """One file a command writes whole, such as `gate`'s: not its input, not a run's file,
    and, unless `overwrite`, new or a file of its `kind` (which the command replaces: it is
    worked out again from inputs that stay)."""
    check_not_input(out, [out], inputs)
    check_not_a_run_file(out, [out])
    if out.exists() and not overwrite and not is_kind(out):
        raise UsageError(
            f"{out} exists and is not a {kind}: it would be replaced. Use another --out, or "
            "--overwrite to replace it."
        )


def check_produced_output(
    produced: Produced, made: ProducedInfo, inputs: Sequence[Path], *, overwrite: bool
) -> None:
    """The JSONL output of `generate`, `simulate` or `import` (`made`: the record this
    command would write beside it): not its input, not a run's file, and, unless
    `overwrite`, either new or the same command's output of the same data and options,
    which its record beside it (`<out>.run.json`) shows."""
    out = produced.rows
    written: tuple[Path, ...]
    replaced: tuple[Path, ...]
    if made.command == "import":
        written, replaced = (out, produced.record), (out,)
    else:
        written = (out, produced.store, produced.summary, produced.record)
        replaced = (out, produced.summary)  # a store is only added to
    check_not_input(out, written, inputs)
    check_not_a_run_file(out, written)
    if overwrite:
        return
    if produced.record.is_file():
        # Imported here: `run` checks its output with this module and never reads a
        # produced row's record, whose models cost a small run 0.003 s (issue 29, item 8).
        from chatjudge.formats.produced import ProducedInfo

        found = produced_differences(read_model(produced.record, ProducedInfo), made)
        if found:
            raise UsageError(
                f"{out} holds a different output ({'; '.join(found)}): it would be replaced. "
                "Use another --out, or --overwrite to replace it."
            )
        return
    there = [str(p) for p in replaced if p.exists()]
    if there:
        one = len(there) == 1
        raise UsageError(
            f"{' and '.join(there)} {'exists' if one else 'exist'}, and no "
            f"{produced.record.name} beside says that `chatjudge {made.command}` wrote "
            f"{'it' if one else 'them'}: {'it' if one else 'they'} would be replaced. Use "
            f"another --out, or --overwrite to replace {'it' if one else 'them'}."
        )


def _same_file(a: Path, b: Path) -> bool:
    if a.exists() and b.exists():
        return os.path.samefile(a, b)
    return a.resolve() == b.resolve()
