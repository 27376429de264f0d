"""Where a command may write: never through a symbolic link, never over its own input,
never over a run's own files (only `chatjudge run` writes `results.jsonl` and the rest), and
over an existing file only when it is this command's output of the same data and options
(which the command resumes or works out again) or `--overwrite` says to replace it. Each
refusal is a usage error, found before anything is read or sent; every writer then opens
its files through `chatjudge.writing`, which refuses a link made since."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from chatjudge.errors import UsageError
from chatjudge.formats.io import read_model
from chatjudge.rundir import RUN_FILES, RUN_INFO, Produced, produced_differences
from chatjudge.writing import refuse_link

if TYPE_CHECKING:
    from chatjudge.formats.produced import ProducedInfo

STEP_SUMMARY = "GITHUB_STEP_SUMMARY"


def check_written(
    out: Path,
    written: Iterable[Path],
    inputs: Iterable[Path],
    *,
    flag: str = "--out",
    run_files: bool = False,
) -> None:
    """The rule for every file a command writes: not one of its inputs, not a symbolic
    link, and not a run's own file unless the command writes runs (`run_files`: `run`,
    a merge of runs, `report`); `--overwrite` lifts none of them."""
    written = list(written)
    check_not_input(out, written, inputs, flag=flag)
    check_not_linked(written)
    if not run_files:
        check_not_a_run_file(out, written, flag=flag)


def check_not_linked(written: Iterable[Path]) -> None:
    """No file the command writes is a symbolic link (a dangling one too): writing through
    it would replace the file it names, which nobody asked this command to write."""
    for path in written:
        refuse_link(path)


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
    flag: str = "--out",
) -> None:
    """One file a command writes whole, such as `gate`'s: not its input, not a run's file,
    and, unless `overwrite`, new or a file of its `kind` (which the command replaces: it is
    worked out again from inputs that stay)."""
    check_written(out, [out], inputs, flag=flag)
    if out.exists() and not overwrite and not is_kind(out):
        raise UsageError(
            f"{out} exists and is not a {kind}: it would be replaced. Use another {flag}, or "
            "--overwrite to replace it."
        )


def check_dir_output(
    out: Path, written: Iterable[Path], inputs: Iterable[Path], *, flag: str = "--out"
) -> None:
    """A directory of a command's own (`align`'s): not a file, not a run's directory (whose
    files only `run` writes), and the files it writes there pass `check_written`."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"{flag} {out} is a file, not a directory: choose another {flag}")
    if (out / RUN_INFO).is_file():
        raise UsageError(
            f"{flag} {out} is the directory of a chatjudge run: choose another {flag} (a "
            "run's directory holds what `chatjudge run` writes)"
        )
    check_written(out, written, inputs, flag=flag)


def step_summary(path: Path) -> Path | None:
    """GitHub's step summary (`$GITHUB_STEP_SUMMARY`) when `path` is that file, else None:
    a file that each step appends to (GitHub's convention), never replaced. Compared as
    resolved paths; the summary is then written by the name GitHub gave it."""
    given = os.environ.get(STEP_SUMMARY)
    if not given or path.resolve() != Path(given).resolve():
        return None
    return Path(given)


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
    check_written(out, written, inputs)
    if overwrite:
        return
    if produced.record.is_file():
        # Imported here: `run` checks its output with this module and never reads a
        # produced row's record, whose models it need not build (issue 29, item 8).
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
