"""The gate's section of a run's report: the difference and its interval drawn against the
margin, and the per-slice forest plot (from the run directory's `gate.json`).

The chart is drawn like `charts.interval_chart` (a dot, a whisker, the value written
beside it) with two reference lines the reader decides by: 0 and −margin.
"""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup

from chatjudge.formats.analyses import Gate
from chatjudge.report.charts import (
    CHART_W,
    ROW_H,
    Interval,
    Section,
    closing_title,
    text_width,
)
from chatjudge.report.format import TOO_FEW
from chatjudge.report.gate_text import corrections, small_sample
from chatjudge.report.provenance import gate_lines
from chatjudge.stats.decision import Outcome

TONE: dict[Outcome, str] = {"pass": "win", "fail": "loss", "inconclusive": "tie"}
REF_COLOR = {"zero": "#8a94a6", "margin": "#c4533f"}


def gate_sections(gate: Gate) -> list[Section]:
    """The gate's difference (always) and its slices (with `--by`)."""
    bound = "0" if gate.require == "better" or not gate.margin else f"−{gate.margin:g}"
    main = Interval(
        label=f"{gate.decided_on or gate.metric}: candidate − baseline",
        value=gate.difference.value,
        ci95=gate.difference.ci95,
        tone=TONE[gate.outcome],
        key="gate",
        note=f"{gate.outcome}, n = {gate.n_pairs:,}",
    )
    rows = [main]
    if gate.raw_difference is not None:  # decided on a corrected rate: the raw one beside it
        raw = gate.raw_difference
        rows.append(
            Interval(label="raw preference: candidate − baseline", value=raw.value,
                     ci95=raw.ci95, tone="primary", key="gate-raw", note="not corrected")
        )  # fmt: skip
    sections = [
        Section(
            key="gate",
            title=f"Gate: {gate.outcome}",
            note=f"Paired difference with its 95% interval ({gate.method}); "
            f"{gate.require} passes when the whole interval lies above {bound}. "
            f"Minimum detectable effect at 80% power: {gate.mde80:.4f}. "
            + " ".join(
                ([small_sample(gate)] if gate.small_sample is not None else [])
                + corrections(gate)
                + gate_lines(gate)
            ),
            chart=forest(rows, gate.margin, key="gate"),
        )
    ]
    if gate.slices:
        rows = [
            Interval(
                label=f"{gate.by} = {s.value}",
                value=s.difference.value,
                ci95=s.difference.ci95 or None,
                tone="loss" if s.below_margin else "primary",
                key=f"slice:{s.value}",
                note=f"n = {s.n_pairs:,}"
                + ("" if s.counts else " (< 30)")
                + ("" if s.difference.ci95 else f", {TOO_FEW}"),
            )
            for s in gate.slices
        ]
        sections.append(
            Section(
                key="gate-slices",
                title=f"Gate by {gate.by}",
                note=f"Each slice's difference, worst first, with Bonferroni-adjusted "
                f"intervals ({100 * gate.slices[0].level:.2f}%); a slice under 30 rows "
                "never fails the gate.",
                chart=forest(rows, gate.margin, key="gate-slices"),
            )
        )
    return sections


def forest(rows: Sequence[Interval], margin: float, *, key: str) -> Markup:
    """Dots with interval whiskers on one axis, with reference lines at 0 and −margin."""
    values = [v for r in rows for v in [r.value, *(r.ci95 or [])] if v is not None]
    lo, hi = min([*values, 0.0, -margin]), max([*values, 0.0])
    pad = (hi - lo) * 0.08 or 0.1
    lo, hi = lo - pad, hi + pad
    label_w = min(max(text_width(r.label) for r in rows) + 16, 240)
    texts = [_text(r) for r in rows]
    right = max(text_width(t) for t in texts) * 1.15 + 16  # values are bold: wider
    plot_w = max(CHART_W - label_w - right, 260.0)
    top = 22.0
    width, height = label_w + plot_w + right, top + ROW_H * len(rows) + 44
    base_y = top + ROW_H * len(rows)

    def sx(v: float) -> float:
        return label_w + plot_w * (v - lo) / (hi - lo)

    parts = [
        Markup(
            '<svg class="chart" viewBox="0 0 {w:.0f} {h:.0f}" style="max-width:{w:.0f}px" '
            'role="img" data-chart="{key}"><title>difference, candidate − baseline</title>'
        ).format(w=width, h=height, key=key)
    ]
    refs = [("zero", 0.0, "0", "start", 3)]  # labels on either side, so they never overlap
    if margin > 0:
        refs.append(("margin", -margin, f"margin −{margin:g}", "end", -3))
    for name, at, label, anchor, dx in refs:
        parts.append(
            Markup(
                '<g class="ref" data-ref="{name}" data-at="{at}">'
                '<line x1="{x:.1f}" y1="{t}" x2="{x:.1f}" y2="{b}" stroke="{c}" '
                'stroke-dasharray="4 3" stroke-width="1.5"/>'
                '<text class="tick" x="{tx:.1f}" y="{ty}" text-anchor="{anchor}" fill="{c}">'
                "{label}</text></g>"
            ).format(
                name=name,
                at=at,
                x=sx(at),
                t=top,
                b=base_y,
                c=REF_COLOR[name],
                tx=sx(at) + dx,
                ty=top - 6,
                anchor=anchor,
                label=label,
            )
        )
    for i, (r, text) in enumerate(zip(rows, texts, strict=True)):
        cy = top + ROW_H * i + ROW_H / 2
        parts.append(
            Markup(
                '<g class="interval-row" data-key="{key}" data-value="{v}" data-lo="{lo}" '
                'data-hi="{hi}"><text class="row-label" x="{x}" y="{y:.1f}" text-anchor="end">'
                "{label}</text>"
            ).format(
                key=r.key,
                v=_attr(r.value),
                lo=_attr(r.ci95[0] if r.ci95 else None),
                hi=_attr(r.ci95[1] if r.ci95 else None),
                x=label_w - 10,
                y=cy + 4,
                label=r.label,
            )
        )
        if r.ci95:
            a, b = sx(r.ci95[0]), sx(r.ci95[1])
            parts.append(
                Markup(
                    '<path class="whisker" d="M{a:.1f} {y:.1f}H{b:.1f}'
                    'M{a:.1f} {y1:.1f}V{y2:.1f}M{b:.1f} {y1:.1f}V{y2:.1f}"/>'
                ).format(a=a, b=b, y=cy, y1=cy - 6, y2=cy + 6)
            )
        if r.value is not None:
            parts.append(
                Markup('<circle class="dot tone-{t}" cx="{x:.1f}" cy="{y:.1f}" r="6"/>').format(
                    t=r.tone, x=sx(r.value), y=cy
                )
            )
        parts.append(  # in a column right of the plot: clear of the reference lines
            Markup('<text class="bar-value" x="{x:.1f}" y="{y:.1f}">{t}</text></g>').format(
                x=label_w + plot_w + 8, y=cy + 4, t=text
            )
        )
    parts.append(
        closing_title(label_w + plot_w / 2, height - 6, "difference, candidate − baseline")
    )
    return Markup("").join(parts)


def _text(r: Interval) -> str:
    if r.value is None:
        return "no data"
    ci = f"  [{r.ci95[0]:+.3f}, {r.ci95[1]:+.3f}]" if r.ci95 else ""
    return f"{r.value:+.3f}{ci}" + (f"  {r.note}" if r.note else "")


def _attr(value: float | None) -> str:
    return "" if value is None else repr(float(value))
