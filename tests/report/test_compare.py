"""The comparison page of `chatjudge compare`, in a real headless Chromium."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from chatjudge.report import write_compare_report
from tests.support.browser import PageWatch

NAN = math.nan
MODELS = [
    "llama-3.1-8b",
    "gpt-4o-mini",
    "<b>qwen</b><img src=x onerror=\"document.title='pwned'\">",
    "mistral-7b",
]


def comparison() -> dict[str, Any]:
    """Four models; the last two never met (NaN and None, as stats and JSON give them)."""
    return {
        "models": MODELS,
        "ratings": [
            {"model": MODELS[0], "rating": 1012.4, "ci95": [985.2, 1040.9], "n_battles": 210},
            {"model": MODELS[1], "rating": 1088.7, "ci95": [1060.1, 1119.3], "n_battles": 220},
            {"model": MODELS[2], "rating": 1031.0, "ci95": [1001.5, 1062.2], "n_battles": 140},
            {"model": MODELS[3], "rating": 867.9, "ci95": [826.0, 905.4], "n_battles": 130},
        ],
        "win_rates": [
            [None, 0.38, 0.47, 0.71],
            [0.62, None, 0.58, 0.83],
            [0.53, 0.42, None, NAN],
            [0.29, 0.17, None, None],
        ],
        "battles": [[0, 80, 70, 60], [80, 0, 70, 70], [70, 70, 0, 0], [60, 70, 0, 0]],
        "n_battles": 350,
        "protocol": "pairwise-chat-quality",
        "judge": "local",
    }


def test_compare_page(tmp_path: Path, watch: PageWatch, output_dir: Path) -> None:
    data = comparison()
    path = write_compare_report(tmp_path / "compare.html", data)
    page = watch.open(path)
    title = page.title()

    rows = page.locator("#rating-table tbody tr")
    ranked = sorted(data["ratings"], key=lambda r: r["rating"], reverse=True)
    assert rows.evaluate_all("rs => rs.map(r => r.dataset.model)") == [r["model"] for r in ranked]
    for row, r in zip(rows.all(), ranked, strict=True):
        assert float(row.get_attribute("data-rating")) == r["rating"]
        assert [float(row.get_attribute("data-lo")), float(row.get_attribute("data-hi"))] == r[
            "ci95"
        ]
        expect(row).to_contain_text(f"{r['rating']:.0f}")
    assert page.locator("#n-battles").get_attribute("data-value") == "350"

    # The rating chart draws each model's point and interval.
    points = {
        key: (float(v), float(lo), float(hi))
        for key, v, lo, hi in page.locator('[data-chart="ratings"] .interval-row').evaluate_all(
            "rs => rs.map(r => [r.dataset.key, r.dataset.value, r.dataset.lo, r.dataset.hi])"
        )
    }
    assert points == {r["model"]: (r["rating"], *r["ci95"]) for r in data["ratings"]}

    # Heatmap cells carry the matrix; pairs that never met show a dash.
    cells = {
        (row, col): (value, text)
        for row, col, value, text in page.locator(".cell").evaluate_all(
            "cs => cs.map(c => [c.dataset.row, c.dataset.col, c.dataset.value, c.textContent])"
        )
    }
    assert len(cells) == len(MODELS) ** 2
    for i, a in enumerate(MODELS):
        for j, b in enumerate(MODELS):
            shown, text = cells[(a, b)]
            value = data["win_rates"][i][j]
            if value is None or value != value:
                assert shown == "" and text.startswith("—")
            else:
                assert float(shown) == value
                assert text.startswith(f"{value * 100:.0f}%")
    # Strongest model first, in the heatmap as in the ranking.
    first = page.locator(".cell").first
    assert first.get_attribute("data-row") == ranked[0]["model"]

    # A model name with markup is text everywhere.
    expect(page.locator("#rating-table")).to_contain_text(MODELS[2])
    assert page.locator("#rating-table b, #rating-table img, svg img").count() == 0
    assert page.title() == title
    assert watch.requests == [path.resolve().as_uri()]
    assert watch.errors == []
    page.screenshot(path=output_dir / "compare-full.png", full_page=True)
