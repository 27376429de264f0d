"""Hand-written SVG charts, drawn in Python so the page needs no chart library.

Every chart labels itself: values are written on the bars, axes carry titles and
rows are named directly, so nobody has to hunt for a legend. Text goes through
`Markup.format`, which escapes it (judge and model names are user input).

Here: what every chart shares (the rows it is given, text widths) and the two charts
of one value per row, count bars and intervals. The pass^k curves (`curve_chart`)
and the comparison page's win-rate matrix (`heatmap`) have modules of their own.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from markupsafe import Markup

CHAR_W = 7.8  # average glyph width of 13px UI text (DejaVu Sans is wide), for layout
_NARROW = frozenset("il.,:;'|!()[]{} ")
_WIDE = frozenset("mwMW@%<>=&_~")
ROW_H = 34
CHART_W = 600.0  # interval charts are drawn at about the width of a chart card
Fmt = Callable[[float], str]


@dataclass(frozen=True, slots=True)
class Section:
    """One titled chart on the page, with a sentence saying how to read it."""

    key: str
    title: str
    note: str
    chart: Markup


@dataclass(frozen=True, slots=True)
class Bar:
    """One bar of a count chart."""

    label: str
    count: int
    tone: str = "primary"


@dataclass(frozen=True, slots=True)
class Interval:
    """One row of an interval chart: a value with an optional 95% interval."""

    label: str
    value: float | None
    ci95: Sequence[float] | None = None
    tone: str = "primary"
    key: str = ""  # data-key, so tests and scripts can find the row
    note: str = ""  # written after the value, e.g. "n = 12"


def text_width(text: str) -> float:
    """Estimated width of 13px UI text: narrow, wide and average glyphs told apart."""
    return sum(4.5 if c in _NARROW else 11.0 if c in _WIDE or c.isupper() else CHAR_W for c in text)


def fit_text(text: str, width: float) -> str:
    """`text`, cut with an ellipsis where needed to fit `width`."""
    if text_width(text) <= width:
        return text
    while text and text_width(text + "…") > width:
        text = text[:-1]
    return text + "…"


def count_bars(
    bars: Sequence[Bar], *, x_title: str, y_title: str = "items", key: str = ""
) -> Markup:
    """Vertical bars of item counts, each with its count and share written above it."""
    total = sum(b.count for b in bars) or 1
    slot = max(72.0, max((text_width(b.label) + 16 for b in bars), default=72.0))
    left, top, plot_h = 44.0, 30.0, 150.0
    span = max(slot * len(bars), text_width(x_title) + 8)  # room for the axis title, whole
    width = left + span + 12
    height = top + plot_h + 58
    peak = max((b.count for b in bars), default=0) or 1
    parts = [
        Markup(
            '<svg class="chart" viewBox="0 0 {w:.0f} {h:.0f}" style="max-width:{w:.0f}px" '
            'role="img" data-chart="{key}"><title>{title}</title>'
        ).format(w=width, h=height, key=key, title=f"{y_title} by {x_title}"),
        Markup('<line class="axis" x1="{x}" y1="{y0}" x2="{x2}" y2="{y0}"/>').format(
            x=left, y0=top + plot_h, x2=width - 8
        ),
        Markup(
            '<text class="axis-title" transform="translate(14 {y}) rotate(-90)" '
            'text-anchor="middle">{t}</text>'
        ).format(y=top + plot_h / 2, t=y_title),
    ]
    for i, b in enumerate(bars):
        x = left + i * slot + slot * 0.18
        bw = slot * 0.64
        h = plot_h * b.count / peak
        y = top + plot_h - h
        parts.append(
            Markup(
                '<g class="bar-group" data-label="{label}" data-count="{count}">'
                '<rect class="bar tone-{tone}" x="{x:.1f}" y="{y:.1f}" width="{bw:.1f}" '
                'height="{h:.1f}" rx="3"/>'
                '<text class="bar-value" x="{cx:.1f}" y="{ty:.1f}" text-anchor="middle">'
                "{count_s}</text>"
                '<text class="bar-share" x="{cx:.1f}" y="{sy:.1f}" text-anchor="middle">'
                "{share}</text>"
                '<text class="tick" x="{cx:.1f}" y="{ly:.1f}" text-anchor="middle">{label}</text>'
                "</g>"
            ).format(
                label=b.label,
                count=b.count,
                tone=b.tone,
                x=x,
                y=y,
                bw=bw,
                h=max(h, 0.5),
                cx=x + bw / 2,
                ty=y - 16,
                sy=y - 4,
                count_s=f"{b.count:,}",
                share=f"{100 * b.count / total:.0f}%",
                ly=top + plot_h + 18,
            )
        )
    parts.append(closing_title(left + span / 2, height - 10, x_title))
    return Markup("").join(parts)


def interval_chart(
    rows: Sequence[Interval],
    *,
    fmt: Fmt,
    x_title: str,
    domain: tuple[float, float] | None = None,
    bars: bool = True,
    key: str = "",
    tick_fmt: Fmt | None = None,
    size: float = CHART_W,
) -> Markup:
    """Horizontal rows: a bar (or a dot) at the value, a whisker over its 95% interval.

    `domain` fixes the axis (shares: 0 to 1); otherwise it spans the values and intervals.
    `size` is the width the chart is drawn for; the plot takes what labels and values leave.
    """
    lo, hi = domain or _span(rows)
    label_w = min(max((text_width(r.label) for r in rows), default=40) + 16, 240)
    texts = [_value_text(r, fmt) for r in rows]
    right = max((text_width(t) for t in texts), default=60) + 12
    plot_w = max(size - label_w - right, 260.0)
    left, top = label_w, 8.0
    width = left + plot_w + right
    height = top + ROW_H * len(rows) + 44

    def sx(v: float) -> float:
        return left + plot_w * (v - lo) / ((hi - lo) or 1.0)

    parts = [
        Markup(
            '<svg class="chart" viewBox="0 0 {w:.0f} {h:.0f}" style="max-width:{w:.0f}px" '
            'role="img" data-chart="{key}"><title>{t}</title>'
        ).format(w=width, h=height, key=key, t=x_title)
    ]
    base_y = top + ROW_H * len(rows)
    for tick in _ticks(lo, hi):
        parts.append(
            Markup(
                '<line class="grid" x1="{x:.1f}" y1="{t}" x2="{x:.1f}" y2="{b}"/>'
                '<text class="tick" x="{x:.1f}" y="{ty}" text-anchor="middle">{label}</text>'
            ).format(x=sx(tick), t=top, b=base_y, ty=base_y + 16, label=(tick_fmt or fmt)(tick))
        )
    for i, r in enumerate(rows):
        cy = top + ROW_H * i + ROW_H / 2
        parts.append(
            Markup(
                '<g class="interval-row" data-key="{key}" data-value="{v}" data-lo="{lo}" '
                'data-hi="{hi}"><text class="row-label" x="{x}" y="{y:.1f}" '
                'text-anchor="end"><title>{full}</title>{label}</text>'
            ).format(
                key=r.key,
                v=attr_number(r.value),
                lo=attr_number(r.ci95[0] if r.ci95 else None),
                hi=attr_number(r.ci95[1] if r.ci95 else None),
                x=left - 10,
                y=cy + 4,
                full=r.label,
                label=fit_text(r.label, label_w - 16),
            )
        )
        if r.value is not None:
            x0, xv = sx(max(lo, min(0.0, hi))), sx(r.value)
            if bars:
                parts.append(
                    Markup(
                        '<rect class="bar tone-{tone}" x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" '
                        'height="{h}" rx="3"/>'
                    ).format(tone=r.tone, x=min(x0, xv), y=cy - 9, w=max(abs(xv - x0), 1), h=18)
                )
            end = xv
            if r.ci95:
                a, b = sx(r.ci95[0]), sx(r.ci95[1])
                end = max(end, b)
                parts.append(
                    Markup(
                        '<path class="whisker" d="M{a:.1f} {y:.1f}H{b:.1f}'
                        'M{a:.1f} {y1:.1f}V{y2:.1f}M{b:.1f} {y1:.1f}V{y2:.1f}"/>'
                    ).format(a=a, b=b, y=cy, y1=cy - 6, y2=cy + 6)
                )
            if not bars:
                parts.append(
                    Markup(
                        '<circle class="dot tone-{tone}" cx="{x:.1f}" cy="{y:.1f}" r="6"/>'
                    ).format(tone=r.tone, x=xv, y=cy)
                )
            ci = f"  [{fmt(r.ci95[0])}, {fmt(r.ci95[1])}]" if r.ci95 else ""
            parts.append(
                Markup(
                    '<text class="bar-value" x="{x:.1f}" y="{y:.1f}">{t}'
                    '<tspan class="bar-ci">{ci}</tspan>'
                    '<tspan class="bar-note">{note}</tspan></text>'
                ).format(
                    x=end + 8,
                    y=cy + 4,
                    t=fmt(r.value),
                    ci=ci,
                    note=f"  {r.note}" if r.note else "",
                )
            )
        else:
            parts.append(
                Markup('<text class="bar-note" x="{x:.1f}" y="{y:.1f}">no data</text>').format(
                    x=left + 4, y=cy + 4
                )
            )
        parts.append(Markup("</g>"))
    parts.append(closing_title(left + plot_w / 2, height - 6, x_title))
    return Markup("").join(parts)


def _value_text(row: Interval, fmt: Fmt) -> str:
    if row.value is None:
        return "no data"
    text = fmt(row.value)
    if row.ci95:
        text += f"  [{fmt(row.ci95[0])}, {fmt(row.ci95[1])}]"
    return text + (f"  {row.note}" if row.note else "")


def closing_title(x: float, y: float, title: str) -> Markup:
    """A chart's x-axis title, centred on `x`, and the end of its `<svg>`."""
    return Markup(
        '<text class="axis-title" x="{x:.1f}" y="{y:.1f}" text-anchor="middle">{t}</text></svg>'
    ).format(x=x, y=y, t=title)


def attr_number(value: float | None) -> str:
    """A number as a `data-` attribute holds it: its repr, or empty for none."""
    return "" if value is None else repr(float(value))


def _span(rows: Sequence[Interval]) -> tuple[float, float]:
    values = [v for r in rows for v in ([r.value] + list(r.ci95 or [])) if v is not None]
    if not values:
        return 0.0, 1.0
    lo, hi = min(values), max(values)
    pad = (hi - lo) * 0.08 or abs(hi) * 0.1 or 1.0
    return lo - pad, hi + pad


def _ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick positions (1, 2 or 5 times a power of ten) inside [lo, hi]."""
    raw = (hi - lo) / count or 1.0
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    return [first + k * step for k in range(int((hi - first) / step + 1e-9) + 1)]
