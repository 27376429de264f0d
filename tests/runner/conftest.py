"""Datasets and a stand-in OpenAI server for run-engine tests."""

from __future__ import annotations

import json
from pathlib import Path

WORDS = "kettle orbit saffron lantern quartz meadow violin harbor ember cobalt".split()  # noqa: SIM905


def pointwise_rows(n: int, marker: str = "") -> list[dict]:
    """n distinct interactivity-accuracy items; `marker` tags item 0 (for permanent faults)."""
    rows = []
    for i in range(n):
        w = WORDS[i % len(WORDS)]
        rows.append(
            {
                "id": f"item-{i:04d}",
                "chat_history": [],
                "chat": [
                    {
                        "role": "user",
                        "content": f"Question {i}: how many letters are in '{w}'?"
                        + (f" {marker}" if i == 0 and marker else ""),
                    },
                    {"role": "assistant", "content": f"'{w}' has {len(w)} letters."},
                ],
                "question": f"How many letters are in '{w}'? (#{i})",
                "answer": str(len(w)),
            }
        )
    return rows


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def read_results(run_dir: Path) -> dict[str, dict]:
    lines = (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["id"]: r for r in map(json.loads, lines)}
