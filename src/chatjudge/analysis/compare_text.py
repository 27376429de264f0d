"""`chatjudge compare` as people read it in a terminal: the ratings table and, with style
control, the sentence saying the controlled ratings are corrected ones."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from chatjudge.formats.provenance import SHORT, UNKNOWN
from chatjudge.stats.intervals import TOO_FEW


def ratings_table(result: dict[str, Any]) -> Table:
    """Rating, 95% interval and battles won, tied and lost per model (`compare.json`'s
    content); with style control, the controlled rating and interval beside them."""
    controlled = {r["model"]: r for r in result.get("controlled_ratings") or []}
    columns = ["model", "rating", "95% CI", "won", "tied", "lost"]
    if controlled:
        columns += ["controlled", "95% CI "]
    table = Table(
        *columns,
        title=f"{result['protocol']}: {result['n_items']} items, {result['n_battles']} battles",
    )
    for r in result["ratings"]:
        c = result["outcomes"][r["model"]]
        cells = [
            r["model"],
            f"{r['rating']:.0f}",
            _rating_ci(r["ci95"], r.get("too_few")),
            str(c["won"]),
            str(c["tied"]),
            str(c["lost"]),
        ]
        if controlled:
            k = controlled[r["model"]]
            cells += [f"{k['rating']:.0f}", _rating_ci(k["ci95"], k.get("too_few"))]
        table.add_row(*cells)
    return table


def control_note(result: dict[str, Any]) -> str | None:
    """What the controlled ratings are and the style coefficients (None without control)."""
    if result.get("style_coefficients") is None:
        return None
    control = result.get("control")
    coefficients = ", ".join(f"{k} {v:+.3f}" for k, v in result["style_coefficients"].items())
    return (
        f"controlled: {control}-controlled ratings (corrected, not the judge's raw result), "
        f"the responses' {control} differences held equal; coefficients per SD: "
        f"{coefficients or 'none (constant)'}"
    )


def evaluator_note(result: dict[str, Any]) -> str:
    """Each run's evaluator fingerprint (12 characters, "—" for an older run), and whether
    the runs were judged differently (runs without one are never counted as changed)."""
    evaluators: dict[str, str | None] = result.get("evaluators") or {}
    shown = ", ".join(f"{name} {(fp or UNKNOWN)[:SHORT]}" for name, fp in evaluators.items())
    known = {fp for fp in evaluators.values() if fp is not None}
    differ = " (judged differently: compare with care)" if len(known) > 1 else ""
    return f"evaluator fingerprints: {shown}{differ}"


def _rating_ci(ci: list[float] | None, too_few: str | None = None) -> str:
    """An interval, or "too few to say" where none is valid at the model's battles."""
    if ci:
        return f"[{ci[0]:.0f}, {ci[1]:.0f}]"
    return TOO_FEW if too_few else "-"
