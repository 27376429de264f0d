"""The page of `chatjudge realism`: each behaviour real beside simulated (their spread over
conversations, the paired difference and its claim), the discriminator's accuracy and its
commonest reasons, the metric gap, and one real and one simulated conversation of the same
goal side by side. Self-contained like a run's report; every text is escaped (jinja2's
autoescape), conversations included."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chatjudge.report.page import render_page

if TYPE_CHECKING:
    from chatjudge.formats.realism import Realism


def write_realism_page(
    path: Path,
    result: Realism,
    spreads: Mapping[str, Mapping[str, Sequence[float]]],
    example: Mapping[str, Any] | None,
) -> Path:
    """`spreads`: per behaviour, `real` and `simulated` per-conversation values; `example`:
    `{"goal", "real", "simulated"}`, the two conversations as `{"role", "content"}` lists."""
    rows = [_measure_row(name, m, spreads.get(name, {})) for name, m in result.behaviours.items()]
    gaps = [_measure_row(name, m, {}) for name, m in result.metric_gaps.items()]
    context = {
        "result": result,
        "rows": rows,
        "gaps": gaps,
        "discriminator": result.discriminator,
        "example": example,
    }
    return render_page("realism.html.j2", context, path)


def _measure_row(name: str, m: Any, spread: Mapping[str, Sequence[float]]) -> dict[str, Any]:
    return {
        "name": name,
        "real": figure(m.real),
        "simulated": figure(m.simulated),
        "difference": figure(m.difference, signed=True),
        "p": f"{m.p:.3g}",
        "p_holm": f"{m.p_holm:.3g}",
        "claimed": m.claimed,
        "n": m.n_goals,
        "real_spread": _spread(spread.get("real", ())),
        "simulated_spread": _spread(spread.get("simulated", ())),
    }


def figure(f: Any, *, signed: bool = False) -> str:
    value = f"{f.value:+.3g}" if signed else f"{f.value:.3g}"
    if f.ci95 is None:
        return f"{value} (no interval: {f.too_few})" if f.too_few else value
    lo, hi = f.ci95
    return f"{value} [{lo:+.3g}, {hi:+.3g}]" if signed else f"{value} [{lo:.3g}, {hi:.3g}]"


def _spread(values: Sequence[float]) -> str:
    """Quartiles over conversations: min · 25% · median · 75% · max (n)."""
    if not values:
        return "—"
    if len(values) == 1:
        return f"{values[0]:.3g} (n=1)"
    q1, q2, q3 = statistics.quantiles(values, n=4)
    points = (min(values), q1, q2, q3, max(values))
    return " · ".join(f"{v:.3g}" for v in points) + f" (n={len(values)})"
