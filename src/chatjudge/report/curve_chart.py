"""The pass^k and pass@k curves: shares against k, each value with its interval.

Drawn by hand like the other charts (`chatjudge.report.charts`): the series are named
at their last point rather than in a legend, and each dot carries its value and
interval as data attributes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup

from chatjudge.report.charts import Interval, attr_number, closing_title, text_width


@dataclass(frozen=True, slots=True)
class Series:
    """One line of a curve chart: a share at each k, with its 95% intervals."""

    label: str
    points: Sequence[Interval]  # label: the k, written under the axis
    tone: str = "primary"
    key: str = ""


def curve_chart(series: Sequence[Series], *, x_title: str, key: str = "") -> Markup:
    """Shares (0-100%) against k = 1, 2, ...: a line per series through its values, a
    whisker over each value's interval, and the series named at its last point."""
    ks = max((len(s.points) for s in series), default=1)
    left, top, plot_w, plot_h = 48.0, 12.0, max(60.0 * ks, 240.0), 180.0
    right = max((text_width(s.label) for s in series), default=40) + 24
    width, height = left + plot_w + right, top + plot_h + 50

    def sx(i: int) -> float:
        return left + plot_w * (i + 0.5) / ks

    def sy(v: float) -> float:
        return top + plot_h * (1 - v)

    parts = [
        Markup(
            '<svg class="chart" viewBox="0 0 {w:.0f} {h:.0f}" style="max-width:{w:.0f}px" '
            'role="img" data-chart="{key}"><title>{t}</title>'
        ).format(w=width, h=height, key=key, t=x_title)
    ]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(
            Markup(
                '<line class="grid" x1="{l}" y1="{y:.1f}" x2="{r:.1f}" y2="{y:.1f}"/>'
                '<text class="tick" x="{tx}" y="{ty:.1f}" text-anchor="end">{label}</text>'
            ).format(
                l=left,
                r=left + plot_w,
                y=sy(tick),
                tx=left - 6,
                ty=sy(tick) + 4,
                label=f"{tick * 100:.0f}%",
            )  # fmt: skip
        )
    for i in range(ks):
        label = series[0].points[i].label if i < len(series[0].points) else str(i + 1)
        parts.append(
            Markup(
                '<text class="tick" x="{x:.1f}" y="{y:.1f}" text-anchor="middle">{k}</text>'
            ).format(x=sx(i), y=top + plot_h + 16, k=label)
        )
    for s in series:
        shown = [(i, p) for i, p in enumerate(s.points) if p.value is not None]
        path = " ".join(f"{'M' if n == 0 else 'L'}{sx(i):.1f} {sy(p.value or 0):.1f}"
                        for n, (i, p) in enumerate(shown))  # fmt: skip
        parts.append(
            Markup(
                '<g class="series" data-key="{key}"><path class="curve curve-{tone}" d="{d}"/>'
            ).format(key=s.key, tone=s.tone, d=path)
        )
        for i, p in shown:
            if p.ci95:
                a, b = sy(p.ci95[0]), sy(p.ci95[1])
                parts.append(
                    Markup(
                        '<path class="whisker" d="M{x:.1f} {a:.1f}V{b:.1f}'
                        'M{x0:.1f} {a:.1f}H{x1:.1f}M{x0:.1f} {b:.1f}H{x1:.1f}"/>'
                    ).format(x=sx(i), a=a, b=b, x0=sx(i) - 4, x1=sx(i) + 4)
                )
            parts.append(
                Markup(
                    '<circle class="dot tone-{tone}" cx="{x:.1f}" cy="{y:.1f}" r="5" '
                    'data-key="{key}" data-value="{v}" data-lo="{lo}" data-hi="{hi}">'
                    "<title>{t}</title></circle>"
                ).format(
                    tone=s.tone,
                    x=sx(i),
                    y=sy(p.value or 0),
                    key=p.key,
                    v=attr_number(p.value),
                    lo=attr_number(p.ci95[0] if p.ci95 else None),
                    hi=attr_number(p.ci95[1] if p.ci95 else None),
                    t=p.note,
                )  # fmt: skip
            )
        if shown:
            i, last = shown[-1]
            parts.append(
                Markup('<text class="row-label" x="{x:.1f}" y="{y:.1f}">{label}</text>').format(
                    x=sx(i) + 10, y=sy(last.value or 0) + 4, label=s.label
                )
            )
        parts.append(Markup("</g>"))
    parts.append(closing_title(left + plot_w / 2, height - 6, x_title))
    return Markup("").join(parts)
