"""The `chatjudge` command as a user runs it: in this process (`run_cli`), or as a process of
its own (`run_process`) where the process is what a test checks.

`run_cli` calls the same typer app the `chatjudge` script calls, with a clean environment
and its own standard streams, and answers as `subprocess.run` does: a test reads the exit
status, stdout and stderr, and a crash shows as Python's traceback on stderr with status 1.
It costs the command's own work; a process also pays about 0.5 s of CPU for its imports,
which over the suite's few hundred commands was a third of its CPU (issue 29, item 7).
`run_process` is for what only a process shows: signals, what it loads, the installed
entry point, settings that `chatjudge.cli.main` makes for its process alone.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import traceback
import warnings

from typer.testing import CliRunner

from chatjudge.cli import app
from chatjudge.cli.common import err, out

# What Python reads only as a process starts (PYTHONPATH, PYTHONHASHSEED...).
_AT_START = "PYTHON"


def _environ(key: str | None, env: dict[str, str]) -> dict[str, str | None]:
    """The caller's environment without its OPENAI_* variables, with `key` and `env`."""
    environ: dict[str, str | None] = {k: None for k in os.environ if k.startswith("OPENAI_")}
    if key:
        environ["OPENAI_API_KEY"] = key
    return {**environ, **env}


def run_cli(*args: str, key: str | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    """`chatjudge ARGS` in this process, without the caller's OPENAI_* variables; `key`:
    OPENAI_API_KEY for this run; `env`: more variables, for this run only."""
    if any(name.startswith(_AT_START) for name in env):
        raise ValueError(f"{sorted(env)}: read as a process starts; use run_process")
    threshold = gc.get_threshold()
    # A console made where COLUMNS is set keeps that width; a process makes its consoles as
    # it starts, under the run's COLUMNS. Without a width of its own, rich reads COLUMNS
    # (the run's, in `invoke`) whenever it measures.
    for console in (out, err):
        console.width = None  # type: ignore[assignment]
    try:
        with warnings.catch_warnings():  # the command installs its own `warning:` printer
            result = CliRunner().invoke(app, list(args), env=_environ(key, env))
    finally:
        gc.unfreeze()  # what the judge loop froze for its process (`collect_less_often`)
        gc.set_threshold(*threshold)
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        info = result.exc_info
        assert info is not None
        stderr += "".join(traceback.format_exception(*info))
    status = int(result.exit_code)
    return subprocess.CompletedProcess(["chatjudge", *args], status, result.stdout, stderr)


def run_process(
    *args: str, key: str | None = None, timeout: float = 120, **env: str
) -> subprocess.CompletedProcess[str]:
    """`python -m chatjudge.cli ARGS` as its own process, environment as `run_cli`'s."""
    environ = {k: v for k, v in {**os.environ, **_environ(key, env)}.items() if v is not None}
    return subprocess.run(
        [sys.executable, "-m", "chatjudge.cli", *args],
        capture_output=True,
        text=True,
        env=environ,
        timeout=timeout,
    )
