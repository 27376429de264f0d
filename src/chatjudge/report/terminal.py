"""The run summary as a terminal table, with the same figures the page shows."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rich.console import Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from chatjudge.formats.cost import Cost
from chatjudge.formats.shared import Metric
from chatjudge.formats.summary import Summary
from chatjudge.report.format import (
    format_ci,
    format_count,
    format_share,
    format_value,
    metric_label,
)
from chatjudge.report.provenance import fingerprint, served_lines
from chatjudge.report.sections import AGREEMENT_KEY

if TYPE_CHECKING:
    from chatjudge.calls.estimate import CostEstimate

CORRECTED = ("length_controlled_preference", "style_controlled_preference")


def produced_table(summary: dict[str, Any]) -> Table:
    """The summary of `generate` or `simulate`: metrics with their 95% CI, then the counts."""
    if summary["kind"] == "simulation":
        title = f"simulate · assistant {summary['assistant']} · user {summary['user']}"
        rows = ("conversations", summary["n_conversations"])
    else:
        title = f"generate {summary['field']} · {summary['model']}"
        rows = ("rows", summary["n_rows"])
    table = _metric_table(title)
    _add_metrics(table, summary.get("metrics"))
    table.add_section()
    table.add_row(rows[0], format_count(rows[1]), "", "")
    table.add_row("finished", format_count(summary["n_ok"]), "", "")
    failed = summary["n_failed"]
    causes = ", ".join(f"{k}: {v}" for k, v in summary.get("failures", {}).items())
    table.add_row(
        "failed", format_count(failed), escape(causes), "", style="red" if failed else None
    )
    if summary.get("plain_user_replies"):
        plain = format_count(summary["plain_user_replies"])
        table.add_row("plain-text user replies", plain, "no JSON: taken whole as the message", "")
    if summary.get("tool_steps"):
        table.add_row("tool steps", format_count(summary["tool_steps"]), "model calls", "")
        for key, note in (("unmatched_tool_calls", "no recorded result to replay"),
                          ("tool_errors", "raised, timed out or unknown")):  # fmt: skip
            if summary.get(key):
                table.add_row(key.replace("_", " "), format_count(summary[key]), note, "",
                              style="yellow")  # fmt: skip
    if summary.get("rows_without_tools"):
        table.add_row("rows without their tools", format_count(summary["rows_without_tools"]),
                      "--no-tools: not like for like", "", style="yellow")  # fmt: skip
    cost = summary.get("cost")
    cost_record = Cost.model_validate(cost) if isinstance(cost, dict) else None
    _add_cost(table, cost_record, summary.get("cost_usd"))
    return table


def summary_table(summary: Summary) -> Table:
    """Metric, value, 95% CI and n for every metric, then the item counts (and a panel's judges).

    Names are escaped: a judge called `[local]` must print as such, not as rich markup.
    """
    table = _metric_table(f"{summary.protocol} · {summary.judge}")
    metrics = summary.metrics
    _add_metrics(table, {k: v for k, v in metrics.items() if k not in CORRECTED})
    if summary.style_control:
        _add_style_control(table, summary.style_control, metrics)
    per_judge = summary.per_judge
    judges = [j for j in per_judge if j != AGREEMENT_KEY and isinstance(per_judge[j], dict)]
    if judges:
        table.add_section()
        for judge in judges:
            _add_metrics(table, per_judge[judge].get("metrics"), f" [{judge}]")
        for pair in per_judge.get(AGREEMENT_KEY) or []:
            table.add_row(
                escape("Agreement " + " vs ".join(pair["judges"])),
                format_value("agreement", pair.get("agreement")),
                "—",
                format_count(pair.get("n")),
            )
    if summary.simulation:
        table.add_section()
        _add_metrics(table, summary.simulation, " (simulated)")
    table.add_section()
    n_failed = summary.n_failed
    table.add_row("items", format_count(summary.n_items), "", "")
    table.add_row("judged", format_count(summary.n_ok), "", "")
    table.add_row("failed", format_count(n_failed), "", "", style="red" if n_failed else None)
    table.add_row("evaluator", fingerprint(summary)[0], "", "")
    check = summary.judge_check
    if check is not None:  # its own calls, its own cost: apart from the data's
        ci = check.ci95
        table.add_row(
            "judge check agreement",
            format_value("agreement", check.agreement),
            f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "",
            format_count(check.n),
        )
        cost = check.cost_usd
        table.add_row("judge check cost", "unknown" if cost is None else f"${cost:,.4f}", "", "")
    for line, varies in served_lines(summary):
        if varies:  # a change behind the same name, within this run
            table.add_row(escape(f"served, varies: {line}"), "", "", "", style="yellow")
    _add_cost(table, summary.cost, summary.cost_usd)
    return table


def cost_rows(cost: Cost | None, cost_usd: float | None) -> list[tuple[str, str, str]]:
    """Label, USD and where its prices came from, for each role and the whole command;
    an unknown price reads "unknown", never $0. A summary from before costs by role
    gives its one `cost_usd`, when priced."""
    if cost is None:
        return [] if cost_usd is None else [("cost", _usd(cost_usd), "")]
    rows = [(f"cost · {role}", _usd(part.usd), part.source) for role, part in cost.roles.items()]
    note = "no price for " + ", ".join(cost.unpriced) if cost.unpriced else ""
    rows.append(("cost · total", _usd(cost.total_usd), note))
    budget = cost.budget
    if budget is not None:
        got = f"{budget.done} of {budget.total} done"
        state = f"reached: stopped, {got}" if budget.reached else f"not reached, {got}"
        rows.append(("budget", _usd(budget.max_usd), state))
    return rows


def estimate_table(estimate: CostEstimate) -> Group:
    """`--dry-run`'s account: per role and model, the calls it would send, their tokens and
    the cost as a range (low: output at the store's mean reply; high: at the caps)."""
    table = Table(title=f"dry run of {estimate.command}: nothing was sent", title_justify="left")
    for column in ("role · model", "calls", "in store", "input tokens", "output cap", "cost"):
        table.add_column(column, justify="left" if column == "role · model" else "right")
    for r in estimate.roles:
        table.add_row(
            escape(f"{r.role} · {r.model}"),
            _span(r.calls),
            f"{r.answered_by_store:,}",
            _span(r.input_tokens) + ("" if r.exact else " ~"),
            _span(r.output_cap_tokens),
            "unknown" if r.cost_usd is None else _usd_span(r.cost_usd),
        )
    table.add_section()
    total = estimate.total_usd
    table.add_row("total", "", "", "", "", "unknown" if total is None else _usd_span(total))
    notes = estimate.notes + [f"no price for {u}" for u in estimate.unpriced]
    return Group(table, *(Text(f"note: {note}") for note in notes))


def _span(values: tuple[int, int]) -> str:
    low, high = values
    return f"{low:,}" if low == high else f"{low:,}-{high:,}"


def _usd_span(values: tuple[float, float]) -> str:
    low, high = values
    return _usd(low) if low == high else f"{_usd(low)} - {_usd(high)}"


def _add_cost(table: Table, cost: Cost | None, cost_usd: float | None) -> None:
    rows = cost_rows(cost, cost_usd)
    if rows:
        table.add_section()
    for label, usd, note in rows:
        table.add_row(escape(label), usd, escape(note), "")


def _usd(value: Any) -> str:
    return "unknown" if value is None else f"${value:,.4f}"


def calibration_table(calibration: dict[str, Any], title: str = "") -> Table:
    """Each human-calibrated (PPI++) metric beside the judge-only and human-only figures,
    with the number of human labels it is worth; then the labelled-not-judged count."""
    table = Table(
        title=escape(title or "human-calibrated (corrected by human labels, PPI++)"),
        title_justify="left",
        header_style="bold",
    )
    table.add_column("metric")
    for column in ("judge only", "humans only", "human-calibrated", "labels", "worth"):
        table.add_column(column, justify="right")
    for name, c in (calibration.get("calibrated") or {}).items():
        judge, human = c["judge_only"], c["human_only"]
        table.add_row(
            escape(metric_label(name)),
            _with_ci(name, judge),
            _with_ci(name, human),
            _with_ci(name, c),
            format_count(c["n_labels"]),
            f"{c['effective_labels']:,.0f}",
        )
    notes = [f"{calibration.get('n_labelled_not_judged', 0):,} labelled row(s) not judged"]
    notes += calibration.get("warnings") or []
    table.caption = escape("; ".join(notes))
    table.caption_justify = "left"
    return table


def _with_ci(name: str, m: dict[str, Any]) -> str:
    value = m.get("value")
    return f"{format_value(name, value)} {format_ci(name, m.get('ci95'), value)}"


def _add_style_control(
    table: Table, control: dict[str, Any], metrics: Mapping[str, Metric]
) -> None:
    """The raw preference beside its length- and style-controlled versions, and the
    sentence on how much of it length explains (as the table's caption)."""
    table.add_section()
    raw = control.get("raw_preference") or {}
    table.add_row(
        "Preference, raw (ties count half)",
        format_share(raw["value"]) if raw.get("value") is not None else "n/a",
        format_ci(CORRECTED[0], raw.get("ci95"), raw.get("value")),
        format_count(raw.get("n")),
    )
    _add_metrics(table, {k: metrics[k] for k in CORRECTED if k in metrics})
    table.caption = escape(control.get("sentence", ""))
    table.caption_justify = "left"


def _metric_table(title: str) -> Table:
    """An empty table of metric, value, 95% CI and n; the title is escaped (a judge called
    `[local]` must print as such, not as rich markup)."""
    table = Table(title=escape(title), title_justify="left", header_style="bold")
    table.add_column("metric")
    for column in ("value", "95% CI", "n"):
        table.add_column(column, justify="right")
    return table


def _add_metrics(
    table: Table, metrics: Mapping[str, Metric | dict[str, Any]] | None, suffix: str = ""
) -> None:
    """One row per metric: its label (with `suffix`), value, interval and n."""
    for name, m in (metrics or {}).items():
        value, ci95, n = _figures(m)
        table.add_row(
            escape(f"{metric_label(name)}{suffix}"),
            format_value(name, value),
            format_ci(name, ci95, value),
            format_count(n),
        )


def _figures(m: Metric | dict[str, Any]) -> tuple[Any, Any, Any]:
    """A metric's value, interval and n: a summary's typed metric, or one of the sections
    its format leaves untyped (`per_judge`) or of a produced summary, as written."""
    if isinstance(m, Metric):
        return m.value, m.ci95, m.n
    return m.get("value"), m.get("ci95"), m.get("n")
