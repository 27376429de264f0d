"""Hand-written SVG charts, drawn in Python so the page needs no chart library.

Every chart labels itself: values are written on the bars, axes carry titles and
rows are named directly, so nobody has to hunt for a legend. Text goes through
`Markup.format`, which escapes it (judge and model names are user input).
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


def _fit(text: str, width: float) -> str:
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
    width = left + slot * len(bars) + 12
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
    parts.append(
        Markup(
            '<text class="axis-title" x="{x:.1f}" y="{y:.1f}" text-anchor="middle">{t}</text>'
        ).format(x=left + slot * len(bars) / 2, y=height - 10, t=x_title)
    )
    parts.append(Markup("</svg>"))
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
                v=_attr(r.value),
                lo=_attr(r.ci95[0] if r.ci95 else None),
                hi=_attr(r.ci95[1] if r.ci95 else None),
                x=left - 10,
                y=cy + 4,
                full=r.label,
                label=_fit(r.label, label_w - 16),
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
    parts.append(
        Markup(
            '<text class="axis-title" x="{x:.1f}" y="{y:.1f}" text-anchor="middle">{t}</text>'
        ).format(x=left + plot_w / 2, y=height - 6, t=x_title)
    )
    parts.append(Markup("</svg>"))
    return Markup("").join(parts)


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
                    v=_attr(p.value),
                    lo=_attr(p.ci95[0] if p.ci95 else None),
                    hi=_attr(p.ci95[1] if p.ci95 else None),
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
    parts.append(
        Markup(
            '<text class="axis-title" x="{x:.1f}" y="{y:.1f}" text-anchor="middle">{t}</text>'
        ).format(x=left + plot_w / 2, y=height - 6, t=x_title)
    )
    parts.append(Markup("</svg>"))
    return Markup("").join(parts)


def heatmap(
    labels: Sequence[str],
    matrix: Sequence[Sequence[float | None]],
    *,
    fmt: Fmt,
    title: str,
    counts: Sequence[Sequence[int | None]] | None = None,
) -> Markup:
    """A square matrix, cells shaded from red (0) through grey (0.5) to green (1), values written.

    Rows and columns share `labels`: row names on the left, column names slanted on top.
    """
    cell, n = 72.0, len(labels)
    label_w = min(max((text_width(s) for s in labels), default=40) + 16, 220)
    slant = min(max((text_width(s) for s in labels), default=30), 170.0)  # column label length
    left, top = label_w, 30 + slant * 0.57  # sin 35°
    width = max(left + cell * n + slant * 0.82, left + text_width(title)) + 10  # cos 35°
    height = top + cell * n + 8
    parts = [
        Markup(
            '<svg class="chart heatmap" viewBox="0 0 {w:.0f} {h:.0f}" style="max-width:{w:.0f}px" '
            'role="img" data-chart="win-rates"><title>{t}</title>'
            '<text class="axis-title" x="{x:.1f}" y="14">{t}</text>'
        ).format(w=width, h=height, t=title, x=left)
    ]
    for j, name in enumerate(labels):
        parts.append(
            Markup(
                '<text class="tick" transform="translate({x:.1f} {y:.1f}) rotate(-35)">'
                "<title>{full}</title>{label}</text>"
            ).format(
                x=left + cell * j + cell / 2 - 4, y=top - 8, full=name, label=_fit(name, slant)
            )
        )
    for i, name in enumerate(labels):
        y = top + cell * i
        parts.append(
            Markup(
                '<text class="row-label" x="{x:.1f}" y="{y:.1f}" text-anchor="end">'
                "<title>{full}</title>{label}</text>"
            ).format(x=left - 8, y=y + cell / 2 + 4, full=name, label=_fit(name, label_w - 16))
        )
        for j, value in enumerate(matrix[i]):
            x = left + cell * j
            n_ij = counts[i][j] if counts else None
            parts.append(
                Markup(
                    '<g class="cell" data-row="{row}" data-col="{col}" data-value="{v}">'
                    '<rect x="{x:.1f}" y="{y:.1f}" width="{c:.0f}" height="{c:.0f}" '
                    'fill="{fill}" class="heat"/>'
                    '<text class="cell-value" x="{cx:.1f}" y="{cy:.1f}" text-anchor="middle">'
                    "{text}</text>{n}</g>"
                ).format(
                    row=name,
                    col=labels[j],
                    v=_attr(value),
                    x=x + 1,
                    y=y + 1,
                    c=cell - 2,
                    fill=_heat(value),
                    cx=x + cell / 2,
                    cy=y + cell / 2 + (0 if n_ij else 5),
                    text="—" if value is None else fmt(value),
                    n=Markup(
                        '<text class="cell-note" x="{cx:.1f}" y="{cy:.1f}" '
                        'text-anchor="middle">n={n}</text>'
                    ).format(cx=x + cell / 2, cy=y + cell / 2 + 16, n=n_ij)
                    if n_ij
                    else "",
                )
            )
    parts.append(Markup("</svg>"))
    return Markup("").join(parts)


def _value_text(row: Interval, fmt: Fmt) -> str:
    if row.value is None:
        return "no data"
    text = fmt(row.value)
    if row.ci95:
        text += f"  [{fmt(row.ci95[0])}, {fmt(row.ci95[1])}]"
    return text + (f"  {row.note}" if row.note else "")


def _attr(value: float | None) -> str:
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


def _heat(value: float | None) -> str:
    """Diverging fill: red below 0.5, green above, pale grey at an even split."""
    if value is None:
        return "#eef0f2"
    t = max(-1.0, min(1.0, (value - 0.5) * 2))
    base = (238, 240, 242)
    end = (64, 145, 108) if t >= 0 else (196, 84, 72)
    r, g, b = (round(c0 + (c1 - c0) * abs(t)) for c0, c1 in zip(base, end, strict=True))
    return f"#{r:02x}{g:02x}{b:02x}"
