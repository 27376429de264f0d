"""The comparison page's win-rate matrix: one shaded cell per pair of models.

Drawn by hand like the other charts (`chatjudge.report.charts`), with each cell's
value written in it, so the colours never have to be read against a scale.
"""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup

from chatjudge.report.charts import Fmt, attr_number, fit_text, text_width


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
                x=left + cell * j + cell / 2 - 4, y=top - 8, full=name, label=fit_text(name, slant)
            )
        )
    for i, name in enumerate(labels):
        y = top + cell * i
        parts.append(
            Markup(
                '<text class="row-label" x="{x:.1f}" y="{y:.1f}" text-anchor="end">'
                "<title>{full}</title>{label}</text>"
            ).format(x=left - 8, y=y + cell / 2 + 4, full=name, label=fit_text(name, label_w - 16))
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
                    v=attr_number(value),
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


def _heat(value: float | None) -> str:
    """Diverging fill: red below 0.5, green above, pale grey at an even split."""
    if value is None:
        return "#eef0f2"
    t = max(-1.0, min(1.0, (value - 0.5) * 2))
    base = (238, 240, 242)
    end = (64, 145, 108) if t >= 0 else (196, 84, 72)
    r, g, b = (round(c0 + (c1 - c0) * abs(t)) for c0, c1 in zip(base, end, strict=True))
    return f"#{r:02x}{g:02x}{b:02x}"
