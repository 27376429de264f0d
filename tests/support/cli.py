"""The `chatjudge` command as a user runs it: its own process, a clean environment."""

from __future__ import annotations

import os
import subprocess
import sys


def run_cli(
    *args: str, key: str | None = None, timeout: float = 120, **env: str
) -> subprocess.CompletedProcess[str]:
    """Run `python -m chatjudge.cli ARGS` without the caller's OPENAI_* variables;
    `key`: OPENAI_API_KEY for this run; `env`: more variables."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    if key:
        environ["OPENAI_API_KEY"] = key
    return subprocess.run(
        [sys.executable, "-m", "chatjudge.cli", *args],
        capture_output=True,
        text=True,
        env={**environ, **env},
        timeout=timeout,
    )
