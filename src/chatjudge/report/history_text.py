"""A history as people read it: the terminal tables and the Markdown for a pull request or
`$GITHUB_STEP_SUMMARY`, both from the same parts as the page."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.table import Table

from chatjudge.formats.history import History, HistoryRun, HistoryStep
from chatjudge.report.format import format_ci, format_value

# How a history's Markdown opens: --markdown replaces a file that opens so.
HEADING = "### chatjudge history:"


def status(step: HistoryStep) -> str:
    """What a step is, in one phrase: the word the table, page and Markdown all show."""
    if step.judge_changed is not None:
        return "judge changed"
    if step.difference is None:
        return "no value"
    if step.regression:
        return "regression"
    return "no regression" if step.decided else "not decided"


def delta(step: HistoryStep) -> str:
    return "—" if step.difference is None else f"{step.difference.value:+.4f}"


def interval(step: HistoryStep) -> str:
    return "—" if step.difference is None else _ci(step.difference.ci95)


def evaluator(run: HistoryRun) -> str:
    """The run's evaluator fingerprint, 12 characters ("—": a run older than it)."""
    return run.evaluator or "—"


def agreement(run: HistoryRun) -> str:
    """The run's judge check: its agreement with the reference labels ("—": none)."""
    return "—" if run.judge_check is None else f"{run.judge_check:.2f}"


def pairs(step: HistoryStep) -> str:
    return f"{step.n_pairs:,}" if step.paired else "unpaired"


def headline(h: History) -> str:
    found = h.regressions
    if found:
        return "regression at " + ", ".join(f"{s.before} → {s.after} ({s.metric})" for s in found)
    return "no regression"


def table(h: History) -> RenderableType:
    """Each metric per run, then each step, the decided ones marked."""
    checked = any(r.judge_check is not None for r in h.runs)
    heads = ["run", "created", "evaluator", *(["judge check"] if checked else [])]
    runs = Table(*heads, *[f"{m} (95% CI)" for m in h.metrics], title="history")
    for run in h.runs:
        cells = [evaluator(run)] + ([agreement(run)] if checked else [])
        for name in h.metrics:
            m = run.metrics[name]
            cells.append(f"{format_value(name, m.value)} {format_ci(name, m.ci95, m.value)}")
        runs.add_row(escape(run.name), run.created[:19], *map(escape, cells))
    steps = Table("metric", "step", "Δ", "95% CI", "pairs", "status", title="steps")
    for s in h.steps:
        steps.add_row(s.metric, escape(f"{s.before} → {s.after}"), delta(s), interval(s),
                      pairs(s), status(s))  # fmt: skip
    return Group(runs, steps)


def notes(h: History) -> list[str]:
    """The sentences below the tables: the outcome and its rule, judge changes, slices."""
    margin = f"−{h.margin:g}" if h.margin else "0"
    which = "every step, Holm-corrected" if h.all_steps else "the latest step of each metric"
    lines = [f"{headline(h).capitalize()}. Decided: {which}; a regression's 95% interval "
             f"lies below {margin}."]  # fmt: skip
    for s in h.steps:
        if s.judge_changed is not None and s.metric == h.metrics[0]:
            lines.append(f"{s.before} → {s.after}: judged differently ({s.judge_changed}).")
        if s.decided:
            lines += [
                f"{s.metric} {s.before} → {s.after}, {c.value} ({c.n_pairs} pairs): "
                f"{c.difference.value:+.4f} {_ci(c.difference.ci95)} at {c.level:.1%}"
                for c in s.slices
            ]
    return lines


def _ci(ci: list[float]) -> str:
    return f"[{ci[0]:+.4f}, {ci[1]:+.4f}]" if ci else "—"


def markdown(h: History) -> str:
    """A compact Markdown summary: each step's difference and status."""
    icon = "❌" if h.regressions else "✅"
    lines = [f"{HEADING} {icon} {_cell(headline(h))}", "", *map(_cell, notes(h)), ""]
    lines += ["| metric | step | Δ | 95% CI | pairs | status |", "|---|---|---|---|---|---|"]
    for s in h.steps:
        cells = [s.metric, f"{s.before} → {s.after}", delta(s), interval(s), pairs(s), status(s)]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """A table cell of any text: no pipe or newline breaks the row, no markup runs."""
    safe = text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
    return safe.replace("<", "&lt;").replace(">", "&gt;")
