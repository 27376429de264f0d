"""Where a run writes: by default a folder named after what was run, so that
re-running the same command finds its own store and resumes."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

RUNS_ROOT = Path("chatjudge-runs")


def default_out_dir(
    data_name: str, protocol: str, judges: list[str], options: dict[str, Any]
) -> Path:
    """`chatjudge-runs/<data>-<protocol>-<judge>-<hash of the result-changing options>`."""
    digest = hashlib.sha256(
        json.dumps({"judges": judges, "options": options}, sort_keys=True, default=str).encode()
    ).hexdigest()[:8]
    judge = re.sub(r"[^A-Za-z0-9.]+", "_", "+".join(judges))[:40]
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{data_name}-{protocol}-{judge}")
    return RUNS_ROOT / f"{name}-{digest}"
