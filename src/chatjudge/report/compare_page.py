"""The comparison page of `chatjudge compare`: ratings with their intervals and the
matrix of pairwise win rates, in one self-contained file like a run's report."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from chatjudge.report.charts import Interval, Section, interval_chart
from chatjudge.report.format import format_ci, format_count, format_share, format_value
from chatjudge.report.heatmap import heatmap
from chatjudge.report.page import render_page


def write_compare_report(out_path: Path, comparison: dict[str, Any]) -> Path:
    """Write the comparison page of `chatjudge compare` to `out_path`; return it.

    `comparison` holds:
      - `models`: list of model names, the order of the matrices below;
      - `ratings`: `[{"model": str, "rating": float, "ci95": [lo, hi] | None,
        "n_battles": int (optional)}]`, Bradley-Terry ratings on any scale (Elo-like from
        `chatjudge.stats.bradley_terry(...).to_dict()["ratings"]`) with 95% intervals;
      - `win_rates`: `win_rates[i][j]`, the share of battles between `models[i]` and
        `models[j]` won by `models[i]`, ties counted as half; `None` or NaN on the diagonal
        and when the two never met (a numpy array from `win_rate_matrix` is fine);
      - `n_battles`: total number of battles (judged item pairs);
      - optional `battles`: `battles[i][j]`, battles between `models[i]` and `models[j]`;
      - optional `protocol`, `judge` (strings), `runs` (run directories compared),
        `created` (ISO time), `scale` (a sentence saying what a rating difference means).
    """
    out_path = Path(out_path)
    ratings = sorted(comparison["ratings"], key=lambda r: r["rating"], reverse=True)
    # The matrices follow `models`; the page shows them strongest first, like the ranking.
    models = [str(m) for m in comparison["models"]]
    rated = [str(r["model"]) for r in ratings]
    order = [models.index(m) for m in rated if m in models]
    order += [i for i in range(len(models)) if i not in order]
    fmt_rating = partial(format_value, "rating")
    rating_chart = interval_chart(
        [
            Interval(
                label=str(r["model"]),
                value=r["rating"],
                ci95=r.get("ci95"),
                key=str(r["model"]),
                note=_battles(r.get("n_battles")),
            )
            for r in ratings
        ],
        fmt=fmt_rating,
        x_title="Bradley-Terry rating",
        bars=False,
        key="ratings",
        size=900,
    )
    win_chart = heatmap(
        [models[i] for i in order],
        _reorder(comparison["win_rates"], order),
        fmt=lambda v: format_share(v, digits=0),
        title="How often the row model beat the column model",
        counts=_reorder(comparison["battles"], order) if comparison.get("battles") else None,
    )
    context = {
        "comparison": comparison,
        "ratings": [
            {
                **r,
                "text": fmt_rating(r["rating"]),
                "ci_text": format_ci("rating", r.get("ci95"), r["rating"]),
            }
            for r in ratings
        ],
        "sections": [
            Section(
                "ratings",
                "Ratings",
                "Bradley-Terry ratings with 95% bootstrap intervals; "
                "overlapping intervals mean the order is not settled.",
                rating_chart,
            ),
            Section(
                "win-rates",
                "Pairwise win rates",
                "Each cell: how often the row model beat "
                "the column model (ties count half), and the number of battles.",
                win_chart,
            ),
        ],
        "n_battles": format_count(comparison.get("n_battles")),
        "has_battles": any("n_battles" in r for r in ratings),
    }
    return render_page("compare.html.j2", context, out_path)


def _reorder(matrix: Any, order: list[int]) -> list[list[Any]]:
    """Rows and columns in `order`; NaN (pairs that never met) becomes None. Takes numpy too."""
    rows = matrix.tolist() if hasattr(matrix, "tolist") else matrix
    return [
        [None if v is None or v != v else v for v in (rows[i][j] for j in order)] for i in order
    ]


def _battles(n: int | None) -> str:
    return "" if n is None else f"{n:,} battles"
