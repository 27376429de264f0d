"""The gate's outcome as people read it: the terminal table, the sentences, and the Markdown
for a pull request comment or `$GITHUB_STEP_SUMMARY`, all from the same parts."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.table import Table

from chatjudge.formats.analyses import Gate, GateSlice, counts_text
from chatjudge.report.format import TOO_FEW
from chatjudge.report.provenance import gate_lines

ICON = {"pass": "✅ pass", "fail": "❌ fail", "inconclusive": "⚠️ inconclusive"}


def fmt(value: float) -> str:
    return f"{value:+.4f}"


def interval(ci: list[float]) -> str:
    return f"[{ci[0]:+.4f}, {ci[1]:+.4f}]" if ci else "–"


def rule(g: Gate) -> str:
    """The decision rule, in words."""
    if g.require == "better":
        return "better: pass if the 95% interval is above 0, fail if below"
    bound = f"−{g.margin:g}" if g.margin else "0"
    return f"not worse than {bound}: pass if the 95% interval is above {bound}"


def notes(g: Gate) -> list[str]:
    """The sentences below the table: what to do next, judge noise, peeking."""
    lines = [f"Outcome: {g.outcome} ({g.reason})."]
    lines.append(
        f"Minimum detectable effect at 80% power with these rows: ±{g.mde80:.4f} "
        f"(standard error {g.se:.4f}, {g.method}){_out_of_reach(g)}."
    )
    if g.decided_on is not None:
        lines.append(
            f"Decided on {g.decided_on}, the mean of each row's own ratio: {g.metric} is a "
            "ratio over all rows, and nothing bounds one row's share of it, so no interval "
            "of it is valid on a small sample; a row's own ratio differs by at most 1."
        )
    if g.small_sample is not None:
        lines.append(small_sample(g))
    if g.outcome == "inconclusive" and g.sequential is None:
        if g.rows_to_decide is not None:
            lines.append(
                f"At the observed difference and variance, about {g.rows_to_decide:,} rows in "
                "all would decide it (a projection: decided about half the time at that size). "
                "Adding rows and gating again is peeking (each look spends the error rate "
                "anew); use `chatjudge gate --sequential`, which is valid at every look."
            )
        else:
            lines.append(
                "No number of rows would decide it at the observed difference (it sits on the "
                "bound). Adding rows and gating again is peeking; use "
                "`chatjudge gate --sequential`, which is valid at every look."
            )
    lines += corrections(g)
    if g.noise is not None:
        n = g.noise
        lines.append(
            f"Judge noise is {100 * n.judge_share:.0f}% of the interval's width "
            f"({n.samples_per_row:g} measurements per row). At equal call cost: twice the "
            f"samples gives width {n.width_double_samples:.4f}, twice the rows "
            f"{n.width_double_rows:.4f} (now {n.width:.4f}); more samples alone cannot go "
            f"below {n.width_floor:.4f}."
        )
    if g.looks:
        lines.append(
            f"Earlier looks at these runs: {len(g.looks)} (on "
            + ", ".join(str(look.n_pairs) for look in g.looks)
            + " pairs): gating a grown run again is peeking."
        )
    if g.mismatches:
        lines.append("Accepted mismatches (--allow-mismatch): " + "; ".join(g.mismatches) + ".")
    lines += gate_lines(g)
    if g.sequential is not None:
        s = g.sequential
        saved = (
            f"{s.calls_saved:,} judge calls saved"
            if s.stopped == "decided"
            else f"{s.rows_total - s.rows_judged:,} rows left unjudged, no judge call saved"
        )
        lines.append(
            f"Sequential: {s.rows_judged:,} of {s.rows_total:,} rows judged in {s.batches} "
            f"batch(es) of {s.batch}, {s.stopped}; {saved}."
        )
        if s.max_cost_usd is not None:
            spent = "unknown" if s.cost_usd is None else f"${s.cost_usd:,.4f}"
            stop = (
                " It stopped there, before a decision: a larger budget resumes it."
                if s.stopped == "budget"
                else ""
            )
            lines.append(f"Budget: ${s.max_cost_usd:,.4f}, {spent} spent.{stop}")
    return lines


def small_sample(g: Gate) -> str:
    """What the rule for few units did, in words (gate.json's `small_sample`)."""
    s = g.small_sample
    assert s is not None
    if s.rule == "sign-test" and s.sign_p is not None:
        up, down = s.sign_p
        return (
            f"Small sample, {s.why}: a pass or a fail also needs the exact one-sided sign "
            f"test on the units that differ (p = {up:.4g} for better, {down:.4g} for worse; "
            "at most 0.025 decides), so the interval keeps 0 on a side it does not clear."
        )
    if s.rule == "betting" and s.betting_ci is not None and s.difference_range:
        low, high = s.difference_range
        return (
            f"Small sample, {s.why}: the interval is the wider of the method's own and a "
            f"betting interval valid at every sample size for differences within "
            f"[{low:g}, {high:g}] ({interval(s.betting_ci)})."
        )
    return (
        f"Small sample, {s.why}: no range is known for one row's difference of this metric, "
        "so no interval valid at this size exists and the gate is inconclusive until the "
        "sample is not small (30 units that differ, 3 distinct differences)."
    )


def figure(g: Gate) -> str:
    """The metric, and the figure decided on when that is another (`decided_on`)."""
    return g.metric if g.decided_on is None else f"{g.metric}, decided on {g.decided_on}"


def _out_of_reach(g: Gate) -> str:
    """When no sample of this size can pass at all (the rule for few units)."""
    s = g.small_sample
    if s is None or not s.difference_range:
        return ""
    boundary = 0.0 if g.require == "better" else -g.margin
    if g.mde80 < s.difference_range[1] - boundary:
        return ""
    return "; more than any difference can be: no outcome of this many rows can pass"


def corrections(g: Gate) -> list[str]:
    """The corrected figures, each named as corrected, beside the raw one."""
    lines = []
    if g.control is not None and g.raw_difference is not None:
        lines.append(
            f"Decided on the {g.control}-controlled preference (corrected for the judge's "
            f"taste for {'longer' if g.control == 'length' else 'longer, more formatted'} "
            f"answers); the raw difference was {fmt(g.raw_difference.value)} "
            f"{interval(g.raw_difference.ci95)}."
        )
    for name, m in g.corrected.items():
        if m.value is not None and m.ci95 is not None:
            label = name.replace("_", " ").replace("preference", "preference (corrected)")
            lines.append(f"{label}: {100 * m.value:.1f}% [{100 * m.ci95[0]:.1f}, "
                         f"{100 * m.ci95[1]:.1f}]")  # fmt: skip
    if g.style_control and g.style_control.get("sentence"):
        lines.append(str(g.style_control["sentence"]))
    for name, c in g.calibrated.items():
        lines.append(
            f"{name}, human-calibrated (PPI++, {c.n_labels} labels, worth "
            f"{c.effective_labels:.0f}): {c.value:.4f} {_ci4(c.ci95)} "
            f"(judge only {c.judge_only.value:.4f})"
        )
    return lines


def _ci4(ci: list[float] | None) -> str:
    return f"[{ci[0]:.4f}, {ci[1]:.4f}]" if ci else TOO_FEW


def slice_row(g: Gate, s: GateSlice) -> list[str]:
    flag = "regressed" if s.below_margin else "ok"
    if s.below_margin and not s.counts:
        flag = "below (under 30 rows: does not fail)"
    return [
        f"{g.by}={s.value}",
        fmt(s.difference.value),
        interval(s.difference.ci95) if s.difference.ci95 else TOO_FEW,  # one unit: none
        f"{100 * s.level:.2f}%",
        str(s.n_pairs),
        flag,
    ]


def table(g: Gate) -> RenderableType:
    """The difference, its interval, the margin and the outcome; then the slices, worst
    first, when the gate has them."""
    style = {"pass": "bold green", "fail": "bold red", "inconclusive": "bold yellow"}
    main = Table(
        "Δ",
        "95% CI",
        "margin",
        "outcome",
        "MDE 80%",
        "n pairs",
        title=f"gate: {figure(g)} (candidate − baseline)",
        caption=counts_text(g.counts),
    )
    main.add_row(
        fmt(g.difference.value),
        interval(g.difference.ci95),
        f"{g.margin:g} ({g.require})",
        f"[{style[g.outcome]}]{g.outcome}[/]",
        f"{g.mde80:.4f}",
        f"{g.n_pairs} ({g.n_units} units)",
    )
    if not g.slices:
        return main
    slices = Table("slice", "Δ", "interval", "level", "n pairs", "", title="slices, worst first")
    for s in g.slices:
        slices.add_row(*(escape(c) for c in slice_row(g, s)))
    return Group(main, slices)


def markdown(g: Gate) -> str:
    """A compact Markdown summary of the gate."""
    runs = " vs ".join(f"`{p}`" for p in g.runs.values())
    lines = [
        f"### chatjudge gate: {ICON[g.outcome]}",
        "",
        f"{figure(g)}, {rule(g)}. Runs: {runs}.",
        "",
        "| Δ | 95% CI | margin | outcome | MDE (80%) | pairs | unpaired / failed |",
        "|---|---|---|---|---|---|---|",
        "| "
        + " | ".join(
            [
                fmt(g.difference.value),
                interval(g.difference.ci95),
                f"{g.margin:g} ({g.require})",
                g.outcome,
                f"{g.mde80:.4f}",
                f"{g.n_pairs} ({g.n_units} units)",
                _short_counts(g),
            ]
        )
        + " |",
    ]
    if g.slices:
        lines += [
            "",
            f"Slices by `{g.by}`, worst first (Bonferroni-adjusted intervals):",
            "",
            "| slice | Δ | interval | level | pairs | |",
            "|---|---|---|---|---|---|",
        ]
        lines += ["| " + " | ".join(slice_row(g, s)) + " |" for s in g.slices]
    lines += ["", *(f"- {line}" for line in notes(g)[1:])]
    return "\n".join(lines) + "\n"


def _short_counts(g: Gate) -> str:
    return ", ".join(
        f"{role} {c.get('unpaired', 0)} / {c.get('failed', 0)}" for role, c in g.counts.items()
    )
