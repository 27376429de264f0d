"""The terminal summary shows the same figures as the page."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

from chatjudge.formats.summary import Summary
from chatjudge.report import summary_table


def render(summary: dict) -> str:
    """The table of `summary` as summary.json holds it, read through its model."""
    console = Console(record=True, width=160, color_system=None)
    console.print(summary_table(Summary.model_validate(summary)))
    return console.export_text()


def row(text: str, label: str) -> list[str]:
    """The cells of the table row whose first cell is `label`."""
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip("│┃ ").replace("┃", "│").split("│")]
        if cells and cells[0] == label:
            return cells
    raise AssertionError(f"no row {label!r} in\n{text}")


def pct(v: float) -> str:
    return f"{v * 100:.1f}%"


def test_pairwise_panel_summary(pairwise_run: Path) -> None:
    summary = json.loads((pairwise_run / "summary.json").read_text())
    text = render(summary)
    assert "pairwise-chat-quality · local+openai/gpt-4o-mini" in text
    m = summary["metrics"]["candidate_win_rate"]
    assert row(text, "Candidate win rate") == [
        "Candidate win rate",
        pct(m["value"]),
        f"[{pct(m['ci95'][0])}, {pct(m['ci95'][1])}]",
        str(m["n"]),
    ]
    m = summary["metrics"]["position_consistency"]
    assert row(text, "Position consistency")[1] == pct(m["value"])
    judge = summary["per_judge"]["openai/gpt-4o-mini"]["metrics"]["tie_rate"]
    assert row(text, "Tie rate [openai/gpt-4o-mini]")[1:3] == [
        pct(judge["value"]),
        f"[{pct(judge['ci95'][0])}, {pct(judge['ci95'][1])}]",
    ]
    pair = summary["per_judge"]["inter_judge_agreement"][0]
    assert row(text, "Agreement local vs openai/gpt-4o-mini")[1] == pct(pair["agreement"])
    assert row(text, "items")[1] == str(summary["n_items"])
    assert row(text, "judged")[1] == str(summary["n_ok"])
    assert row(text, "failed")[1] == str(summary["n_failed"])


def test_pointwise_summary(pointwise_run: Path) -> None:
    summary = json.loads((pointwise_run / "summary.json").read_text())
    text = render(summary)
    m = summary["metrics"]
    assert row(text, "Interactivity")[1] == f"{m['interactivity']['value']:.2f}"
    lo, hi = m["itr"]["ci95"]
    assert row(text, "ITR")[1:3] == [f"{m['itr']['value']:.1f}", f"[{lo:.1f}, {hi:.1f}]"]
    assert row(text, "Accuracy")[1] == pct(m["accuracy"]["value"])


def test_metric_without_interval() -> None:
    summary = {
        "protocol": "p",
        "kind": "pointwise",
        "judge": "j",
        "judges": ["j"],
        "samples": 1,
        "flip": False,
        "usage": {},
        "cost_usd": None,
        "per_judge": {},
        "created": "2025-01-01T00:00:00+00:00",
        "chatjudge_version": "0",
        "n_items": 1,
        "n_ok": 1,
        "n_failed": 0,
        "metrics": {
            "accuracy": {"value": 1.0, "ci95": None, "n": 1},
            "tie_rate": {"value": None, "ci95": None, "n": 0},
        },
    }
    text = render(summary)
    assert row(text, "Accuracy") == ["Accuracy", "100.0%", "too few to say", "1"]
    assert row(text, "Tie rate") == ["Tie rate", "n/a", "—", "0"]
