"""The page of `chatjudge history`: each metric's line of runs with its intervals, where the
judge changed, and each step's difference; self-contained, through the report's templates."""

from __future__ import annotations

from pathlib import Path

from chatjudge.formats.history import History, HistoryStep
from chatjudge.report.charts import Interval, Section, interval_chart
from chatjudge.report.format import format_value
from chatjudge.report.history_text import (
    agreement,
    delta,
    evaluator,
    headline,
    interval,
    pairs,
    status,
)
from chatjudge.report.page import render_page

TONE = {"regression": "loss", "judge changed": "tie", "no regression": "win"}


def write_history_page(h: History, path: Path) -> Path:
    """Write the page of `h` to `path`; return it."""
    changed = {s.after for s in h.steps if s.judge_changed is not None}
    sections = [
        Section(
            f"metric-{i}",
            name,
            "Each run's value with its 95% interval, oldest first; a run judged differently "
            "from the one before is marked “judge changed”.",
            interval_chart(
                [
                    Interval(
                        label=run.name,
                        value=run.metrics[name].value,
                        ci95=run.metrics[name].ci95,
                        tone="tie" if run.name in changed else "primary",
                        key=run.name,
                        note="judge changed" if run.name in changed else "",
                    )
                    for run in h.runs
                ],
                fmt=lambda v, name=name: format_value(name, v),  # type: ignore[misc]
                x_title=name,
                bars=False,
                key=f"metric-{i}",
            ),
        )
        for i, name in enumerate(h.metrics)
    ]
    context = {
        "h": h,
        "runs": [
            {
                "name": r.name,
                "created": r.created[:19],
                "evaluator": evaluator(r),
                "check": agreement(r),
                "changed": r.name in changed,
            }
            for r in h.runs
        ],  # fmt: skip
        "checked": any(r.judge_check is not None for r in h.runs),
        "headline": headline(h),
        "sections": sections,
        "steps": [_row(s) for s in h.steps],
    }
    return render_page("history.html.j2", context, path)


def _row(s: HistoryStep) -> dict[str, str]:
    word = status(s)
    return {
        "metric": s.metric,
        "step": f"{s.before} → {s.after}",
        "delta": delta(s),
        "ci": interval(s),
        "pairs": pairs(s),
        "status": word,
        "tone": TONE.get(word, "neutral"),
        "why": s.judge_changed or "",
    }
