"""Reading finished runs back: summary, run info and per-item results of a run directory."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from chatjudge.errors import UsageError


def load_summary(run_dir: Path) -> dict[str, Any]:
    path = run_dir / "summary.json"
    if not path.is_file():
        raise UsageError(f"{run_dir} has no summary.json: is it a finished chatjudge run?")
    return json.loads(path.read_text(encoding="utf-8"))


def iter_results(run_dir: Path) -> Iterator[dict[str, Any]]:
    with (run_dir / "results.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def ok_scores(run_dir: Path) -> dict[str, dict[str, Any]]:
    """Per-item scores of the items judged ok, by item id."""
    return {r["id"]: r["scores"] for r in iter_results(run_dir) if r["status"] == "ok"}
